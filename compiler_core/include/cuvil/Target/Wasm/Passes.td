//===- Passes.td - WebAssembly code generation passes ------*- tablegen -*-===//
#ifndef CUVIL_TARGET_WASM_PASSES_TD
#define CUVIL_TARGET_WASM_PASSES_TD

include "mlir/Pass/PassBase.td"

def WasmToLLVM : Pass<"cuvil-wasm-to-llvm", "ModuleOp"> {
  let summary = "Lower loop-level IR to the LLVM dialect for wasm32";
  let description = [{
    One conversion of `func`, `cf`, `arith`, `index`, `math`, `memref`,
    `vector` and `ub` to the LLVM dialect with a 32-bit `index` (wasm32's
    pointer width: upstream's `convert-vector-to-llvm` has no index-bitwidth
    option and would mix i64 memref descriptors into i32 ones) and the
    bare-pointer calling convention (a function's memref arguments are plain
    pointers: the wasm export takes one i32 address per buffer, static
    shapes only). Vector ops are first lowered to what LLVM's vector types
    express (contractions, transposes, broadcasts, shape casts, masks), as
    `convert-vector-to-llvm` does. An op left unconverted is an error naming
    it and its source location.

    Before:
    ```mlir
    func.func @f(%x: memref<16xf32>, %out: memref<16xf32>) {
      %v = vector.load %x[%i] : memref<16xf32>, vector<4xf32>
    ```
    After:
    ```mlir
    llvm.func @f(%x: !llvm.ptr, %out: !llvm.ptr) {
      %p = llvm.getelementptr %x[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %v = llvm.load %p {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
    ```
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "arith::ArithDialect",
                           "memref::MemRefDialect", "vector::VectorDialect"];
}

#endif // CUVIL_TARGET_WASM_PASSES_TD
