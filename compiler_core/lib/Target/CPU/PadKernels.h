//===- PadKernels.h - Paddings as a fill and a copy --------------*- C++
//-*-===//
//
// How cuvil-cpu-schedule makes a tensor.pad vectorizable (see
// PadKernels.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_PADKERNELS_H
#define CUVIL_TARGET_CPU_PADKERNELS_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::cuvil::cpu {

/// Rewrites each static tensor.pad with a constant padding value as an
/// elementwise kernel writing the value everywhere and the source inserted
/// into its interior; whether it rewrote any.
bool padsAsFilledCopies(ModuleOp module);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_PADKERNELS_H
