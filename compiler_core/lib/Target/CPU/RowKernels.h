//===- RowKernels.h - Row-wise kernels of the CPU schedule -------*- C++
//-*-===//
//
// The parts of cuvil-cpu-schedule that shape row-wise kernels (softmax, layer
// norm, reductions and the elementwise ops between them): reshapes folded
// out of their way, chains of them fused into one row-tiled kernel, and the
// clean-ups after vectorization.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_ROWKERNELS_H
#define CUVIL_TARGET_CPU_ROWKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::cuvil::cpu {

/// Transform-dialect text fusing each chain of row-wise kernels (ops tagged
/// with a vector id whose rows line up, see RowKernels.cpp) into one loop
/// over blocks of rows, across threads when the chain is large. The tagged
/// ops keep their ids: their vector schedules, which must follow this text,
/// then tile and vectorize the fused copies inside each block (`innerTiles`:
/// each tagged op's innermost vector tile, 0 for its whole extent; `lanes`:
/// the vector width in elements). Unit
/// expansions between the ops of a chain are folded into the maps of the
/// ops reading them.
std::string
rowGroupSchedule(ModuleOp module, int64_t lanes,
                 const llvm::DenseMap<int64_t, int64_t> &innerTiles);

/// Transform-dialect text running each large static linalg.transpose (from
/// 2^15 elements; attention's k transposed) as equal tasks across threads,
/// along its first dimension that splits into 8, 4 or 2; tags each with a
/// fresh vector id from `nextId`. Transposes stay scalar loops inside.
std::string threadedTransposes(ModuleOp module, int64_t &nextId);

/// Moves what the schedule's loops compute from values they do not change
/// out of them, reads of such tensors included.
void hoistInvariantTensorReads(ModuleOp module);

/// Float sums and products of a vector as a tree instead of in order.
void reduceAsTrees(ModuleOp module);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_ROWKERNELS_H
