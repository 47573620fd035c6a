//===- Passes.h - WebAssembly code generation passes ------------*- C++ -*-===//
#ifndef CUVIL_TARGET_WASM_PASSES_H
#define CUVIL_TARGET_WASM_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "cuvil/Target/Wasm/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Target/Wasm/Passes.h.inc"

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_WASM_PASSES_H
