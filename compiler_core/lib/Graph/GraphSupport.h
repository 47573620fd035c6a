//===- GraphSupport.h - What the graph builder reads off an op --*- C++ -*-===//
#ifndef CUVIL_LIB_GRAPH_GRAPHSUPPORT_H
#define CUVIL_LIB_GRAPH_GRAPHSUPPORT_H

#include "cuvil/Graph/IRGraph.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace cuvil::graph {

/// The name the parsed IR text has as a file. The parser gives ops written
/// without a location one in that file, which is no source location.
constexpr const char *kInputName = "<cuvil-graph input>";

/// The first file:line:col of `loc` (looking through NameLoc, FusedLoc and
/// CallSiteLoc, callee first) and the name of its first NameLoc, after the
/// names of the NameLocs it is nested around (its scopes): an FX node in its
/// nn.Module path, loc("convolution"("stem.0"("m.py":8:0))), is
/// "stem.0/convolution".
void describeLocation(mlir::Location loc, SourceLoc &file, std::string &name);

/// The line of the IR text that `loc` points at, when the parser made it
/// (diagnostics, ops written without a location); 0 otherwise.
int inputLine(mlir::Location loc);

/// "tensor<4x8xf32>", "f32, !llvm.ptr"; long lists are cut to 48 characters.
std::string typeSummary(mlir::TypeRange types);

/// Hash of what identifies `op` across snapshots on its own: its name,
/// attributes and properties, operand and result types, location,
/// successor count and the names of the ops in its regions.
std::string opFingerprint(mlir::Operation *op);

/// The same for a block of a function body: its argument types and, when
/// it stands for its ops (`withOps`), their names.
std::string blockFingerprint(mlir::Block &block, bool withOps);

/// Every GPU kernel launch (gpu.launch, gpu.launch_func) under the ops of
/// `top`, in IR order, with its launch configuration; `lineOf` gives an
/// op's line in the IR text (KernelLaunches.cpp).
void collectKernelLaunches(mlir::Block &top,
                           llvm::function_ref<int(mlir::Operation *)> lineOf,
                           std::vector<KernelLaunch> &launches);

/// A hex digest of `text`.
std::string hashText(const std::string &text);

} // namespace cuvil::graph

#endif // CUVIL_LIB_GRAPH_GRAPHSUPPORT_H
