//===- Passes.td - Cuvil conversion passes -----------------*- tablegen -*-===//
#ifndef CUVIL_CONVERSION_PASSES_TD
#define CUVIL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// CuvilToLinalg
//===----------------------------------------------------------------------===//

def ConvertCuvilToLinalg : Pass<"convert-cuvil-to-linalg", "ModuleOp"> {
  let summary = "Lower cuvil ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Every cuvil op becomes structured ops on tensors: elementwise ops and
    broadcasts become `linalg.generic` with broadcasting indexing maps,
    matmul becomes `linalg.matmul`/`linalg.batch_matmul`, convolutions and
    pooling become the linalg named ops over a padded input, reductions
    become `linalg.reduce`-shaped generics, and composite ops (softmax,
    layer_norm, batch_norm, gelu) are decomposed. Locations are kept on
    every produced op.

    Before:
    ```mlir
    %2 = cuvil.add %0, %1 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4x3xf32>
    %2 = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1), (d0, d1) -> (d0, d1)], ...}
    ```
  }];
  let dependentDialects = [
    "arith::ArithDialect", "linalg::LinalgDialect", "math::MathDialect",
    "tensor::TensorDialect"
  ];
}

#endif // CUVIL_CONVERSION_PASSES_TD
