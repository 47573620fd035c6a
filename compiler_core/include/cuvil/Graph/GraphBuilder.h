//===- GraphBuilder.h - IR graphs from MLIR's parser ------------*- C++ -*-===//
//
// Builds the plain-data graph of cuvil/Graph/IRGraph.h from IR text with
// MLIR's own parser: use-def edges come from the IR, op kinds from op
// interfaces and traits, each op's IR line from the parser's AsmParserState,
// source locations from its Location (file:line:col through NameLoc,
// FusedLoc and CallSiteLoc, plus the NameLoc's name). Every function-like op
// with a body is graphable: func.func, llvm.func, gpu.func inside a
// gpu.module, emitc.func, ...
//
// Links MLIR; the Workbench does not use it directly but runs cuvil-graph.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_GRAPH_GRAPHBUILDER_H
#define CUVIL_GRAPH_GRAPHBUILDER_H

#include "cuvil/Graph/IRGraph.h"

#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class Operation;
} // namespace mlir

namespace cuvil::graph {

/// Parses and verifies `irText` in `context` (which must have the dialects
/// of the IR loaded or registered; ops of other dialects are allowed in it
/// from then on, as unregistered ops) and builds the graph of one function.
/// On failure (the IR does not parse or verify, no such function) returns
/// false and sets `error` to "line N: what went wrong".
bool buildGraph(mlir::MLIRContext &context, const std::string &irText,
                const GraphOptions &options, IRGraph &graph,
                std::string &error);

/// Names of the functions with a body in `irText`, in IR order; nested
/// ones as "k::f". False, with `error` set, when the IR does not parse.
bool listFunctions(mlir::MLIRContext &context, const std::string &irText,
                   std::vector<std::string> &names, std::string &error);

/// The kind of `op`, from its interfaces and traits (and, for the cuvil
/// dialect, whose ops declare none that fit, from a table of its ops).
OpKind classifyOp(mlir::Operation *op);

} // namespace cuvil::graph

#endif // CUVIL_GRAPH_GRAPHBUILDER_H
