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

def MergeSiblingMatmuls : Pass<"cuvil-merge-sibling-matmuls", "func::FuncOp"> {
  let summary = "One matmul for products of one value with several constant weights";
  let description = [{
    Attention's query, key and value projections multiply the same
    activations by three weights: three GEMMs that each load the
    activations, each a kernel of its own (a parallel region each, or one
    thread each when small). When the weights are constants (2-D, same
    rows and element type, not splats), this pass concatenates them along
    their columns at compile time and computes one product, whose column
    slices replace the three results (views, no copies). Up to `max-bytes`
    of merged weights.

    Before:
    ```mlir
    %q = cuvil.matmul %x, %wq : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %k = cuvil.matmul %x, %wk : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    ```
    After:
    ```mlir
    %w = cuvil.constant dense<...> : tensor<128x256xf32>   // [wq | wk]
    %p = cuvil.matmul %x, %w : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
    %q = cuvil.slice %p limit [64, 128] {start = array<i64: 0, 0>, step = array<i64: 1, 1>} : ...
    %k = cuvil.slice %p limit [64, 256] {start = array<i64: 0, 128>, step = array<i64: 1, 1>} : ...
    ```
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"int64_t(1) << 28",
           "Largest merged weight, in bytes">
  ];
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
// Precision and quantization
//===----------------------------------------------------------------------===//

def QuantizeWeights : Pass<"cuvil-quantize-weights", "func::FuncOp"> {
  let summary = "Quantize matmuls with constant weights: int4 weight-only or int8 static";
  let description = [{
    With `bits=4`, weight-only quantization: each `cuvil.matmul` of a float32 activation by
    a constant 2-D float32 weight (K x N) becomes a `cuvil.quantized_matmul`
    whose weight is stored as signed 4-bit integers, two per byte, with one
    float32 scale per group of `group-size` rows and column:
    `scale = max|w| / 7` over the group, `q = round(w / scale)` in [-7, 7].
    The weight shrinks from 32 to 4.25 bits per value (scales included).

    A matmul is kept in float32, with a remark saying why, when K is not a
    multiple of `group-size` or N not a multiple of `column-multiple` (the
    CPU kernel's register tile, 2 x 2 vectors): quantizing such shapes would
    leave the kernel without a vector schedule.

    Before:
    ```mlir
    %w = cuvil.constant dense<...> : tensor<256x512xf32>
    %y = cuvil.matmul %x, %w : (tensor<64x256xf32>, tensor<256x512xf32>) -> tensor<64x512xf32>
    ```
    After:
    ```mlir
    %q = cuvil.constant dense<...> : tensor<256x256xi8>
    %s = cuvil.constant dense<...> : tensor<2x512xf32>
    %y = cuvil.quantized_matmul %x, %q, %s {group_size = 128 : i64} : (...) -> tensor<64x512xf32>
    ```

    With `bits=8`, static quantization of weights and activations: the
    weight gets one scale per column (`max|w| / 127`), the activation the
    scale given for it in `activation-scales` (one per quantized matmul, in
    the order of the function; a calibration computes them), and the matmul
    runs on int8 with int32 accumulation:
    `y = float(int8(x / sx) @ wq) * (sx * sw)`, the activation rounded to
    nearest even and clamped to [-127, 127]. With `probe`, nothing is
    quantized: each such matmul's activation becomes an extra result of
    the function instead, which is what a calibration runs on its samples.
  }];
  let options = [
    Option<"bits", "bits", "int64_t", /*default=*/"4",
           "4 (weight-only, group-wise) or 8 (weights and activations)">,
    ListOption<"activationScales", "activation-scales", "double",
               "bits=8: the activation scale of each quantized matmul">,
    Option<"probe", "probe", "bool", /*default=*/"false",
           "bits=8: return each quantized matmul's activation instead">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"128",
           "Rows of the weight that share one scale">,
    Option<"columnMultiple", "column-multiple", "int64_t", /*default=*/"64",
           "N must be a multiple of this for a matmul to be quantized">
  ];
}

def WidenF16 : Pass<"cuvil-widen-f16", "func::FuncOp"> {
  let summary = "Compute float16 in float32, from the arguments to the results";
  let description = [{
    A front end traces float16 code with NumPy's own dtype rules (which op
    gives float16, which promotes to float32); this pass then makes every
    f16 value f32: the function's arguments and results, constants
    (converted exactly) and every op's result. Casts that become f32 to f32
    fold away. The caller converts float16 arguments to float32 and float32
    results back to float16 at the boundary, so a model keeps its float16
    signature and computes with float32 rounding inside.

    Before:
    ```mlir
    func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {
      %c = cuvil.constant dense<5.000000e-01> : tensor<f16>
      %y = cuvil.mul %x, %c : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %c = cuvil.constant dense<5.000000e-01> : tensor<f32>
      %y = cuvil.mul %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
}

def ReducePrecision : Pass<"cuvil-reduce-precision", "func::FuncOp"> {
  let summary = "Run float32 matmuls on bf16, fp16 or TF32 operands, f32 accumulation";
  let description = [{
    Each float32 `cuvil.matmul` reads its operands in `precision` (`bf16` or
    `fp16`) and accumulates in float32 (an f32 result): constant
    weights are converted once, here (round to nearest even), and other
    operands through one `cuvil.cast` per value. Everything else (softmax,
    normalizations, activations) stays in float32, where the narrow types
    would lose accuracy for no gain on a CPU.

    Before:
    ```mlir
    %w = cuvil.constant dense<...> : tensor<128x128xf32>
    %y = cuvil.matmul %x, %w : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    ```
    After:
    ```mlir
    %w = cuvil.constant dense<...> : tensor<128x128xbf16>
    %x16 = cuvil.cast %x : (tensor<64x128xf32>) -> tensor<64x128xbf16>
    %y = cuvil.matmul %x16, %w : (tensor<64x128xbf16>, tensor<128x128xbf16>) -> tensor<64x128xf32>
    ```

    `tf32` changes no type: the function gets `cuvil.tf32_matmuls`, which
    allows a target with TF32 tensor cores (cuda) to read its float32
    matmuls' operands rounded to TF32 (10-bit mantissa), summing in float32;
    the CPU keeps them float32.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "Operand type of the matmuls: bf16, fp16 or tf32">
  ];
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
