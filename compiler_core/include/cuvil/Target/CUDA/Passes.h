//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//
#ifndef CUVIL_TARGET_CUDA_PASSES_H
#define CUVIL_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "cuvil/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Target/CUDA/Passes.h.inc"

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_CUDA_PASSES_H
