//===- ConvToGemm.cpp - The cuvil-cpu-conv-to-gemm pass -------------------===//
//
// Rewrites NCHW convolutions as an image-to-column copy and a GEMM, so the
// convolution gets the GEMM schedule (cache tiles across threads, register
// tiles of vector FMAs) instead of running as a plain loop nest.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUCONVTOGEMM
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// A tensor.empty of `shape` whose one dynamic dim, if any, is the batch
/// `batchSize` (the only size this rewrite lets be dynamic).
Value emptyWithBatch(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                     Type elementType, Value batchSize) {
  SmallVector<Value> dynamic;
  if (ShapedType::isDynamic(shape.front()))
    dynamic.push_back(batchSize);
  return b.create<tensor::EmptyOp>(loc, shape, elementType, dynamic);
}

/// The columns of the convolution: col[n, c, kh, kw, oh, ow] =
/// input[n, c, oh * s0 + kh * d0, ow * s1 + kw * d1] over the (already
/// padded) input. Along `ow` a unit stride reads contiguously, which the
/// vectorizer turns into plain vector loads.
Value imageToColumns(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> colShape, ArrayRef<int64_t> strides,
                     ArrayRef<int64_t> dilations, Value batchSize) {
  auto inType = cast<RankedTensorType>(input.getType());
  Type elementType = inType.getElementType();
  Value init = emptyWithBatch(b, loc, colShape, elementType, batchSize);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(6, ctx)};
  SmallVector<utils::IteratorType> iterators(6, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, init.getType(), ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange) {
        auto index = [&](int64_t d) {
          return nb.create<linalg::IndexOp>(l, d).getResult();
        };
        // out * stride + kernel * dilation, without multiplications by 1:
        // the vectorizer recognizes `ow + kw` as a contiguous read.
        auto scaled = [&](int64_t d, int64_t factor) -> Value {
          if (factor == 1)
            return index(d);
          return nb.create<arith::MulIOp>(
              l, index(d), nb.create<arith::ConstantIndexOp>(l, factor));
        };
        auto position = [&](int64_t out, int64_t kernel, int64_t stride,
                            int64_t dilation) {
          return nb.create<arith::AddIOp>(l, scaled(out, stride),
                                          scaled(kernel, dilation));
        };
        Value h = position(4, 2, strides[0], dilations[0]);
        Value w = position(5, 3, strides[1], dilations[1]);
        Value element = nb.create<tensor::ExtractOp>(
            l, input, ValueRange{index(0), index(1), h, w});
        nb.create<linalg::YieldOp>(l, element);
      });
  return generic.getResult(0);
}

/// The weights `[F, C, KH, KW]` as the GEMM's left operand: one `[F, K]`
/// matrix, or for a batch (`batched`) that matrix broadcast to `[N, F, K]`
/// (the same weights for every image: a copy per image, small next to the
/// columns).
Value weightOperand(OpBuilder &b, Location loc, Value weight, bool batched,
                    int64_t batch, Value batchSize) {
  Value matrix = b.create<tensor::CollapseShapeOp>(
      loc, weight, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  if (!batched)
    return matrix;
  auto type = cast<RankedTensorType>(matrix.getType());
  Value init =
      emptyWithBatch(b, loc, {batch, type.getDimSize(0), type.getDimSize(1)},
                     type.getElementType(), batchSize);
  MLIRContext *ctx = b.getContext();
  AffineExpr n, f, k;
  bindDims(ctx, n, f, k);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {f, k}, ctx),
                                 AffineMap::get(3, 0, {n, f, k}, ctx)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  return b
      .create<linalg::GenericOp>(
          loc, init.getType(), ValueRange{matrix}, ValueRange{init}, maps,
          iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, args[0]);
          })
      .getResult(0);
}

/// `lhs` times `rhs` into a `shape` tensor filled with `initValue`: a
/// linalg.matmul for two dims, a linalg.batch_matmul for three.
Value gemm(OpBuilder &b, Location loc, Value lhs, Value rhs,
           ArrayRef<int64_t> shape, Value initValue, Value batchSize) {
  Value init = emptyWithBatch(b, loc, shape, initValue.getType(), batchSize);
  Value filled = b.create<linalg::FillOp>(loc, initValue, init).getResult(0);
  if (shape.size() == 2)
    return b
        .create<linalg::MatmulOp>(loc, filled.getType(), ValueRange{lhs, rhs},
                                  filled)
        .getResult(0);
  return b
      .create<linalg::BatchMatmulOp>(loc, filled.getType(),
                                     ValueRange{lhs, rhs}, filled)
      .getResult(0);
}

/// conv_2d_nchw_fchw(x, w) with static channels, kernel and output size:
///   batch 1:  w[F, C*KH*KW] x cols[C*KH*KW, OH*OW]        (linalg.matmul)
///   batch N:  w broadcast to N x cols[N, C*KH*KW, OH*OW]  (batch_matmul)
/// A 1x1 kernel with unit strides reads the input itself as the columns.
/// Other convolutions are left as they are.
void convToGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv) {
  Location loc = conv.getLoc();
  Value input = conv.getDpsInputs()[0], weight = conv.getDpsInputs()[1];
  auto fill = conv.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  auto inType = dyn_cast<RankedTensorType>(input.getType());
  auto wType = dyn_cast<RankedTensorType>(weight.getType());
  auto outType = dyn_cast<RankedTensorType>(conv.getResultTypes()[0]);
  if (!fill || !inType || !wType || !outType ||
      !isa<FloatType>(outType.getElementType()))
    return;
  ArrayRef<int64_t> in = inType.getShape(), w = wType.getShape(),
                    out = outType.getShape();
  if (llvm::any_of(in.drop_front(), ShapedType::isDynamic) ||
      llvm::any_of(out.drop_front(), ShapedType::isDynamic) ||
      wType.getNumDynamicDims() != 0)
    return;
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  int64_t batch = in[0], pixels = out[2] * out[3];
  rewriter.setInsertionPoint(conv);
  Value batchSize;
  if (ShapedType::isDynamic(batch))
    batchSize = rewriter.create<tensor::DimOp>(loc, input, 0);

  bool pointwise = w[2] == 1 && w[3] == 1 && strides[0] == 1 &&
                   strides[1] == 1 && in[2] == out[2] && in[3] == out[3];
  Value cols = input;
  SmallVector<ReassociationIndices> toMatrix = {{0}, {1}, {2, 3}};
  if (!pointwise) {
    cols = imageToColumns(rewriter, loc, input,
                          {batch, w[1], w[2], w[3], out[2], out[3]}, strides,
                          dilations, batchSize);
    toMatrix = {{0}, {1, 2, 3}, {4, 5}};
  }
  cols = rewriter.create<tensor::CollapseShapeOp>(loc, cols, toMatrix);
  bool batched = batch != 1;
  if (!batched)
    cols = rewriter.create<tensor::CollapseShapeOp>(
        loc, cols, SmallVector<ReassociationIndices>{{0, 1}, {2}});
  Value lhs = weightOperand(rewriter, loc, weight, batched, batch, batchSize);
  SmallVector<int64_t> shape = {w[0], pixels};
  if (batched)
    shape.insert(shape.begin(), batch);
  Value product =
      gemm(rewriter, loc, lhs, cols, shape, fill.getDpsInputs()[0], batchSize);
  SmallVector<ReassociationIndices> toImage = {{0, 1}, {2, 3}};
  if (batched)
    toImage = {{0}, {1}, {2, 3}};
  rewriter.replaceOp(conv, rewriter.create<tensor::ExpandShapeOp>(
                               loc, outType, product, toImage));
  if (fill->use_empty())
    rewriter.eraseOp(fill);
}

struct CpuConvToGemmPass
    : public cuvil::impl::CpuConvToGemmBase<CpuConvToGemmPass> {
  void runOnOperation() override {
    // Only the convolutions are rewritten: a greedy driver would also fold
    // and reorder the rest of the function.
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs)
      convToGemm(rewriter, conv);
  }
};
} // namespace
