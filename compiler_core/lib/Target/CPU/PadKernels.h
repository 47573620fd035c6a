//===- PadKernels.h - Paddings and fills as vector kernels ------*- C++ -*-===//
//
// How cuvil-cpu-schedule makes tensor.pad and linalg.fill vectorizable (see
// PadKernels.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_PADKERNELS_H
#define CUVIL_TARGET_CPU_PADKERNELS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::cuvil::cpu {

/// Rewrites each static tensor.pad with a constant padding value as an
/// elementwise kernel writing the value everywhere and the source inserted
/// into its interior; whether it rewrote any.
bool padsAsFilledCopies(ModuleOp module);

/// The constant value `pad` pads with, usable outside its region (a
/// constant the region defines itself is made again before the insertion
/// point of `b`); null when `pad` pads with no constant.
Value paddingValueOutside(OpBuilder &b, tensor::PadOp pad);

/// Inner tile for vectorizing an innermost dimension of `size`: whole
/// registers of `lanes` when they divide it, the whole dimension when it is
/// short, else 0.
int64_t innerVectorTile(int64_t size, int64_t lanes);

/// Whether vectors of `elementType` are bit-packed in memory while tensors
/// of it are stored a byte (or more) per element, as for i1: kernels on
/// such elements stay scalar.
bool isBitPackedInVectors(Type elementType);

/// Vectorizes each static linalg.fill the schedule left (see PadKernels.cpp):
/// one vector store per row of `lanes`-wide registers.
void vectorizeFills(ModuleOp module, int64_t lanes);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_PADKERNELS_H
