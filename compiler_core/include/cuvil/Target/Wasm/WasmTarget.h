//===- WasmTarget.h - The WebAssembly target backend ------------*- C++ -*-===//
#ifndef CUVIL_TARGET_WASM_WASMTARGET_H
#define CUVIL_TARGET_WASM_WASMTARGET_H

#include "cuvil/Target/TargetBackend.h"

namespace mlir::cuvil::wasm {

/// The `wasm` target: a wasm32 module (128-bit SIMD, no threads, no
/// imports: intermediates in a static arena, math as polynomials or linked
/// from wasi-libc) with an ES module loading it in Node or a browser; run
/// in process through Node.
std::unique_ptr<TargetBackend> createWasmTarget();

} // namespace mlir::cuvil::wasm

#endif // CUVIL_TARGET_WASM_WASMTARGET_H
