//===- Passes.td - C code generation passes ----------------*- tablegen -*-===//
#ifndef CUVIL_TARGET_C_PASSES_TD
#define CUVIL_TARGET_C_PASSES_TD

include "mlir/Pass/PassBase.td"

def CToEmitC : Pass<"cuvil-c-to-emitc", "ModuleOp"> {
  let summary = "Convert loop-level IR with static buffers to the EmitC dialect";
  let description = [{
    One conversion from `func`, `scf`, `arith`, `memref` and `math` to
    EmitC: MLIR's arith, SCF, memref and func patterns, plus what MLIR 19
    leaves out, namely memref function arguments (converted to arrays with
    the signature) and `math` ops (calls to `<math.h>`: `expf`, `tanhf`,
    `fmaf`, ... for f32, the unsuffixed names for f64); the functions become
    `static` (the C file's entry points call them). Run `arith-expand`
    first (`arith.maximumf` and friends become compares and selects). An op
    left unconverted is an error naming it and its source location.

    Before:
    ```mlir
    func.func @f(%x: memref<4xf32>, %out: memref<4xf32>) {
      %v = memref.load %x[%i] : memref<4xf32>
      %e = math.exp %v : f32
    ```
    After:
    ```mlir
    emitc.func @f(%x: !emitc.array<4xf32>, %out: !emitc.array<4xf32>) {
      %v = emitc.subscript %x[%i] : (!emitc.array<4xf32>, index) -> f32
      %e = emitc.call_opaque "expf"(%v) : (f32) -> f32
    ```
  }];
  let dependentDialects = ["emitc::EmitCDialect"];
}

#endif // CUVIL_TARGET_C_PASSES_TD
