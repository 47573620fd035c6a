//===- ConvToGemm.cpp - The cuvil-cpu-conv-to-gemm pass -------------------===//
//
// Rewrites NCHW convolutions as an image-to-column copy and a GEMM, so the
// convolution gets the GEMM schedule (cache tiles across threads, register
// tiles of vector FMAs) instead of running as a plain loop nest.
// Unit-stride convolutions with enough channels and filters copy no windows:
// they become implicit GEMMs over the padded image (see ImplicitConv.cpp).
//
//===----------------------------------------------------------------------===//

#include "GemmTiles.h"
#include "ImplicitConv.h"
#include "PadKernels.h"

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

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

/// How the gathered windows are laid out: columns [N, C, KH, KW, OH, OW]
/// (one image's collapse to [C*KH*KW, OH*OW]), columns of a batch
/// [C, KH, KW, N, OH, OW] (all images' collapse to one [C*KH*KW, N*OH*OW]
/// matrix), both from an NCHW image, or one row per pixel
/// [N, OH, OW, KH, KW, C] (collapsing to [N*OH*OW, KH*KW*C]) from an NHWC
/// image, so that each window row is one contiguous read of its channels.
enum class Windows { Columns, BatchColumns, PixelRows };

/// The loop of each of (n, c, kh, kw, oh, ow) in the gather's generic.
static SmallVector<int64_t> windowLoops(Windows layout) {
  switch (layout) {
  case Windows::BatchColumns:
    return {3, 0, 1, 2, 4, 5};
  case Windows::PixelRows:
    return {0, 5, 3, 4, 1, 2};
  case Windows::Columns:
    break;
  }
  return {0, 1, 2, 3, 4, 5};
}

/// The windows of the convolution: col[n, c, kh, kw, oh, ow] (loops ordered
/// by windowLoops) = input[n, c, oh * s0 + kh * d0, ow * s1 + kw * d1] over
/// the (already padded) input, NHWC for pixel rows. Along `ow` (along `c`
/// for pixel rows) a unit stride reads contiguously, which the vectorizer
/// turns into plain vector loads.
Value imageToColumns(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> colShape, ArrayRef<int64_t> strides,
                     ArrayRef<int64_t> dilations, Value batchSize,
                     Windows layout = Windows::Columns) {
  SmallVector<int64_t> loop = windowLoops(layout);
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
          return nb.create<linalg::IndexOp>(l, loop[d]).getResult();
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
        SmallVector<Value> at = {index(0), index(1), h, w};
        if (layout == Windows::PixelRows)
          at = {index(0), h, w, index(1)};
        Value element = nb.create<tensor::ExtractOp>(l, input, at);
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

/// The reshapes (and empty tensors) feeding `op`'s operands and taking its
/// results, along single-use chains.
SmallVector<Operation *> reshapesAround(Operation *op) {
  SmallVector<Operation *> found;
  auto isReshape = [](Operation *o) {
    return isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                           tensor::EmptyOp>(o);
  };
  for (Value operand : op->getOperands())
    for (Operation *p = operand.getDefiningOp(); isReshape(p);
         p = p->getNumOperands() ? p->getOperand(0).getDefiningOp() : nullptr)
      found.push_back(p);
  for (Value result : op->getResults())
    for (Value v = result; v.hasOneUse() && isReshape(*v.getUsers().begin());
         v = v.getUsers().begin()->getResult(0))
      found.push_back(*v.getUsers().begin());
  return found;
}

/// The elementwise op on a convolution's `image` (its bias and ReLU) made
/// to compute on the GEMM's [F, OH*OW] result that `image` expands, so that
/// cuvil-cpu-schedule fuses it into the GEMM as its epilogue (on the
/// accumulators) instead of running it as a kernel of its own. For one
/// image the unit batch dimension is dropped first: a bias indexed by
/// filter alone would not collapse with it.
void collapseConsumer(RewriterBase &rewriter, tensor::ExpandShapeOp image) {
  linalg::GenericOp generic = cuvil::cpu::elementwiseUserOf(image.getResult());
  if (!generic)
    return;
  SmallVector<ReassociationIndices> dims = image.getReassociationIndices();
  rewriter.setInsertionPoint(generic);
  if (dims.front().size() == 2) {
    linalg::ControlDropUnitDims options;
    options.controlFn = [](Operation *) { return SmallVector<unsigned>{0}; };
    if (failed(linalg::dropUnitDims(rewriter, generic, options)))
      return;
    auto dropped =
        image->hasOneUse()
            ? dyn_cast<tensor::CollapseShapeOp>(*image->getUsers().begin())
            : nullptr;
    generic = dropped && dropped->hasOneUse()
                  ? dyn_cast<linalg::GenericOp>(*dropped->getUsers().begin())
                  : nullptr;
    if (!generic)
      return;
    dims = {{0}, {1, 2}};
  }
  // Operands broadcast through constant indices (a [1, F, 1, 1] bias with
  // more than one image) are left alone: collapsing expects dimensions.
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!llvm::all_of(
          maps, [](AffineMap map) { return map.isProjectedPermutation(); }) ||
      !linalg::areDimSequencesPreserved(maps, dims))
    return;
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(generic, dims, rewriter);
  if (failed(collapsed))
    return;
  rewriter.replaceOp(generic, collapsed->results);
  // Fold the reshapes between the GEMM and the op (collapsing the expanded
  // result gives the result back) and those of its init and result.
  RewritePatternSet patterns(rewriter.getContext());
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                       rewriter.getContext());
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns,
                                                     rewriter.getContext());
  tensor::populateFoldTensorEmptyPatterns(patterns);
  (void)applyOpPatternsAndFold(reshapesAround(collapsed->collapsedOp),
                               std::move(patterns));
}

/// A convolution of a static batch of images as one GEMM: the weights
/// [F, C*KH*KW] by the columns of all images [C*KH*KW, N*OH*OW] (the
/// weights are read once, not broadcast to a copy per image), the result
/// [F, N, OH, OW] read back as NCHW by the elementwise op on the image (its
/// bias and ReLU), whose indexing map permutes it, or else by a transpose.
void batchAsColumns(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                    Value input, Value weight, linalg::FillOp fill,
                    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  Location loc = conv.getLoc();
  auto outType = cast<RankedTensorType>(conv.getResultTypes()[0]);
  ArrayRef<int64_t> w = cast<RankedTensorType>(weight.getType()).getShape(),
                    out = outType.getShape();
  Value cols = imageToColumns(
      rewriter, loc, input, {w[1], w[2], w[3], out[0], out[2], out[3]}, strides,
      dilations, Value(), Windows::BatchColumns);
  cols = rewriter.create<tensor::CollapseShapeOp>(
      loc, cols, SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  Value lhs = weightOperand(rewriter, loc, weight, false, 1, Value());
  Value product =
      gemm(rewriter, loc, lhs, cols, {w[0], out[0] * out[2] * out[3]},
           fill.getDpsInputs()[0], Value());
  Value filtersFirst = rewriter.create<tensor::ExpandShapeOp>(
      loc,
      RankedTensorType::get({w[0], out[0], out[2], out[3]},
                            outType.getElementType()),
      product, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr n, f, h, x;
  bindDims(ctx, n, f, h, x);
  Value result = conv.getResult(0);
  if (linalg::GenericOp generic = cuvil::cpu::elementwiseUserOf(result)) {
    OpOperand *use = &*result.getUses().begin();
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    maps[use->getOperandNumber()] = AffineMap::get(4, 0, {f, n, h, x}, ctx);
    rewriter.modifyOpInPlace(generic, [&] {
      use->set(filtersFirst);
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    rewriter.eraseOp(conv);
  } else {
    Value empty = rewriter.create<tensor::EmptyOp>(loc, outType.getShape(),
                                                   outType.getElementType());
    rewriter.replaceOp(
        conv, rewriter.create<linalg::TransposeOp>(
                  loc, filtersFirst, empty, ArrayRef<int64_t>{1, 0, 2, 3}));
  }
  if (fill->use_empty())
    rewriter.eraseOp(fill);
}

/// The weights [F, C, KH, KW], a constant, as the constant [KH*KW*C, F]
/// (the right operand of the pixel rows' GEMM); null when they are not a
/// dense constant of whole bytes.
Value transposedWeights(OpBuilder &b, Location loc, Value weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t filters = type.getDimSize(0),
          k = type.getNumElements() / std::max<int64_t>(filters, 1);
  int64_t channels = type.getDimSize(1),
          window = type.getDimSize(2) * type.getDimSize(3);
  // Element ((j * C + c) * F + f) of the result is (f, c, j) of the weights.
  return cuvil::cpu::permutedConstant(
      b, loc, weight,
      RankedTensorType::get({k, filters}, type.getElementType()),
      [&](int64_t i) {
        int64_t f = i % filters, rest = i / filters;
        return f * k + (rest % channels) * window + rest / channels;
      });
}

/// The NCHW `input` of a convolution as NHWC: its source transposed once
/// (a transpose of the last two dimensions of [N, C, H*W]) and, where
/// `input` pads that source with a constant, padded again in NHWC, so that
/// the padding's copy moves whole rows of channels.
Value channelsLast(OpBuilder &b, Location loc, Value input) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  bool repad = pad && pad.getConstantPaddingValue() &&
               pad.getSourceType().hasStaticShape();
  Value image = repad ? pad.getSource() : input;
  auto type = cast<RankedTensorType>(image.getType());
  ArrayRef<int64_t> in = type.getShape();
  Type element = type.getElementType();
  Value flat = b.create<tensor::CollapseShapeOp>(
      loc, image, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value empty = b.create<tensor::EmptyOp>(
      loc, ArrayRef<int64_t>{in[0], in[2] * in[3], in[1]}, element);
  Value moved = b.create<linalg::TransposeOp>(loc, flat, empty,
                                              ArrayRef<int64_t>{0, 2, 1})
                    .getResult()
                    .front();
  Value nhwc = b.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get({in[0], in[2], in[3], in[1]}, element), moved,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  if (image == input)
    return nhwc;
  auto toLast = [](SmallVector<OpFoldResult> v) {
    return SmallVector<OpFoldResult>{v[0], v[2], v[3], v[1]};
  };
  ArrayRef<int64_t> padded = pad.getResultType().getShape();
  return b.create<tensor::PadOp>(
      loc,
      RankedTensorType::get({padded[0], padded[2], padded[3], padded[1]},
                            element),
      nhwc, toLast(pad.getMixedLowPad()), toLast(pad.getMixedHighPad()),
      cuvil::cpu::paddingValueOutside(b, pad));
}

/// Whether a static batch of images is better multiplied with its pixels as
/// the GEMM's rows: their count is no whole register tile (two vectors, the
/// columns of the filters-first GEMM) while the filters are.
bool pixelsAsRowsPay(int64_t filters, int64_t pixels, int64_t vectorLanes) {
  int64_t registerCols = 2 * vectorLanes;
  return registerCols > 0 && filters % registerCols == 0 &&
         pixels % registerCols != 0;
}

/// Whether an operand the elementwise op on a convolution's image reads
/// through `map` over (n, f, h, w) is indexed by filter alone (a bias
/// [1, F, 1, 1], or [F, 1, 1]; by image too where there is one image), its
/// other dimensions of size 1: a vector of filters [F] for the pixel rows'
/// (p, f).
static bool isPerFilter(Value operand, AffineMap map, int64_t batch) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return false;
  bool filters = false;
  for (auto [d, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dim && dim.getPosition() == 1 && !filters) {
      filters = true;
      continue;
    }
    if (type.getDimSize(d) != 1 ||
        (dim && !(dim.getPosition() == 0 && batch == 1)))
      return false;
  }
  return filters;
}

/// The elementwise op `consumer` on a convolution's NCHW image (its bias and
/// ReLU) computed on the pixel rows' [N*OH*OW, F] `product` instead: the
/// same body over (p, f), its other operands read by filter alone, so
/// cuvil-cpu-schedule fuses it into the GEMM as its epilogue. Null where an
/// operand depends on the pixel or the body on its position or its init.
Value onMatrix(RewriterBase &rewriter, linalg::GenericOp consumer, Value image,
               Value product, int64_t batch) {
  if (!consumer.getBody()->getOps<linalg::IndexOp>().empty() ||
      !consumer.getRegionOutputArgs().front().use_empty() ||
      !llvm::all_of(consumer.getDpsInputOperands(), [&](OpOperand *input) {
        return input->get() == image ||
               isPerFilter(input->get(), consumer.getMatchingIndexingMap(input),
                           batch);
      }))
    return {};
  MLIRContext *ctx = rewriter.getContext();
  Location loc = consumer.getLoc();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input->get() == image) {
      inputs.push_back(product);
      maps.push_back(rewriter.getMultiDimIdentityMap(2));
      continue;
    }
    // All its dimensions collapsed into the filters'.
    auto type = cast<RankedTensorType>(input->get().getType());
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.front().push_back(d);
    inputs.push_back(
        rewriter.create<tensor::CollapseShapeOp>(loc, input->get(), all));
    maps.push_back(AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx));
  }
  auto type = cast<RankedTensorType>(product.getType());
  Type element = getElementTypeOrSelf(consumer.getResultTypes()[0]);
  Value empty = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), element);
  maps.push_back(rewriter.getMultiDimIdentityMap(2));
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{empty.getType()}, inputs, ValueRange{empty}, maps,
      iterators);
  rewriter.cloneRegionBefore(consumer.getRegion(), generic.getRegion(),
                             generic.getRegion().end());
  generic->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());
  return generic.getResult(0);
}

/// A convolution of a static batch with constant weights as the GEMM
/// windows [N*OH*OW, KH*KW*C] (gathered from the image made NHWC) times
/// weights [KH*KW*C, F] (reordered at compile time), its [N*OH*OW, F]
/// result transposed to [N, F, OH*OW] and expanded to NCHW. The filters are
/// whole register tiles and the weights the constant right operand packed into
/// panels once, where the filters-first GEMM's columns would end in one-vector
/// or narrower tiles.
LogicalResult pixelsAsRows(RewriterBase &rewriter,
                           linalg::Conv2DNchwFchwOp conv, Value input,
                           Value weight, linalg::FillOp fill,
                           ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations) {
  Location loc = conv.getLoc();
  Value weights = transposedWeights(rewriter, loc, weight);
  if (!weights)
    return failure();
  auto outType = cast<RankedTensorType>(conv.getResultTypes()[0]);
  Type element = outType.getElementType();
  ArrayRef<int64_t> w = cast<RankedTensorType>(weight.getType()).getShape(),
                    out = outType.getShape();
  int64_t batch = out[0], pixels = out[2] * out[3];
  Value rows = imageToColumns(rewriter, loc, channelsLast(rewriter, loc, input),
                              {batch, out[2], out[3], w[2], w[3], w[1]},
                              strides, dilations, Value(), Windows::PixelRows);
  rows = rewriter.create<tensor::CollapseShapeOp>(
      loc, rows, SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  Value product = gemm(rewriter, loc, rows, weights, {batch * pixels, w[0]},
                       fill.getDpsInputs()[0], Value());
  // The elementwise op on the image (its bias and ReLU) computed on the
  // product before the transpose: the GEMM's epilogue, on its accumulators.
  Operation *replaced = conv;
  if (linalg::GenericOp consumer =
          cuvil::cpu::elementwiseUserOf(conv.getResult(0)))
    if (Value result =
            onMatrix(rewriter, consumer, conv.getResult(0), product, batch)) {
      replaced = consumer;
      product = result;
      element = getElementTypeOrSelf(product.getType());
      outType = cast<RankedTensorType>(consumer.getResultTypes()[0]);
    }
  Value perImage = rewriter.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get({batch, pixels, w[0]}, element), product,
      SmallVector<ReassociationIndices>{{0, 1}, {2}});
  Value empty = rewriter.create<tensor::EmptyOp>(
      loc, ArrayRef<int64_t>{batch, w[0], pixels}, element);
  Value filtersFirst = rewriter
                           .create<linalg::TransposeOp>(
                               loc, perImage, empty, ArrayRef<int64_t>{0, 2, 1})
                           .getResult()
                           .front();
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      replaced, outType, filtersFirst,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  if (replaced != conv)
    rewriter.eraseOp(conv);
  // The NCHW padding, if the convolution was its only reader.
  if (auto pad = input.getDefiningOp<tensor::PadOp>(); pad && pad->use_empty())
    rewriter.eraseOp(pad);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  return success();
}

/// conv_2d_nchw_fchw(x, w) with static channels, kernel and output size:
///   batch 1:  w[F, C*KH*KW] x cols[C*KH*KW, OH*OW]        (linalg.matmul)
///   batch N:  w broadcast to N x cols[N, C*KH*KW, OH*OW]  (batch_matmul)
/// A 1x1 kernel with unit strides reads the input itself as the columns.
/// Other convolutions are left as they are.
void convToGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                int64_t vectorLanes, int64_t registerRows) {
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
  if (!ShapedType::isDynamic(batch) &&
      succeeded(cuvil::cpu::convAsImplicitGemm(rewriter, conv, fill,
                                               registerRows, vectorLanes)))
    return;
  if (!pointwise && !ShapedType::isDynamic(batch) &&
      pixelsAsRowsPay(w[0], pixels, vectorLanes) &&
      succeeded(pixelsAsRows(rewriter, conv, input, weight, fill, strides,
                             dilations)))
    return;
  Value cols = input;
  bool batched = batch != 1;
  if (batched && !pointwise && !ShapedType::isDynamic(batch))
    return batchAsColumns(rewriter, conv, input, weight, fill, strides,
                          dilations);
  // One image: its columns collapse straight to the GEMM's [K, P] operand
  // (the form cuvil-cpu-schedule computes per thread task, see
  // ConvColumns.cpp).
  SmallVector<ReassociationIndices> toMatrix = {{0}, {1}, {2, 3}};
  if (!batched)
    toMatrix = {{0, 1}, {2, 3}};
  if (!pointwise) {
    cols = imageToColumns(rewriter, loc, input,
                          {batch, w[1], w[2], w[3], out[2], out[3]}, strides,
                          dilations, batchSize);
    toMatrix = {{0}, {1, 2, 3}, {4, 5}};
    if (!batched)
      toMatrix = {{0, 1, 2, 3}, {4, 5}};
  }
  cols = rewriter.create<tensor::CollapseShapeOp>(loc, cols, toMatrix);
  Value lhs = weightOperand(rewriter, loc, weight, batched, batch, batchSize);
  SmallVector<int64_t> shape = {w[0], pixels};
  if (batched)
    shape.insert(shape.begin(), batch);
  Value product =
      gemm(rewriter, loc, lhs, cols, shape, fill.getDpsInputs()[0], batchSize);
  SmallVector<ReassociationIndices> toImage = {{0, 1}, {2, 3}};
  if (batched)
    toImage = {{0}, {1}, {2, 3}};
  auto image =
      rewriter.create<tensor::ExpandShapeOp>(loc, outType, product, toImage);
  rewriter.replaceOp(conv, image);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  collapseConsumer(rewriter, image);
}

struct CpuConvToGemmPass
    : public cuvil::impl::CpuConvToGemmBase<CpuConvToGemmPass> {
  using CpuConvToGemmBase::CpuConvToGemmBase;

  void runOnOperation() override {
    // Only the convolutions are rewritten: a greedy driver would also fold
    // and reorder the rest of the function.
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    IRRewriter rewriter(&getContext());
    int64_t lanes = vectorLanes > 0 ? vectorLanes : cuvil::hostVectorLanes();
    int64_t rows =
        registerRows != 0 ? registerRows : cuvil::registerRowsFor(lanes);
    for (linalg::Conv2DNchwFchwOp conv : convs)
      convToGemm(rewriter, conv, lanes, rows);
  }
};
} // namespace
