//===- GraphBuilder.cpp - The graph of one function, from parsed IR -------===//
//
// IR text is parsed by MLIR's parser with an AsmParserState, which keeps
// where in the text each op, block and SSA name was defined: IR lines and
// value names come from there, everything else from the IR itself. Nodes
// are created in a first walk (so uses that precede their definition in the
// text, across blocks, find their node), edges in a second one.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Graph/GraphBuilder.h"

#include "GraphSupport.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <set>

using namespace mlir;

namespace cuvil::graph {
namespace {

/// IR text parsed into a block of top-level ops, with the parser's record of
/// where each entity was written.
struct ParsedIR {
  llvm::SourceMgr sourceMgr;
  AsmParserState state;
  Block top;

  int lineOf(llvm::SMLoc loc) const {
    if (!loc.isValid())
      return 0;
    return static_cast<int>(sourceMgr.getLineAndColumn(loc).first);
  }
  int lineOf(Operation *op) const {
    const AsmParserState::OperationDefinition *def = state.getOpDef(op);
    return def ? lineOf(def->loc.Start) : 0;
  }
};

/// "line N: message" for the first error diagnostic reported in `context`
/// while this object lives.
class FirstError {
public:
  explicit FirstError(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error &&
              message.empty()) {
            message = diag.str();
            line = inputLine(diag.getLocation());
          }
          return success();
        }) {}

  std::string message;
  int line = 0;

private:
  ScopedDiagnosticHandler handler;
};

bool parseIR(MLIRContext &context, const std::string &text, ParsedIR &ir,
             std::string &error) {
  context.allowUnregisteredDialects();
  ir.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, kInputName), llvm::SMLoc());
  FirstError diagnostics(context);
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  if (failed(parseAsmSourceFile(ir.sourceMgr, &ir.top, config, &ir.state))) {
    error = "line " + std::to_string(std::max(diagnostics.line, 1)) + ": " +
            (diagnostics.message.empty() ? "the IR does not parse"
                                         : diagnostics.message);
    return false;
  }
  return true;
}

/// Verifies the parsed IR; on failure names the innermost op that fails on
/// its own, by its line in the text.
bool verifyIR(MLIRContext &context, ParsedIR &ir, std::string &error) {
  FirstError diagnostics(context);
  bool ok = llvm::all_of(ir.top,
                         [](Operation &op) { return succeeded(verify(&op)); });
  if (ok)
    return true;
  std::string message = diagnostics.message;
  Operation *culprit = nullptr;
  for (Operation &top : ir.top) {
    top.walk([&](Operation *op) {
      if (failed(verify(op, /*verifyRecursively=*/false))) {
        culprit = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (culprit)
      break;
  }
  int line = culprit ? ir.lineOf(culprit) : 0;
  error = "line " + std::to_string(std::max(line, 1)) +
          ": the IR does not verify: " + message +
          "; fix the IR so that cuvil-opt accepts it";
  return false;
}

struct Function {
  FunctionOpInterface op;
  std::string name; ///< "f", or "k::f" inside symbol table @k
  std::string plainName;
};

/// Functions with a body, in IR order, including nested ones (gpu.func in a
/// gpu.module). A top-level module does not prefix the names.
std::vector<Function> findFunctions(Block &top) {
  std::vector<Function> functions;
  for (Operation &root : top) {
    root.walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto fn = dyn_cast<FunctionOpInterface>(op);
      if (!fn)
        return WalkResult::advance();
      if (!fn.isExternal()) {
        Function f{fn, "", SymbolTable::getSymbolName(op).str()};
        f.name = f.plainName;
        for (Operation *p = op->getParentOp(); p && p->getBlock() != &top;
             p = p->getParentOp())
          if (auto name = p->getAttrOfType<StringAttr>(
                  SymbolTable::getSymbolAttrName()))
            f.name = name.str() + "::" + f.name;
        functions.push_back(std::move(f));
      }
      return WalkResult::skip(); // functions hold no functions to graph
    });
  }
  return functions;
}

/// Builds the graph of one function.
class FunctionGrapher {
public:
  FunctionGrapher(const ParsedIR &ir, const GraphOptions &options,
                  IRGraph &graph)
      : ir(ir), options(options), graph(graph) {}

  void build(const Function &function);

private:
  int addNode(std::string opName, OpKind kind, int irLine, int cluster) {
    Node node;
    node.id = static_cast<int>(graph.nodes.size());
    node.opName = std::move(opName);
    node.kind = kind;
    node.irLine = irLine;
    node.cluster = cluster;
    graph.nodes.push_back(std::move(node));
    localFingerprints.emplace_back();
    return graph.nodes.back().id;
  }

  std::string text(llvm::SMRange range) const {
    if (!range.isValid())
      return "";
    return std::string(range.Start.getPointer(),
                       range.End.getPointer() - range.Start.getPointer());
  }

  std::string valueName(Value value) const;
  std::string resultNames(Operation *op) const;
  std::string blockLabel(Block &block) const;

  /// Whether `op` has regions written in the text: a named linalg op's
  /// body is implicit, made by the parser, and not drawn.
  bool hasWrittenBody(Operation *op) const {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &inner : block)
          if (ir.state.getOpDef(&inner))
            return true;
    return false;
  }

  void addArguments(Block &entry, int target);
  int addBlockNode(Block &block, bool entry);
  void visitOp(Operation *op, int cluster, int target);
  void visitBody(Operation *op, int node, int cluster, int target);
  void addEdge(int from, int to, std::string value);
  void addEdges();
  void finishFingerprints();

  const ParsedIR &ir;
  const GraphOptions &options;
  IRGraph &graph;
  bool cfgCollapsed = false; ///< blocks of the body stand for their ops
  llvm::DenseMap<Value, int> valueNode; ///< -1: defined by a hidden op
  llvm::DenseMap<Block *, int> blockNode;
  std::vector<std::pair<Operation *, int>> users; ///< op and its node
  std::vector<std::string> localFingerprints;     ///< by node
  std::set<std::pair<int, int>> edgeSet;
};

std::string FunctionGrapher::valueName(Value value) const {
  if (auto result = dyn_cast<OpResult>(value)) {
    Operation *op = result.getOwner();
    const AsmParserState::OperationDefinition *def = ir.state.getOpDef(op);
    if (def) {
      unsigned number = result.getResultNumber();
      for (size_t g = def->resultGroups.size(); g-- > 0;) {
        const auto &group = def->resultGroups[g];
        if (group.startIndex > number)
          continue;
        unsigned end = g + 1 < def->resultGroups.size()
                           ? def->resultGroups[g + 1].startIndex
                           : op->getNumResults();
        std::string name = text(group.definition.loc);
        if (end - group.startIndex > 1)
          name += "#" + std::to_string(number - group.startIndex);
        return name;
      }
    }
  } else if (auto argument = dyn_cast<BlockArgument>(value)) {
    const AsmParserState::BlockDefinition *def =
        ir.state.getBlockDef(argument.getOwner());
    unsigned number = argument.getArgNumber();
    if (def && number < def->arguments.size())
      return text(def->arguments[number].loc);
  }
  return "%?";
}

std::string FunctionGrapher::resultNames(Operation *op) const {
  const AsmParserState::OperationDefinition *def = ir.state.getOpDef(op);
  if (!def)
    return "";
  std::string names;
  for (size_t g = 0; g < def->resultGroups.size(); ++g) {
    const auto &group = def->resultGroups[g];
    unsigned end = g + 1 < def->resultGroups.size()
                       ? def->resultGroups[g + 1].startIndex
                       : op->getNumResults();
    names += (names.empty() ? "" : ", ") + text(group.definition.loc);
    if (end - group.startIndex > 1)
      names += ":" + std::to_string(end - group.startIndex);
  }
  return names;
}

std::string FunctionGrapher::blockLabel(Block &block) const {
  const AsmParserState::BlockDefinition *def = ir.state.getBlockDef(&block);
  std::string label = def ? text(def->definition.loc) : "";
  return label.empty() ? "^bb?" : label;
}

void FunctionGrapher::addArguments(Block &entry, int target) {
  for (BlockArgument argument : entry.getArguments()) {
    if (target >= 0) { // collapsed: the entry block stands for them
      valueNode[argument] = target;
      continue;
    }
    std::string name = valueName(argument);
    int node = addNode(name, OpKind::Argument, graph.functionLine, -1);
    Node &n = graph.nodes[node];
    n.results = name;
    n.type = typeSummary(TypeRange(argument.getType()));
    describeLocation(argument.getLoc(), n.loc, n.locName);
    valueNode[argument] = node;
  }
}

int FunctionGrapher::addBlockNode(Block &block, bool entry) {
  int line = entry ? graph.functionLine : 0;
  if (!entry) {
    const AsmParserState::BlockDefinition *def = ir.state.getBlockDef(&block);
    line = def ? ir.lineOf(def->definition.loc.Start) : 0;
  }
  int node =
      addNode(entry ? "^entry" : blockLabel(block), OpKind::Block, line, -1);
  blockNode[&block] = node;
  localFingerprints[node] = blockFingerprint(block, cfgCollapsed);
  if (!entry)
    for (BlockArgument argument : block.getArguments())
      valueNode[argument] = node;
  return node;
}

void FunctionGrapher::visitOp(Operation *op, int cluster, int target) {
  // Terminators the printer elides (an scf.for's empty scf.yield) are not
  // in the text, so they are not drawn either.
  if (!ir.state.getOpDef(op))
    return;
  if (target >= 0) { // inside a collapsed region or block
    ++graph.nodes[target].collapsedOps;
    for (Value result : op->getResults())
      valueNode[result] = target;
    users.push_back({op, target});
    if (hasWrittenBody(op))
      visitBody(op, target, cluster, target);
    return;
  }
  OpKind kind = classifyOp(op);
  if (options.hideConstants && kind == OpKind::Constant) {
    for (Value result : op->getResults())
      valueNode[result] = -1;
    return;
  }
  int node =
      addNode(op->getName().getStringRef().str(), kind, ir.lineOf(op), cluster);
  Node &n = graph.nodes[node];
  n.results = resultNames(op);
  n.type =
      typeSummary(op->getNumResults() > 0 ? TypeRange(op->getResultTypes())
                                          : TypeRange(op->getOperandTypes()));
  describeLocation(op->getLoc(), n.loc, n.locName);
  localFingerprints[node] = opFingerprint(op);
  for (Value result : op->getResults())
    valueNode[result] = node;
  users.push_back({op, node});
  if (!hasWrittenBody(op))
    return;
  if (options.collapseRegions) {
    visitBody(op, node, cluster, node);
    return;
  }
  Cluster c;
  c.id = static_cast<int>(graph.clusters.size());
  c.parent = cluster;
  c.owner = node;
  c.label = graph.nodes[node].opName;
  graph.clusters.push_back(c);
  graph.nodes[node].cluster = c.id;
  graph.nodes[node].ownsCluster = c.id;
  visitBody(op, node, c.id, -1);
}

void FunctionGrapher::visitBody(Operation *op, int node, int cluster,
                                int target) {
  // Region arguments (a generic's %in, a loop's induction variable) are
  // drawn as the op that owns the region.
  for (Region &region : op->getRegions())
    for (Block &block : region) {
      for (BlockArgument argument : block.getArguments())
        valueNode[argument] = node;
      for (Operation &inner : block)
        visitOp(&inner, cluster, target);
    }
}

void FunctionGrapher::addEdge(int from, int to, std::string value) {
  if (from < 0 || to < 0 || from == to || !edgeSet.insert({from, to}).second)
    return;
  graph.edges.push_back({from, to, std::move(value)});
}

void FunctionGrapher::addEdges() {
  std::vector<Edge> branches;
  for (auto &[op, node] : users) {
    for (Value operand : op->getOperands()) {
      auto def = valueNode.find(operand);
      if (def == valueNode.end() || def->second < 0)
        continue;
      // Between the blocks of a collapsed body only branches are drawn:
      // values defined early and used everywhere would add an edge from
      // the entry block to every block, long edges that make the layout
      // slow and the picture unreadable.
      if (cfgCollapsed && graph.nodes[def->second].kind == OpKind::Block &&
          graph.nodes[node].kind == OpKind::Block)
        continue;
      addEdge(def->second, node, valueName(operand));
    }
    for (Block *successor : op->getSuccessors()) {
      auto to = blockNode.find(successor);
      if (to != blockNode.end())
        branches.push_back({node, to->second, blockLabel(*successor)});
    }
  }
  for (Edge &edge : branches)
    addEdge(edge.from, edge.to, std::move(edge.value));
}

/// Completes each node's fingerprint with the ops producing its operands
/// (by name: an op whose producer changed only in its attributes keeps its
/// identity) and, for collapsed nodes, how many ops they stand for.
void FunctionGrapher::finishFingerprints() {
  std::vector<std::vector<std::string>> producers(graph.nodes.size());
  for (const Edge &edge : graph.edges)
    producers[edge.to].push_back(graph.nodes[edge.from].opName);
  for (Node &node : graph.nodes) {
    std::vector<std::string> &from = producers[node.id];
    std::sort(from.begin(), from.end());
    std::string material = localFingerprints[node.id];
    for (const std::string &name : from)
      material += " " + name;
    material += " (" + std::to_string(node.collapsedOps) + ")";
    node.fingerprint = node.kind == OpKind::Argument ? "" : hashText(material);
  }
}

void FunctionGrapher::build(const Function &function) {
  FunctionOpInterface fn = function.op;
  graph.function = function.name;
  graph.functionLine = ir.lineOf(fn.getOperation());
  Region &body = fn.getFunctionBody();
  cfgCollapsed = options.collapseRegions && !body.hasOneBlock();
  int entryTarget = cfgCollapsed ? addBlockNode(body.front(), true) : -1;
  addArguments(body.front(), entryTarget);
  for (Block &block : body) {
    int target = entryTarget;
    if (&block != &body.front()) {
      int node = addBlockNode(block, false);
      target = cfgCollapsed ? node : -1;
    }
    for (Operation &op : block)
      visitOp(&op, -1, target);
  }
  addEdges();
  finishFingerprints();
}

std::string functionList(const std::vector<Function> &functions) {
  std::string list;
  for (const Function &f : functions)
    list += (list.empty() ? "" : ", ") + f.name;
  return list;
}

} // namespace

bool buildGraph(MLIRContext &context, const std::string &irText,
                const GraphOptions &options, IRGraph &graph,
                std::string &error) {
  graph = IRGraph();
  ParsedIR ir;
  if (!parseIR(context, irText, ir, error) || !verifyIR(context, ir, error))
    return false;
  std::vector<Function> functions = findFunctions(ir.top);
  for (const Function &function : functions) {
    if (!options.function.empty() && options.function != function.name &&
        options.function != function.plainName)
      continue;
    FunctionGrapher(ir, options, graph).build(function);
    collectKernelLaunches(
        ir.top, [&](Operation *op) { return ir.lineOf(op); }, graph.launches);
    return true;
  }
  if (functions.empty())
    error = "line 1: no function with a body (func.func, llvm.func, gpu.func, "
            "emitc.func or another FunctionOpInterface op) in the IR; pass "
            "the IR of a module that defines one";
  else
    error = "line 1: no function @" + options.function +
            " with a body in the IR; choose one of the functions it defines: " +
            functionList(functions);
  return false;
}

bool listFunctions(MLIRContext &context, const std::string &irText,
                   std::vector<std::string> &names, std::string &error) {
  names.clear();
  ParsedIR ir;
  if (!parseIR(context, irText, ir, error))
    return false;
  for (const Function &function : findFunctions(ir.top))
    names.push_back(function.name);
  return true;
}

} // namespace cuvil::graph
