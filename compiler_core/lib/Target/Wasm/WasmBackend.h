//===- WasmBackend.h - wasm32 code, linking, text and JS ---------*- C++
//-*-===//
//
// The wasm target's pieces below its TargetBackend: LLVM's wasm32 code
// generation and wasm-ld, the text form through wabt's wasm2wat, the ES
// module that loads a module in Node or a browser, and running a module in
// Node for calls from the process.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_TARGET_WASM_WASMBACKEND_H
#define CUVIL_LIB_TARGET_WASM_WASMBACKEND_H

#include "cuvil/Runtime/Executable.h"
#include "cuvil/Target/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>

namespace mlir::cuvil::wasm {

/// SIMD width of the generated code: simd128 holds 4 f32.
constexpr int kVectorLanes = 4;
/// Rows of a GEMM's register tile.
constexpr int kRegisterRows = 4;

/// The wasm export of the compiled function (`cuvil_<name>`: a function
/// called `exp` must not capture the C library's that math calls).
std::string exportOf(const LoadRequest &request);

/// The LLVM IR of the lowered module, optimized for wasm32.
LogicalResult printLLVMIR(ModuleOp lowered, std::string &out,
                          std::string &error);

/// The linked module (wasm binary) of the lowered module.
LogicalResult buildModule(ModuleOp lowered, const LoadRequest &request,
                          std::string &bytes, std::string &error);

/// `bytes` (a wasm binary) as WebAssembly text, through wasm2wat.
LogicalResult printText(llvm::StringRef bytes, std::string &out,
                        std::string &error);

/// The ES module that loads the module (`wasmFile`, next to it by default)
/// and exposes the compiled function with typed-array arguments.
std::string jsModule(const LoadRequest &request, llvm::StringRef wasmFile);

/// Code that runs module `bytes` in Node, one process per call (the
/// process has no wasm engine of its own). Null with `error` set.
std::unique_ptr<::cuvil::Executable> loadInNode(llvm::StringRef bytes,
                                                const LoadRequest &request,
                                                std::string &error);

} // namespace mlir::cuvil::wasm

#endif // CUVIL_LIB_TARGET_WASM_WASMBACKEND_H
