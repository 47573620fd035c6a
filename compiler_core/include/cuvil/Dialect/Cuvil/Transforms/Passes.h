//===- Passes.h - Graph-level passes of the cuvil dialect --------*- C++
//-*-===//
#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H
