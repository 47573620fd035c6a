//===- cuvil-graph.cpp - Print the dataflow graph of IR as Graphviz DOT ---===//
//
// Reads printed IR (a file or stdin), builds the graph of one function and
// prints it as DOT; with --before, nodes that differ from the earlier IR are
// marked changed. Used by the lit tests of the graph library.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Graph/IRGraph.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::init("-"));
static cl::opt<std::string>
    beforeFile("before", cl::desc("IR before the pass; marks changed nodes"),
               cl::value_desc("file"));
static cl::opt<std::string> function("function",
                                     cl::desc("Function to graph"),
                                     cl::value_desc("name"));
static cl::opt<bool> collapse("collapse",
                              cl::desc("Draw each op with regions as one node"));
static cl::opt<bool> hideConstants("hide-constants",
                                   cl::desc("Leave out constants"));
static cl::opt<bool> listFunctionsFlag("list-functions",
                                       cl::desc("Print the function names"));

static bool readText(const std::string &path, std::string &text) {
  auto buffer = MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer) {
    errs() << "cuvil-graph: cannot read '" << path
           << "': " << buffer.getError().message() << "\n";
    return false;
  }
  text = (*buffer)->getBuffer().str();
  return true;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Cuvil IR graph printer\n");

  std::string text;
  if (!readText(inputFile, text))
    return 1;
  if (listFunctionsFlag) {
    for (const std::string &name : cuvil::graph::listFunctions(text))
      outs() << name << "\n";
    return 0;
  }
  cuvil::graph::GraphOptions options;
  options.function = function;
  options.collapseRegions = collapse;
  options.hideConstants = hideConstants;
  cuvil::graph::IRGraph graph;
  std::string error;
  if (!cuvil::graph::buildGraph(text, options, graph, error)) {
    errs() << inputFile << ":" << error << "\n";
    return 1;
  }
  if (!beforeFile.empty()) {
    std::string beforeText;
    if (!readText(beforeFile, beforeText))
      return 1;
    cuvil::graph::IRGraph before;
    if (!cuvil::graph::buildGraph(beforeText, options, before, error)) {
      errs() << beforeFile << ":" << error << "\n";
      return 1;
    }
    cuvil::graph::markChanged(before, graph);
  }
  outs() << cuvil::graph::toDot(graph);
  return 0;
}
