//===- cuvil-graph.cpp - The dataflow graph of IR, as DOT or JSON ---------===//
//
// Parses IR (a file or stdin) with MLIR's parser, builds the graph of one
// function and prints it as Graphviz DOT, or with --json as the plain data
// the Workbench reads (it runs this tool as a child process, so that the GUI
// does not link MLIR). With --before, nodes that differ from the earlier IR
// are marked changed. --from-json reads such JSON back and prints its DOT.
// --launches prints the module's GPU kernel launches instead: grid, block,
// shared memory and the fused ops each runs.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Graph/GraphBuilder.h"
#include "cuvil/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
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
static cl::opt<std::string>
    function("function", cl::desc("Function to graph (\"f\" or \"k::f\")"),
             cl::value_desc("name"));
static cl::opt<bool>
    collapse("collapse", cl::desc("Draw each op with regions as one node"));
static cl::opt<bool> hideConstants("hide-constants",
                                   cl::desc("Leave out constants"));
static cl::opt<bool> listFunctionsFlag("list-functions",
                                       cl::desc("Print the function names"));
static cl::opt<bool> json("json",
                          cl::desc("Print the graph as JSON instead of DOT"));
static cl::opt<bool> launches(
    "launches",
    cl::desc("Print the module's GPU kernel launches (grid, block, shared "
             "memory, fused ops) instead of the graph"));
static cl::opt<bool>
    fromJson("from-json",
             cl::desc("Read a graph printed with --json and print its DOT"));

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

/// Marks what changed since `beforeFile`. IR the graph cannot be built from
/// only costs the marks, with a warning: the graph itself is still drawn.
static void markChangedSince(mlir::MLIRContext &context,
                             const cuvil::graph::GraphOptions &options,
                             cuvil::graph::IRGraph &graph) {
  std::string beforeText, error;
  cuvil::graph::IRGraph before;
  if (!readText(beforeFile, beforeText))
    return;
  if (!cuvil::graph::buildGraph(context, beforeText, options, before, error)) {
    errs() << "cuvil-graph: warning: no changes marked, the IR before the "
              "pass has no graph: "
           << beforeFile << ":" << error << "\n";
    return;
  }
  cuvil::graph::markChanged(before, graph);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Cuvil IR graph printer\n");

  std::string text, error;
  if (!readText(inputFile, text))
    return 1;
  cuvil::graph::IRGraph graph;
  if (fromJson) {
    if (!cuvil::graph::fromJson(text, graph, error)) {
      errs() << inputFile << ": " << error << "\n";
      return 1;
    }
    outs() << (launches ? cuvil::graph::launchesText(graph)
                        : cuvil::graph::toDot(graph));
    return 0;
  }

  mlir::DialectRegistry registry;
  mlir::cuvil::registerCuvilDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  if (listFunctionsFlag) {
    std::vector<std::string> names;
    if (!cuvil::graph::listFunctions(context, text, names, error)) {
      errs() << inputFile << ":" << error << "\n";
      return 1;
    }
    for (const std::string &name : names)
      outs() << name << "\n";
    return 0;
  }
  cuvil::graph::GraphOptions options;
  options.function = function;
  options.collapseRegions = collapse;
  options.hideConstants = hideConstants;
  if (!cuvil::graph::buildGraph(context, text, options, graph, error)) {
    errs() << inputFile << ":" << error << "\n";
    return 1;
  }
  if (!beforeFile.empty())
    markChangedSince(context, options, graph);
  outs() << (launches ? cuvil::graph::launchesText(graph)
             : json   ? cuvil::graph::toJson(graph)
                      : cuvil::graph::toDot(graph));
  return 0;
}
