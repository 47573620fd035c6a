//===- Passes.td - Graph-level passes of the cuvil dialect -*- tablegen -*-===//
//
// Each pass does one transformation on cuvil IR, with a verified input and
// output. Passes are grouped by purpose and alphabetical within a group.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph simplification
//===----------------------------------------------------------------------===//

def FoldBatchNorm : Pass<"cuvil-fold-batch-norm", "func::FuncOp"> {
  let summary = "Fold inference batch norm into the preceding conv2d or matmul";
  let description = [{
    `batch_norm(conv2d(x, W))` over output channels becomes
    `conv2d(x, W * s) + (bias - mean * s)` with `s = scale / sqrt(var + eps)`
    (per output channel); likewise for a matmul whose result has the
    channels in its last dimension and rank 2. The conv/matmul must have no
    other user. With constant weights and statistics, `cuvil-fold-constants`
    then computes the new weights at compile time.

    Before:
    ```mlir
    %y = cuvil.conv2d %x, %w {...} : (...) -> tensor<1x8x6x6xf32>
    %z = cuvil.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : (...) -> tensor<1x8x6x6xf32>
    ```
    After:
    ```mlir
    %w2 = cuvil.mul %w, %s4 : ...           // scaled weights
    %y = cuvil.conv2d %x, %w2 {...}
    %z = cuvil.add %y, %shift : (tensor<1x8x6x6xf32>, tensor<8x1x1xf32>) -> ...
    ```
  }];
}

def FoldConstants : Pass<"cuvil-fold-constants", "func::FuncOp"> {
  let summary = "Evaluate subgraphs whose inputs are all constants";
  let description = [{
    Ops whose operands are all `cuvil.constant` are computed at compile time
    (elementwise arithmetic and activations with broadcasting, transpose,
    broadcast_to, reshape, cast between float types) and replaced by a
    constant; repeated to a fixed point, so whole weight-preprocessing chains
    (a transposed, scaled weight) disappear. Tensors above
    `max-elements` are left to run time.

    Before:
    ```mlir
    %w = cuvil.constant dense<...> : tensor<4x8xf32>
    %t = cuvil.transpose %w {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    ```
    After:
    ```mlir
    %t = cuvil.constant dense<...> : tensor<8x4xf32>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 22",
           "Largest result (in elements) computed at compile time">
  ];
}

def StripTrainingOps : Pass<"cuvil-strip-training-ops", "func::FuncOp"> {
  let summary = "Remove training-only ops (inference-mode cleanup)";
  let description = [{
    In inference, `cuvil.dropout` is the identity: its uses are replaced by
    its input and it is erased.

    Before:
    ```mlir
    %1 = cuvil.dropout %0 {ratio = 1.0e-01 : f64} : tensor<4x8xf32>
    %2 = cuvil.relu %1 : tensor<4x8xf32>
    ```
    After:
    ```mlir
    %2 = cuvil.relu %0 : tensor<4x8xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Symbolic shapes
//===----------------------------------------------------------------------===//

def PropagateSymbols : Pass<"cuvil-propagate-symbols", "func::FuncOp"> {
  let summary = "Check and propagate the named dynamic dimensions of a function";
  let description = [{
    Arguments name their dynamic dimensions with `cuvil.symbols` (one name
    per `?`, in order; equal names mean equal sizes). Each op's dimensions
    are derived from its operands' as expressions of these names; where an
    op needs two dimensions equal (broadcasting, a matmul's K, a concat's
    other dimensions) different names are an error. Results get
    `cuvil.symbols` with the expression of each `?`, which is how a caller
    computes output shapes from the sizes of the inputs. Dimensions without
    a name are unknown and assumed to fit.

    Before:
    ```mlir
    func.func @f(%x: tensor<?x4xf32> {cuvil.symbols = ["N"]}) -> tensor<2x?xf32> {
      %0 = cuvil.reshape %x : (tensor<?x4xf32>) -> tensor<2x?xf32>
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<?x4xf32> {cuvil.symbols = ["N"]})
        -> (tensor<2x?xf32> {cuvil.symbols = ["N * 2"]}) {
    ```
  }];
}

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
