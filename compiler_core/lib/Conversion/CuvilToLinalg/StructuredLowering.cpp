//===- StructuredLowering.cpp - contractions, reductions, data movement ---===//
//
// Matmul, convolution, pooling, reductions, normalizations and the shape ops
// of the cuvil dialect in terms of linalg named ops, generics and tensor ops.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::lowering;

namespace {

/// Broadcasts `input` to `shape` (a no-op when already there).
Value broadcastTo(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  return elementwise(b, loc, withShape(type, shape), input,
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    p *= d;
  }
  return p;
}

/// The number of elements of `x` over `axes` as a scalar of `type`: a
/// constant when static, else computed from the dynamic sizes.
Value elementCount(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                   Type type) {
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  double count = 1;
  Value dynamic;
  for (int64_t axis : axes) {
    if (!ShapedType::isDynamic(shape[axis])) {
      count *= shape[axis];
      continue;
    }
    Value size = b.create<tensor::DimOp>(loc, x, axis);
    dynamic = dynamic ? b.create<arith::MulIOp>(loc, dynamic, size) : size;
  }
  Value constant = scalarConstant(b, loc, type, count);
  if (!dynamic)
    return constant;
  Value wide =
      b.create<arith::IndexCastOp>(loc, b.getI64Type(), dynamic).getResult();
  return scalarMul(b, loc, constant, scalarConvert(b, loc, wide, type));
}

/// Map from a contraction's loops (the result dims, then K) to an operand
/// whose two trailing dims are addressed by `rows` and `cols`; its leading
/// dims broadcast against the result's batch dims NumPy-style.
AffineMap contractionMap(MLIRContext *ctx, RankedTensorType operand,
                         RankedTensorType result, AffineExpr rows,
                         AffineExpr cols) {
  unsigned rank = result.getRank();
  ArrayRef<int64_t> shape = operand.getShape().drop_back(2);
  AffineMap batch = broadcastMap(ctx, shape, result.getShape().drop_back(2));
  SmallVector<AffineExpr> exprs(batch.getResults());
  exprs.append({rows, cols});
  return AffineMap::get(rank + 1, 0, exprs, ctx);
}

/// (B..., M, K) @ ([B...,] K, N) as one generic contraction, without
/// reshapes or materialized broadcasts: the form for sizes the GEMM named
/// ops cannot take through reshapes (several dynamic batch sizes).
Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs,
               RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank(), loops = rank + 1;
  AffineExpr m = getAffineDimExpr(rank - 2, ctx),
             n = getAffineDimExpr(rank - 1, ctx),
             k = getAffineDimExpr(rank, ctx);
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<AffineMap> maps = {
      contractionMap(ctx, lhsType, resultType, m, k),
      contractionMap(ctx, rhsType, resultType, k, n),
      AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(rank)};
  auto sizes = dynamicSizes(b, loc, resultType, {lhs, rhs},
                            ArrayRef<AffineMap>(maps).take_front(2));
  assert(succeeded(sizes) && "a dynamic result size no operand provides");
  Type element = resultType.getElementType();
  Value init = filledTensor(b, loc, resultType,
                            reductionInit(b, element, ReduceKind::Sum), *sizes);
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{resultType}, ValueRange{lhs, rhs}, ValueRange{init},
          maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            // Mixed precision: operands widened to the accumulator's type.
            Value product =
                scalarMul(nb, l, scalarConvert(nb, l, a[0], element),
                          scalarConvert(nb, l, a[1], element));
            nb.create<linalg::YieldOp>(l, scalarAdd(nb, l, a[2], product));
          })
      .getResult(0);
}

/// `v` with its leading `count` dims folded into one (a view).
Value foldLeading(OpBuilder &b, Location loc, Value v, int64_t count) {
  auto type = cast<RankedTensorType>(v.getType());
  if (count == 1)
    return v;
  SmallVector<ReassociationIndices> groups = {
      llvm::to_vector(llvm::seq<int64_t>(0, count))};
  for (int64_t d = count; d < type.getRank(); ++d)
    groups.push_back({d});
  return b.create<tensor::CollapseShapeOp>(loc, v, groups);
}

/// The inverse of foldLeading: `v` unfolded into `resultType`, whose leading
/// sizes are `leading` (one entry: nothing to unfold). MLIR 19 cannot bufferize
/// an expand_shape of one size into several dynamic ones, so those unfold
/// through tensor.reshape (a view of the contiguous result too).
Value unfoldLeading(OpBuilder &b, Location loc, Value v,
                    RankedTensorType resultType,
                    ArrayRef<OpFoldResult> leading) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t count = leading.size();
  if (count == 1)
    return v;
  if (llvm::count_if(resultType.getShape().take_front(count),
                     ShapedType::isDynamic) <= 1) {
    SmallVector<ReassociationIndices> groups = {
        llvm::to_vector(llvm::seq<int64_t>(0, count))};
    for (int64_t d = count; d < resultType.getRank(); ++d)
      groups.push_back({d});
    return b.create<tensor::ExpandShapeOp>(loc, resultType, v, groups);
  }
  SmallVector<Value> shape;
  for (OpFoldResult size : leading)
    shape.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  for (int64_t d = 1; d < type.getRank(); ++d)
    shape.push_back(b.createOrFold<tensor::DimOp>(loc, v, d));
  Value shapeTensor = b.create<tensor::FromElementsOp>(loc, shape);
  return b.create<tensor::ReshapeOp>(loc, resultType, v, shapeTensor);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// A named GEMM op of `type` over `inputs`, accumulating from zero; the
/// dynamic sizes of `type` are `sizes`.
Value gemmOp(OpBuilder &b, Location loc, bool batched, RankedTensorType type,
             ValueRange inputs, ValueRange sizes) {
  TypedAttr zero = reductionInit(b, type.getElementType(), ReduceKind::Sum);
  Value init = filledTensor(b, loc, type, zero, sizes);
  if (batched)
    return b
        .create<linalg::BatchMatmulOp>(loc, TypeRange{type}, inputs,
                                       ValueRange{init})
        .getResult(0);
  return b
      .create<linalg::MatmulOp>(loc, TypeRange{type}, inputs, ValueRange{init})
      .getResult(0);
}

/// The dynamic sizes of `type`, dim d read from `sources[d]` (a value and
/// its dim): what a GEMM's tensor.empty takes.
SmallVector<Value> sizesFrom(OpBuilder &b, Location loc, RankedTensorType type,
                             ArrayRef<std::pair<Value, int64_t>> sources) {
  SmallVector<Value> sizes;
  for (auto [d, source] : llvm::enumerate(sources))
    if (type.isDynamicDim(d))
      sizes.push_back(
          b.create<tensor::DimOp>(loc, source.first, source.second));
  return sizes;
}

/// `lhs` (B..., M, K) with its batch folded into the rows, given to `gemm`,
/// and its (B*M, N) result unfolded into `resultType`.
Value overFoldedRows(OpBuilder &b, Location loc, Value lhs,
                     RankedTensorType resultType,
                     llvm::function_ref<Value(Value)> gemm) {
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> rows = {b.getIndexAttr(0)};
  if (rank > 2) {
    rows = tensor::getMixedSizes(b, loc, lhs);
    rows.pop_back();
  }
  Value result = gemm(foldLeading(b, loc, lhs, rank - 1));
  return unfoldLeading(b, loc, result, resultType, rows);
}

/// (B..., M, K) @ (K, N): the batch folded into M, one GEMM.
Value gemmOverRows(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   RankedTensorType resultType) {
  return overFoldedRows(b, loc, lhs, resultType, [&](Value folded) {
    ArrayRef<int64_t> out = resultType.getShape();
    auto gemmType =
        withShape(resultType, {product(out.drop_back()), out.back()});
    SmallVector<Value> sizes =
        sizesFrom(b, loc, gemmType, {{folded, 0}, {rhs, 1}});
    return gemmOp(b, loc, false, gemmType, {folded, rhs}, sizes);
  });
}

/// Batched operands with the result's batch dims (no broadcast): the batch
/// folded into one dim, one batch_matmul.
Value batchedGemm(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  RankedTensorType resultType) {
  int64_t batch = resultType.getRank() - 2;
  SmallVector<OpFoldResult> batchSizes = {b.getIndexAttr(0)};
  if (batch > 1) {
    batchSizes = tensor::getMixedSizes(b, loc, lhs);
    batchSizes.resize(batch);
  }
  lhs = foldLeading(b, loc, lhs, batch);
  rhs = foldLeading(b, loc, rhs, batch);
  ArrayRef<int64_t> out = resultType.getShape();
  auto bmmType = withShape(
      resultType, {product(out.drop_back(2)), out[batch], out[batch + 1]});
  SmallVector<Value> sizes =
      sizesFrom(b, loc, bmmType, {{lhs, 0}, {lhs, 1}, {rhs, 2}});
  Value bmm = gemmOp(b, loc, true, bmmType, {lhs, rhs}, sizes);
  return unfoldLeading(b, loc, bmm, resultType, batchSizes);
}

struct MatmulLowering : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    // Mixed precision: the GEMM kernel broadcasts one element of the left
    // operand per row and step; widened here, once per element (fused into
    // the kernel that produced it), it is not converted again for every use.
    Type accumulator = resultType.getElementType();
    if (isa<FloatType>(accumulator) &&
        getElementTypeOrSelf(lhs.getType()) != accumulator)
      lhs =
          elementwise(rewriter, loc,
                      cast<RankedTensorType>(lhs.getType()).clone(accumulator),
                      lhs, [&](OpBuilder &b, Location l, ValueRange a) {
                        return scalarConvert(b, l, a[0], accumulator);
                      });
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    ArrayRef<int64_t> out = resultType.getShape();
    ArrayRef<int64_t> batch = out.drop_back(2);
    if (rhsType.getRank() == 2) {
      rewriter.replaceOp(op, gemmOverRows(rewriter, loc, lhs, rhs, resultType));
      return success();
    }
    // A batch dim that broadcasts against a dynamic one: one contraction
    // reading the broadcast operand at index 0, nothing materialized.
    bool sameBatch = lhsType.getShape().drop_back(2) == batch &&
                     rhsType.getShape().drop_back(2) == batch;
    if (!resultType.hasStaticShape() && !sameBatch) {
      rewriter.replaceOp(op, contract(rewriter, loc, lhs, rhs, resultType));
      return success();
    }
    // Static broadcast batch dims are materialized, then one batch_matmul.
    int64_t m = out[out.size() - 2], n = out.back();
    int64_t k = lhsType.getShape().back();
    SmallVector<int64_t> lhsShape(batch), rhsShape(batch);
    lhsShape.append({m, k});
    rhsShape.append({k, n});
    lhs = broadcastTo(rewriter, loc, lhs, lhsShape);
    rhs = broadcastTo(rewriter, loc, rhs, rhsShape);
    rewriter.replaceOp(op, batchedGemm(rewriter, loc, lhs, rhs, resultType));
    return success();
  }
};

struct QuantizedMatmulLowering : public OpConversionPattern<QuantizedMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QuantizedMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value gemm =
        overFoldedRows(rewriter, op.getLoc(), adaptor.getInput(), op.getType(),
                       [&](Value rows) {
                         return dequantizedGemm(
                             rewriter, op.getLoc(), rows, adaptor.getPacked(),
                             adaptor.getScales(), op.getGroupSize());
                       });
    rewriter.replaceOp(op, gemm);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

template <typename OpTy, ReduceKind Kind, bool Mean = false>
struct ReduceLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value result =
        reduce(rewriter, loc, adaptor.getInput(), op.getAxes(), Kind);
    auto reducedType = cast<RankedTensorType>(result.getType());
    if (Mean) {
      Value count = elementCount(rewriter, loc, adaptor.getInput(),
                                 op.getAxes(), reducedType.getElementType());
      result = elementwise(rewriter, loc, reducedType, result,
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return scalarDiv(b, l, a[0], count);
                           });
    }
    rewriter.replaceOp(op, reshape(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// Mean over trailing/selected `axes` of `x`, broadcast back is by maps.
Value meanOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(x.getType());
  Value count = elementCount(b, loc, x, axes, type.getElementType());
  Value sum = reduce(b, loc, x, axes, ReduceKind::Sum);
  auto sumType = cast<RankedTensorType>(sum.getType());
  return elementwise(
      b, loc, sumType, sum, [&](OpBuilder &nb, Location l, ValueRange a) {
        return nb.create<arith::DivFOp>(l, a[0], count).getResult();
      });
}

struct SoftmaxLowering : public OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    int64_t axis = op.getAxis();
    unsigned rank = type.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap reduced = projectionMap(ctx, rank, {axis});
    Value x = adaptor.getInput();
    Value max = reduce(rewriter, loc, x, {axis}, ReduceKind::Max);
    Value exps = elementwiseWithMaps(
        rewriter, loc, type, ValueRange{x, max}, {identity, reduced},
        [](OpBuilder &b, Location l, ValueRange a) {
          return b
              .create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]))
              .getResult();
        });
    Value sum = reduce(rewriter, loc, exps, {axis}, ReduceKind::Sum);
    Value result = elementwiseWithMaps(
        rewriter, loc, type, ValueRange{exps, sum}, {identity, reduced},
        [](OpBuilder &b, Location l, ValueRange a) {
          return b.create<arith::DivFOp>(l, a[0], a[1]).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayerNormLowering : public OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    unsigned rank = type.getRank();
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(op.getAxis(), rank));
    SmallVector<int64_t> leading =
        llvm::to_vector(llvm::seq<int64_t>(0, op.getAxis()));
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap stats = projectionMap(ctx, rank, axes);
    AffineMap params = projectionMap(ctx, rank, leading);
    Value x = adaptor.getInput();
    Value mean = meanOver(rewriter, loc, x, axes);
    Value centered = elementwiseWithMaps(
        rewriter, loc, type, ValueRange{x, mean}, {identity, stats},
        [](OpBuilder &b, Location l, ValueRange a) {
          return b.create<arith::SubFOp>(l, a[0], a[1]).getResult();
        });
    Value squares =
        elementwise(rewriter, loc, type, centered,
                    [](OpBuilder &b, Location l, ValueRange a) {
                      return b.create<arith::MulFOp>(l, a[0], a[0]).getResult();
                    });
    Value variance = meanOver(rewriter, loc, squares, axes);
    double eps = op.getEpsilon().convertToDouble();
    Type t = type.getElementType();
    Value result = elementwiseWithMaps(
        rewriter, loc, type,
        ValueRange{centered, variance, adaptor.getGamma(), adaptor.getBeta()},
        {identity, stats, params, params},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value inv = b.create<math::RsqrtOp>(
              l,
              b.create<arith::AddFOp>(l, a[1], scalarConstant(b, l, t, eps)));
          Value norm = b.create<arith::MulFOp>(l, a[0], inv);
          return b
              .create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, norm, a[2]),
                                     a[3])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct BatchNormLowering : public OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    unsigned rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    double eps = op.getEpsilon().convertToDouble();
    Type t = type.getElementType();
    Value result = elementwiseWithMaps(
        rewriter, loc, type,
        ValueRange{adaptor.getInput(), adaptor.getScale(), adaptor.getBias(),
                   adaptor.getMean(), adaptor.getVariance()},
        {identity, channel, channel, channel, channel},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value inv = b.create<math::RsqrtOp>(
              l,
              b.create<arith::AddFOp>(l, a[4], scalarConstant(b, l, t, eps)));
          Value norm = b.create<arith::MulFOp>(
              l, b.create<arith::SubFOp>(l, a[0], a[3]), inv);
          return b
              .create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, norm, a[1]),
                                     a[2])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

/// Reshapes whose dynamic sizes follow from the input collapse or expand
/// (lowering::reshape); several given sizes unfold through tensor.reshape
/// with the shape they spell (a view of a contiguous input, else a copy).
struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!dynamicSizeRefusal(op).empty())
      return rewriter.notifyMatchFailure(op, dynamicSizeRefusal(op));
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    if (adaptor.getSizes().empty() || type.getNumDynamicDims() <= 1 ||
        onlyForgetsSizes(cast<RankedTensorType>(adaptor.getInput().getType()),
                         type)) {
      rewriter.replaceOp(op, reshape(rewriter, loc, adaptor.getInput(), type));
      return success();
    }
    SmallVector<Value> shape;
    auto given = adaptor.getSizes().begin();
    for (int64_t size : type.getShape())
      shape.push_back(
          ShapedType::isDynamic(size)
              ? *given++
              : rewriter.create<arith::ConstantIndexOp>(loc, size).getResult());
    Value shapeTensor = rewriter.create<tensor::FromElementsOp>(loc, shape);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, type, adaptor.getInput(),
                                                   shapeTensor);
    return success();
  }
};

struct TransposeLowering : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> sizes;
    for (auto [d, p] : llvm::enumerate(op.getPermutation()))
      if (op.getType().isDynamicDim(d))
        sizes.push_back(
            rewriter.create<tensor::DimOp>(op.getLoc(), adaptor.getInput(), p));
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType(), sizes);
    rewriter.replaceOp(
        op, rewriter
                .create<linalg::TransposeOp>(op.getLoc(), adaptor.getInput(),
                                             init, op.getPermutation())
                .getResult());
    return success();
  }
};

/// Inserts each input at its running offset along the axis; dynamic sizes
/// and offsets are read from the inputs at run time.
struct ConcatLowering : public OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t axis = op.getAxis(), rank = type.getRank();
    ValueRange inputs = adaptor.getInputs();
    auto add = [&](OpFoldResult l, OpFoldResult r) -> OpFoldResult {
      std::optional<int64_t> a = getConstantIntValue(l),
                             c = getConstantIntValue(r);
      if (a && c)
        return rewriter.getIndexAttr(*a + *c);
      if (a == 0)
        return r;
      return rewriter
          .create<arith::AddIOp>(
              loc, getValueOrCreateConstantIndexOp(rewriter, loc, l),
              getValueOrCreateConstantIndexOp(rewriter, loc, r))
          .getResult();
    };
    // The offset of each input along the axis; the last is the total.
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0)};
    for (Value input : inputs)
      offsets.push_back(add(offsets.back(),
                            tensor::getMixedSize(rewriter, loc, input, axis)));
    // Outside the axis every input has the result's size; a dynamic one is
    // dynamic in every input (a static size would have made it static).
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(
            d == axis
                ? getValueOrCreateConstantIndexOp(rewriter, loc, offsets.back())
                : rewriter.create<tensor::DimOp>(loc, inputs.front(), d));
    Value result = emptyTensor(rewriter, loc, type, sizes);
    for (auto [i, input] : llvm::enumerate(inputs)) {
      SmallVector<OpFoldResult> at(rank, rewriter.getIndexAttr(0));
      at[axis] = offsets[i];
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, input, result, at, tensor::getMixedSizes(rewriter, loc, input),
          strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// max(0, ceil((limit - start) / step)): how many of start, start + step,
/// ... lie below `limit` (an index). Clamped before dividing, so a plain
/// division of non-negatives rounds up (arith.ceildivsi has no LLVM lowering
/// without arith-expand).
Value countBelow(OpBuilder &b, Location loc, Value limit, int64_t start,
                 int64_t step) {
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  Value extent = b.create<arith::SubIOp>(loc, limit, index(start));
  extent = b.create<arith::MaxSIOp>(loc, extent, index(0));
  if (step == 1)
    return extent;
  Value rounded = b.create<arith::AddIOp>(loc, extent, index(step - 1));
  return b.create<arith::DivUIOp>(loc, rounded, index(step));
}

/// tensor.extract_slice; a run-time limit is clamped to the dimension and
/// its size is ceil((limit - start) / step), at least 0.
struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t v : op.getStart())
      offsets.push_back(rewriter.getIndexAttr(v));
    for (int64_t v : op.getStep())
      strides.push_back(rewriter.getIndexAttr(v));
    auto limit = adaptor.getDynamicLimits().begin();
    for (auto [d, size] : llvm::enumerate(op.getType().getShape())) {
      if (!ShapedType::isDynamic(op.getLimit()[d])) {
        sizes.push_back(rewriter.getIndexAttr(size));
        continue;
      }
      Value dim =
          rewriter.createOrFold<tensor::DimOp>(loc, adaptor.getInput(), d);
      Value clamped = rewriter.create<arith::MinSIOp>(loc, *limit++, dim);
      sizes.push_back(countBelow(rewriter, loc, clamped, op.getStart()[d],
                                 op.getStep()[d]));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct DimLowering : public OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::DimOp>(op, adaptor.getInput(),
                                               op.getAxis());
    return success();
  }
};

/// A parallel generic writing start + i * step over max(0, ceil((limit -
/// start) / step)) elements.
struct RangeLowering : public OpConversionPattern<RangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t start = op.getStart(), step = op.getStep();
    SmallVector<Value> sizes;
    if (type.isDynamicDim(0))
      sizes.push_back(
          countBelow(rewriter, loc, adaptor.getLimit(), start, step));
    Value init = emptyTensor(rewriter, loc, type, sizes);
    MLIRContext *ctx = rewriter.getContext();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = b.create<linalg::IndexOp>(l, 0);
          Value scaled = b.create<arith::MulIOp>(
              l, i, b.create<arith::ConstantIndexOp>(l, step));
          Value v = b.create<arith::AddIOp>(
              l, scaled, b.create<arith::ConstantIndexOp>(l, start));
          Value wide = b.create<arith::IndexCastOp>(l, b.getI64Type(), v);
          b.create<linalg::YieldOp>(
              l, scalarConvert(b, l, wide, type.getElementType()));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// A generic over the result reading one index per point and extracting the
/// element it addresses; negative indices wrap once and the rest are clamped
/// into the axis, so no index reads outside `data`.
struct GatherLowering : public OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    int64_t axis = op.getAxis();
    int64_t indexRank = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t dataRank = cast<RankedTensorType>(data.getType()).getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> indexDims;
    for (int64_t d = 0; d < indexRank; ++d)
      indexDims.push_back(getAffineDimExpr(axis + d, ctx));
    AffineMap indexMap = AffineMap::get(type.getRank(), 0, indexDims, ctx);
    Value size = rewriter.createOrFold<tensor::DimOp>(loc, data, axis);
    // The result's dims: data's before the axis, the indices', data's after.
    SmallVector<Value> resultSizes;
    for (int64_t r = 0; r < type.getRank(); ++r) {
      if (!type.isDynamicDim(r))
        continue;
      bool fromIndices = r >= axis && r < axis + indexRank;
      resultSizes.push_back(rewriter.createOrFold<tensor::DimOp>(
          loc, fromIndices ? indices : data,
          fromIndices ? r - axis : (r < axis ? r : r - indexRank + 1)));
    }
    Value result = elementwiseWithMaps(
        rewriter, loc, type, indices, {indexMap},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value zero = b.create<arith::ConstantIndexOp>(l, 0);
          Value one = b.create<arith::ConstantIndexOp>(l, 1);
          Value i = b.create<arith::IndexCastOp>(l, b.getIndexType(), a[0]);
          Value negative =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, i, zero);
          Value wrapped = b.create<arith::SelectOp>(
              l, negative, b.create<arith::AddIOp>(l, i, size), i);
          Value last = b.create<arith::SubIOp>(l, size, one);
          Value clamped = b.create<arith::MaxSIOp>(
              l, b.create<arith::MinSIOp>(l, wrapped, last), zero);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < axis; ++d)
            coords.push_back(b.create<linalg::IndexOp>(l, d));
          coords.push_back(clamped);
          for (int64_t d = axis + 1; d < dataRank; ++d)
            coords.push_back(b.create<linalg::IndexOp>(l, d - 1 + indexRank));
          return b.create<tensor::ExtractOp>(l, data, coords).getResult();
        },
        resultSizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lowering::populateStructuredPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, QuantizedMatmulLowering, SoftmaxLowering,
               LayerNormLowering, BatchNormLowering, ReshapeLowering,
               TransposeLowering, ConcatLowering, SliceLowering, GatherLowering,
               DimLowering, RangeLowering,
               ReduceLowering<ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<ReduceMeanOp, ReduceKind::Sum, true>,
               ReduceLowering<ReduceMaxOp, ReduceKind::Max>,
               ReduceLowering<ReduceMinOp, ReduceKind::Min>>(
      patterns.getContext());
}

//===----------------------------------------------------------------------===//
// What stays refused with dynamic sizes
//===----------------------------------------------------------------------===//

static std::string shapeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string lowering::dynamicSizeRefusal(Operation *op) {
  if (auto reshapeOp = dyn_cast<ReshapeOp>(op)) {
    RankedTensorType in = reshapeOp.getInput().getType(),
                     out = reshapeOp.getType();
    // A grouping the types fix gives every dynamic size; without one a flat
    // count gives a single unknown size, never several.
    bool regroups = (in.getRank() > out.getRank()
                         ? reshapeGroups(in, out, /*expanding=*/false)
                         : reshapeGroups(out, in, /*expanding=*/true))
                        .has_value();
    if (out.getNumDynamicDims() > 1 && !regroups &&
        !onlyForgetsSizes(in, out) && reshapeOp.getSizes().empty())
      return "reshaping " + shapeText(in) + " into " + shapeText(out) +
             " leaves open which input dimensions make up each dynamic "
             "result dimension (a flat size cannot be split into several "
             "unknown ones, and dynamic sizes can be grouped in more than "
             "one way); give the result's dynamic sizes as index operands "
             "(cuvil.dim of the tensors they come from) or reshape in steps "
             "that keep the dynamic dimensions whole";
  }
  return "";
}
