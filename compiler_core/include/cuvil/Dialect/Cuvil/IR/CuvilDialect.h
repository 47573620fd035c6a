//===- CuvilDialect.h - The cuvil dialect ------------------------*- C++
//-*-===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
#define CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOpsDialect.h.inc"

namespace mlir::cuvil {

/// The kernel names cuvil-tag-kernels recorded on `op` (its
/// `cuvil.kernel_names`, [[loc, name], ...]) by location; empty when it has
/// none. Entries of another shape (hand-written IR) are skipped.
llvm::DenseMap<Location, StringAttr> taggedKernelNames(Operation *op);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
