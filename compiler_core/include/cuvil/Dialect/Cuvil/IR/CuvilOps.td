//===- CuvilOps.td - Operations of the cuvil dialect -------*- tablegen -*-===//
//
// Tensor ops of Cuvil IR. Shapes follow NumPy: binary ops broadcast, matmul
// follows `@`, reductions take sorted non-negative axes. Every op whose result
// type follows from its operands and attributes implements
// InferTypeOpInterface: that one rule serves the verifier, the builders and
// the Python front ends (which ask it for result types while tracing).
// reshape, broadcast_to, cast and range take their result type as their
// parameter; a constant's type is its value's. Sizes known only at run time
// are `index` operands read with cuvil.dim (the tensor dialect's convention),
// so several dynamic sizes can come from several tensors.
// Cuvil_Element lists the types of the dtype table (DTypes.h); a test keeps
// the two in step.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_CUVILOPS_TD

include "cuvil/Dialect/Cuvil/IR/CuvilDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Cuvil_Element : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I32, I64]>;
def Cuvil_Tensor : RankedTensorOf<[F16, BF16, F32, F64, I1, I8, I32, I64]>;
def Cuvil_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Cuvil_BoolTensor : RankedTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Cuvil_ConstantOp : Cuvil_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A tensor constant (weights, literals)";
  let description = [{
    ```mlir
    %0 = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops (NumPy broadcasting)
//===----------------------------------------------------------------------===//

class Cuvil_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Cuvil_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let description = [{
    Elementwise with NumPy broadcasting: shapes are aligned on the right and
    each pair of dimensions must be equal or one of them 1. Both operands
    have the same element type; the result has the broadcast shape.

    ```mlir
    %2 = cuvil.}] # mnemonic # [{ %0, %1 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_AddOp : Cuvil_BinaryOp<"add", [Commutative]> {
  let summary = "Elementwise addition";
  let hasFolder = 1;
}
def Cuvil_SubOp : Cuvil_BinaryOp<"sub"> { let summary = "Elementwise subtraction"; }
def Cuvil_MulOp : Cuvil_BinaryOp<"mul", [Commutative]> {
  let summary = "Elementwise multiplication";
  let hasFolder = 1;
}
def Cuvil_DivOp : Cuvil_BinaryOp<"div"> {
  let summary = "Elementwise division: true division on floats, floor division on integers (x div 0 is 0)";
}
def Cuvil_PowOp : Cuvil_BinaryOp<"pow"> {
  let summary = "Elementwise power";
  // x ** 1, x ** 2, x ** 0.5 with a splat constant exponent become x,
  // x * x and sqrt(x): exact, and vectorizable where powf is not.
  let hasCanonicalizer = 1;
}
def Cuvil_MaxOp : Cuvil_BinaryOp<"max", [Commutative]> {
  let summary = "Elementwise maximum (NaN-propagating, like np.maximum)";
}
def Cuvil_MinOp : Cuvil_BinaryOp<"min", [Commutative]> {
  let summary = "Elementwise minimum (NaN-propagating, like np.minimum)";
}
def Cuvil_RemOp : Cuvil_BinaryOp<"rem"> {
  let summary = "Elementwise remainder with the dividend's sign (C fmod; integer x rem 0 is 0)";
}

def Cuvil_ComparePredicate : I64EnumAttr<"ComparePredicate",
    "the comparison of cuvil.compare", [
      I64EnumAttrCase<"eq", 0>, I64EnumAttrCase<"ne", 1>,
      I64EnumAttrCase<"lt", 2>, I64EnumAttrCase<"le", 3>,
      I64EnumAttrCase<"gt", 4>, I64EnumAttrCase<"ge", 5>
    ]> {
  let cppNamespace = "::mlir::cuvil";
}

def Cuvil_CompareOp : Cuvil_Op<"compare", [Pure, InferTypeOpAdaptor]> {
  let summary = "Elementwise comparison producing a boolean tensor";
  let description = [{
    `predicate` is one of `eq`, `ne`, `lt`, `le`, `gt`, `ge` (an enum
    attribute; generic form `{predicate = 2 : i64}` for `lt`). Broadcasts
    like the other binary ops; the result has element type `i1`. Floats
    compare ordered (false with a NaN) except `ne`, like NumPy.

    ```mlir
    %2 = cuvil.compare lt, %0, %1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs,
                       Cuvil_ComparePredicate:$predicate);
  let results = (outs Cuvil_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_WhereOp : Cuvil_Op<"where", [Pure, InferTypeOpAdaptor]> {
  let summary = "Elementwise select: cond ? x : y, broadcasting all three";
  let description = [{
    ```mlir
    %3 = cuvil.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cuvil_BoolTensor:$condition, Cuvil_Tensor:$true_value,
                   Cuvil_Tensor:$false_value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$condition `,` $true_value `,` $false_value attr-dict "
                       "`:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class Cuvil_UnaryOp<string mnemonic, Type operandType = Cuvil_Tensor>
    : Cuvil_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let description = [{
    ```mlir
    %1 = cuvil.}] # mnemonic # [{ %0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Cuvil_NegOp : Cuvil_UnaryOp<"neg"> { let summary = "Elementwise negation"; }
def Cuvil_AbsOp : Cuvil_UnaryOp<"abs"> { let summary = "Elementwise absolute value"; }
def Cuvil_ExpOp : Cuvil_UnaryOp<"exp", Cuvil_FloatTensor> { let summary = "Elementwise e^x"; }
def Cuvil_LogOp : Cuvil_UnaryOp<"log", Cuvil_FloatTensor> { let summary = "Elementwise natural logarithm"; }
def Cuvil_TanhOp : Cuvil_UnaryOp<"tanh", Cuvil_FloatTensor> { let summary = "Elementwise hyperbolic tangent"; }
def Cuvil_SqrtOp : Cuvil_UnaryOp<"sqrt", Cuvil_FloatTensor> { let summary = "Elementwise square root"; }
def Cuvil_RsqrtOp : Cuvil_UnaryOp<"rsqrt", Cuvil_FloatTensor> { let summary = "Elementwise 1/sqrt(x)"; }
def Cuvil_ErfOp : Cuvil_UnaryOp<"erf", Cuvil_FloatTensor> { let summary = "Elementwise error function"; }
def Cuvil_SinOp : Cuvil_UnaryOp<"sin", Cuvil_FloatTensor> { let summary = "Elementwise sine (radians)"; }
def Cuvil_CosOp : Cuvil_UnaryOp<"cos", Cuvil_FloatTensor> { let summary = "Elementwise cosine (radians)"; }
def Cuvil_FloorOp : Cuvil_UnaryOp<"floor", Cuvil_FloatTensor> { let summary = "Elementwise largest integer <= x"; }
def Cuvil_CeilOp : Cuvil_UnaryOp<"ceil", Cuvil_FloatTensor> { let summary = "Elementwise smallest integer >= x"; }
def Cuvil_TruncOp : Cuvil_UnaryOp<"trunc", Cuvil_FloatTensor> { let summary = "Elementwise rounding toward zero"; }
def Cuvil_RoundOp : Cuvil_UnaryOp<"round", Cuvil_FloatTensor> {
  let summary = "Elementwise rounding to the nearest integer, ties to even (np.rint)";
}
def Cuvil_SigmoidOp : Cuvil_UnaryOp<"sigmoid", Cuvil_FloatTensor> { let summary = "Elementwise 1/(1+e^-x)"; }
def Cuvil_ReluOp : Cuvil_UnaryOp<"relu"> { let summary = "Elementwise max(x, 0)"; }
def Cuvil_GeluOp : Cuvil_UnaryOp<"gelu", Cuvil_FloatTensor> {
  let summary = "Elementwise GELU, exact form 0.5*x*(1+erf(x/sqrt(2)))";
}

//===----------------------------------------------------------------------===//
// Contractions and convolutions
//===----------------------------------------------------------------------===//

def Cuvil_MatmulOp : Cuvil_Op<"matmul",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Matrix product with NumPy `@` semantics on rank >= 2";
  let description = [{
    The last two dimensions are contracted as (M x K) @ (K x N); leading batch
    dimensions broadcast. Front ends reshape 1-D operands before this op.

    ```mlir
    %2 = cuvil.matmul %0, %1 : (tensor<8x64x32xf32>, tensor<32x16xf32>) -> tensor<8x64x16xf32>
    ```

    Mixed precision: the result may have a wider element type than the
    operands, which the products are then accumulated in: bf16 or f16
    operands with an f32 result, i8 operands with an i32 result.

    ```mlir
    %2 = cuvil.matmul %0, %1 : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_QuantizedMatmulOp : Cuvil_Op<"quantized_matmul",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product with int4 weights, dequantized group by group";
  let description = [{
    `%input @ W` for a (K x N) weight W stored as signed 4-bit integers,
    packed two per byte, with one scale per group of `group_size` rows and
    column (symmetric, group-wise weight-only quantization):

    `W[k, n] = q[k, n] * scales[k / group_size, n]`, where `q[k, n]` is the
    low nibble of `packed[k, n]` for `n < N/2` and the high nibble of
    `packed[k, n - N/2]` for the rest, each a two's-complement value in
    [-8, 7]. `packed` is (K x N/2) i8 and `scales` (K/group_size x N) of the
    input's float type; `group_size` divides K. Leading dimensions of
    `%input` are batch dimensions, as for `cuvil.matmul` with a 2-D weight.

    ```mlir
    %y = cuvil.quantized_matmul %x, %packed, %scales {group_size = 128 : i64}
        : (tensor<64x256xf32>, tensor<256x256xi8>, tensor<2x512xf32>) -> tensor<64x512xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, TensorOf<[I8]>:$packed,
                       Cuvil_FloatTensor:$scales, I64Attr:$group_size);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $packed `,` $scales attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_Conv2dOp : Cuvil_Op<"conv2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D convolution, NCHW input and FCHW weights";
  let description = [{
    `padding` is (top, left, bottom, right); weights have C/groups channels.

    ```mlir
    %2 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
                               dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $weight attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Cuvil_Pool2dOp<string mnemonic>
    : Cuvil_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let description = [{
    Pooling over the two trailing dimensions of an NCHW tensor; `padding`
    is (top, left, bottom, right).
  }];
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_MaxPool2dOp : Cuvil_Pool2dOp<"max_pool2d"> {
  let summary = "2-D max pooling (NCHW)";
  let arguments = (ins Cuvil_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding);
}

def Cuvil_AvgPool2dOp : Cuvil_Pool2dOp<"avg_pool2d"> {
  let summary = "2-D average pooling (NCHW)";
  let arguments = (ins Cuvil_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                   DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

class Cuvil_ReduceOp<string mnemonic>
    : Cuvil_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let description = [{
    Reduces over `axes` (sorted, non-negative, unique). With `keepdims` the
    reduced dimensions stay with size 1.

    ```mlir
    %1 = cuvil.}] # mnemonic # [{ %0 {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_ReduceSumOp : Cuvil_ReduceOp<"reduce_sum"> { let summary = "Sum over axes"; }
def Cuvil_ReduceMeanOp : Cuvil_ReduceOp<"reduce_mean"> { let summary = "Mean over axes"; }
def Cuvil_ReduceMaxOp : Cuvil_ReduceOp<"reduce_max"> { let summary = "Maximum over axes"; }
def Cuvil_ReduceMinOp : Cuvil_ReduceOp<"reduce_min"> { let summary = "Minimum over axes"; }

def Cuvil_SoftmaxOp : Cuvil_Op<"softmax",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Numerically stable softmax along one axis";
  let description = [{
    ```mlir
    %1 = cuvil.softmax %0 {axis = 1 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Cuvil_LayerNormOp : Cuvil_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalization over the dimensions [axis, rank)";
  let description = [{
    `gamma` and `beta` have the normalized (trailing) shape.

    ```mlir
    %3 = cuvil.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$gamma,
                   Cuvil_FloatTensor:$beta, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input `,` $gamma `,` $beta attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_BatchNormOp : Cuvil_Op<"batch_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Batch normalization in inference form over channel axis 1";
  let description = [{
    y = (x - mean) / sqrt(var + epsilon) * scale + bias, with per-channel
    `scale`, `bias`, `mean` and `var` of shape (C).

    ```mlir
    %y = cuvil.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64}
        : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$scale,
                   Cuvil_FloatTensor:$bias, Cuvil_FloatTensor:$mean,
                   Cuvil_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_DropoutOp : Cuvil_Op<"dropout",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Dropout (training only; the identity in inference)";
  let description = [{
    Present only in graphs imported in training mode. Inference pipelines
    remove it; it lowers to the identity.

    ```mlir
    %1 = cuvil.dropout %0 {ratio = 1.0e-01 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, F64Attr:$ratio);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def Cuvil_ReshapeOp : Cuvil_Op<"reshape", [Pure]> {
  let summary = "Reinterpret a tensor with a new shape of the same size";
  let description = [{
    Without `sizes`, each dynamic size of the result follows from the input:
    a collapsed or expanded group of whole dimensions, or the element count
    over the static sizes when only one is dynamic (`reshape(2, -1)`).
    Several dynamic sizes that do not follow that way (a flat `[N*T, C]`
    back into `[N, T, C]`) are given as `sizes`, one `index` per `?` of the
    result in order, read at run time with `cuvil.dim` (the `tensor.empty`
    convention); they must multiply to the input's element count. A reshape
    to the same rank that only makes static sizes dynamic is a cast (what
    canonicalization leaves where run-time sizes became constants).

    ```mlir
    %1 = cuvil.reshape %0 : (tensor<4x8xf32>) -> tensor<2x16xf32>
    %n = cuvil.dim %x, 0 : tensor<?x?x64xf32>
    %t = cuvil.dim %x, 1 : tensor<?x?x64xf32>
    %3 = cuvil.reshape %2 (%n, %t) : (tensor<?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Variadic<Index>:$sizes);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input (`(` $sizes^ `)`)? attr-dict `:` "
                       "functional-type($input, results)";
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$input), [{
      build($_builder, $_state, result, input, ValueRange());
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_TransposeOp : Cuvil_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute dimensions";
  let description = [{
    ```mlir
    %1 = cuvil.transpose %0 {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Cuvil_BroadcastToOp : Cuvil_Op<"broadcast_to", [Pure]> {
  let summary = "Broadcast to a larger shape with NumPy rules";
  let description = [{
    A dynamic size of the result is the input's size in that dimension or,
    when the input's is 1 there (a dynamic broadcast), the size of `like`, a
    tensor of the result's rank whose shape the result takes.

    ```mlir
    %1 = cuvil.broadcast_to %0 : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = cuvil.broadcast_to %0 like %2 : (tensor<1x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Optional<Cuvil_Tensor>:$like);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input (`like` $like^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Cuvil_ConcatOp : Cuvil_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Concatenate tensors along an axis";
  let description = [{
    ```mlir
    %2 = cuvil.concat %0, %1 {axis = 0 : i64} : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Cuvil_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_SliceOp : Cuvil_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "Strided slice [start, limit) with positive steps";
  let description = [{
    `start` and `step` are static. A `limit` is static or, printed as an SSA
    value in the list, an `index` operand known at run time (`mask[:, :t]`
    with `t` read by `cuvil.dim`), stored as `ShapedType::kDynamic` in the
    `limit` array like `tensor.extract_slice`'s sizes. Only a dimension with
    a run-time limit may have a dynamic size, and its result size is dynamic.
    A run-time limit beyond the dimension is clamped to it (as in Python
    slicing), so compiled code never reads out of bounds.

    ```mlir
    %1 = cuvil.slice %0 limit [4, 8] {start = array<i64: 0, 1>, step = array<i64: 2, 1>}
        : (tensor<4x8xf32>) -> tensor<2x7xf32>
    %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
    %3 = cuvil.slice %mask limit [1, 1, %t, %t] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>}
        : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Variadic<Index>:$dynamic_limits,
                   DenseI64ArrayAttr:$start, DenseI64ArrayAttr:$limit,
                   DenseI64ArrayAttr:$step);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `limit` custom<DynamicIndexList>($dynamic_limits, $limit) "
                       "attr-dict `:` functional-type($input, results)";
  let builders = [
    OpBuilder<(ins "Value":$input, "ArrayRef<int64_t>":$start,
                   "ArrayRef<int64_t>":$limit, "ArrayRef<int64_t>":$step), [{
      build($_builder, $_state, input, ValueRange(), start, limit, step);
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_IndexTensor : RankedTensorOf<[I32, I64]>;

def Cuvil_GatherOp : Cuvil_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "Take slices of `data` along `axis` at integer `indices`";
  let description = [{
    Embedding lookup, `np.take(data, indices, axis)`, ONNX `Gather`,
    `torch.embedding`: the result has shape
    `data.shape[:axis] + indices.shape + data.shape[axis+1:]`. A negative
    index counts from the end of `axis`, as in NumPy. Indices outside
    `[-size, size)` are clamped to the nearest valid position, so compiled
    code never reads out of bounds (NumPy would raise `IndexError`).

    ```mlir
    %2 = cuvil.gather %table, %ids {axis = 0 : i64}
        : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$data, Cuvil_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Cuvil_DimOp : Cuvil_Op<"dim", [Pure]> {
  let summary = "The run-time size of one dimension, as an index";
  let description = [{
    How a size known only at run time reaches the ops that take one as an
    `index` operand (`cuvil.range`, a `cuvil.slice` limit, `cuvil.reshape`
    sizes), like `tensor.dim`; cuvil-propagate-symbols knows it as the
    dimension's symbol. A static dimension folds to a constant.

    ```mlir
    %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$input `,` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Cuvil_RangeOp : Cuvil_Op<"range", [Pure]> {
  let summary = "start, start + step, ... below a run-time limit (np.arange)";
  let description = [{
    A 1-D tensor of `max(0, ceil((limit - start) / step))` elements
    `start + i * step`, converted to the result's element type. `start` and
    `step` (>= 1) are static; `limit` is an `index` operand, typically a
    `cuvil.dim` (ONNX `Range(0, T, 1)`, `torch.arange(x.shape[1])`). The
    result size is dynamic unless `limit` is a constant, which
    canonicalization folds into a `cuvil.constant`.

    ```mlir
    %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
    %pos = cuvil.range %t {start = 0 : i64, step = 1 : i64} : tensor<?xi64>
    ```
  }];
  let arguments = (ins Index:$limit, DefaultValuedAttr<I64Attr, "0">:$start,
                   DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$limit attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_CastOp : Cuvil_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "Element type conversion with NumPy `astype` semantics";
  let description = [{
    Float to integer truncates toward zero; to `i1` tests for non-zero.

    ```mlir
    %1 = cuvil.cast %0 : (tensor<4xf32>) -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILOPS_TD
