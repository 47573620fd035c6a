//===- Passes.h - Target-neutral code generation passes ---------*- C++ -*-===//
#ifndef CUVIL_CODEGEN_COMMON_PASSES_H
#define CUVIL_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "cuvil/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Codegen/Common/Passes.h.inc"

/// Replaces `copy` with a loop nest of loads and stores over its shape
/// (dynamic sizes read from the source), the innermost loop over the last
/// dimension.
void expandCopyToLoops(memref::CopyOp copy);

} // namespace mlir::cuvil

#endif // CUVIL_CODEGEN_COMMON_PASSES_H
