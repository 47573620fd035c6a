//===- Passes.h - Cuvil conversion passes ------------------------*- C++
//-*-===//
#ifndef CUVIL_CONVERSION_PASSES_H
#define CUVIL_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "cuvil/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Conversion/Passes.h.inc"

} // namespace mlir::cuvil

#endif // CUVIL_CONVERSION_PASSES_H
