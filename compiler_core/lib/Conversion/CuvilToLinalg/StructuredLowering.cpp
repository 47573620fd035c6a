//===- StructuredLowering.cpp - contractions, reductions, data movement ---===//
//
// Matmul, convolution, pooling, reductions, normalizations and the shape ops
// of the cuvil dialect in terms of linalg named ops, generics and tensor ops.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::lowering;

namespace {

RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

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

/// Whether `op`'s operands and result are all static (ops whose lowering
/// needs static sizes check it).
bool allStatic(Operation *op) {
  auto isStatic = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return !tensor || tensor.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

/// (B..., M, K) @ (K, N) as one generic contraction, without reshapes.
Value contractLastDim(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank(), loops = rank + 1;
  SmallVector<AffineExpr> lhsExprs, outExprs;
  for (unsigned d = 0; d + 1 < rank; ++d)
    lhsExprs.push_back(getAffineDimExpr(d, ctx));
  lhsExprs.push_back(getAffineDimExpr(rank, ctx));
  for (unsigned d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(loops, 0, lhsExprs, ctx),
      AffineMap::get(
          loops, 0,
          {getAffineDimExpr(rank, ctx), getAffineDimExpr(rank - 1, ctx)}, ctx),
      AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<Value> sizes;
  for (unsigned d = 0; d + 1 < rank; ++d)
    if (resultType.isDynamicDim(d))
      sizes.push_back(b.create<tensor::DimOp>(loc, lhs, d));
  if (resultType.isDynamicDim(rank - 1))
    sizes.push_back(b.create<tensor::DimOp>(loc, rhs, 1));
  Type element = resultType.getElementType();
  Value init = filledTensor(b, loc, resultType,
                            reductionInit(b, element, ReduceKind::Sum), sizes);
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{resultType}, ValueRange{lhs, rhs}, ValueRange{init},
          maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value product = scalarMul(nb, l, a[0], a[1]);
            nb.create<linalg::YieldOp>(l, scalarAdd(nb, l, a[2], product));
          })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulLowering : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    auto lhsType = cast<RankedTensorType>(adaptor.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
    // Dynamic sizes: the GEMM form (batch folded into M) only.
    if (!allStatic(op) && rhsType.getRank() != 2)
      return rewriter.notifyMatchFailure(op, "dynamic batched matmul");
    Type elementType = resultType.getElementType();
    TypedAttr zero = reductionInit(rewriter, elementType, ReduceKind::Sum);
    ArrayRef<int64_t> out = resultType.getShape();
    int64_t m = out[out.size() - 2], n = out.back();
    int64_t k = lhsType.getShape().back();

    // Several dynamic sizes among (B..., M): MLIR 19 cannot bufferize an
    // expand of one size into several dynamic ones, so contract in place.
    if (rhsType.getRank() == 2 &&
        llvm::count_if(out.drop_back(), ShapedType::isDynamic) > 1) {
      rewriter.replaceOp(op, contractLastDim(rewriter, loc, adaptor.getLhs(),
                                             adaptor.getRhs(), resultType));
      return success();
    }

    // (B..., M, K) @ (K, N): fold the batch into M and use one GEMM.
    if (rhsType.getRank() == 2) {
      int64_t rows = product(out.drop_back());
      Value lhs = reshape(rewriter, loc, adaptor.getLhs(),
                          withShape(lhsType, {rows, k}));
      auto gemmType = withShape(resultType, {rows, n});
      SmallVector<Value> sizes;
      if (ShapedType::isDynamic(rows))
        sizes.push_back(rewriter.create<tensor::DimOp>(loc, lhs, 0));
      if (ShapedType::isDynamic(n))
        sizes.push_back(
            rewriter.create<tensor::DimOp>(loc, adaptor.getRhs(), 1));
      Value init = filledTensor(rewriter, loc, gemmType, zero, sizes);
      Value gemm = rewriter
                       .create<linalg::MatmulOp>(
                           loc, TypeRange{gemmType},
                           ValueRange{lhs, adaptor.getRhs()}, ValueRange{init})
                       .getResult(0);
      rewriter.replaceOp(op, reshape(rewriter, loc, gemm, resultType));
      return success();
    }

    // General batched case: broadcast the batch dims, collapse them to one.
    ArrayRef<int64_t> batch = out.drop_back(2);
    int64_t batchSize = product(batch);
    SmallVector<int64_t> lhsShape(batch), rhsShape(batch);
    lhsShape.append({m, k});
    rhsShape.append({k, n});
    Value lhs = broadcastTo(rewriter, loc, adaptor.getLhs(), lhsShape);
    Value rhs = broadcastTo(rewriter, loc, adaptor.getRhs(), rhsShape);
    lhs = reshape(rewriter, loc, lhs, withShape(lhsType, {batchSize, m, k}));
    rhs = reshape(rewriter, loc, rhs, withShape(rhsType, {batchSize, k, n}));
    auto bmmType = withShape(resultType, {batchSize, m, n});
    Value init = filledTensor(rewriter, loc, bmmType, zero);
    Value bmm = rewriter
                    .create<linalg::BatchMatmulOp>(loc, TypeRange{bmmType},
                                                   ValueRange{lhs, rhs},
                                                   ValueRange{init})
                    .getResult(0);
    rewriter.replaceOp(op, reshape(rewriter, loc, bmm, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Pads the two trailing dims of an NCHW tensor by (top, left, bottom, right).
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> padding, TypedAttr padValue) {
  if (llvm::all_of(padding, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> low = {0, 0, padding[0], padding[1]};
  SmallVector<int64_t> high = {0, 0, padding[2], padding[3]};
  SmallVector<int64_t> shape(type.getShape());
  shape[2] += padding[0] + padding[2];
  shape[3] += padding[1] + padding[3];
  Value pad = b.create<arith::ConstantOp>(loc, padValue);
  SmallVector<OpFoldResult> lowOfr, highOfr;
  for (int64_t v : low)
    lowOfr.push_back(b.getIndexAttr(v));
  for (int64_t v : high)
    highOfr.push_back(b.getIndexAttr(v));
  return b.create<tensor::PadOp>(loc, withShape(type, shape), input, lowOfr,
                                 highOfr, pad);
}

struct Conv2dLowering : public OpConversionPattern<Conv2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!allStatic(op))
      return rewriter.notifyMatchFailure(op, "dynamic sizes");
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    TypedAttr zero = reductionInit(rewriter, elementType, ReduceKind::Sum);
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(), zero);
    auto strides = rewriter.getI64TensorAttr(op.getStrides());
    auto dilations = rewriter.getI64TensorAttr(op.getDilations());
    int64_t groups = op.getGroups();
    if (groups == 1) {
      Value init = filledTensor(rewriter, loc, resultType, zero);
      rewriter.replaceOp(op, rewriter
                                 .create<linalg::Conv2DNchwFchwOp>(
                                     loc, TypeRange{resultType},
                                     ValueRange{input, adaptor.getWeight()},
                                     ValueRange{init}, strides, dilations)
                                 .getResult(0));
      return success();
    }
    // Grouped: split channels into (G, C/G) and use the NGCHW form.
    auto inType = cast<RankedTensorType>(input.getType());
    auto wType = cast<RankedTensorType>(adaptor.getWeight().getType());
    ArrayRef<int64_t> in = inType.getShape(), w = wType.getShape(),
                      out = resultType.getShape();
    Value groupedIn = reshape(
        rewriter, loc, input,
        withShape(inType, {in[0], groups, in[1] / groups, in[2], in[3]}));
    Value groupedW =
        reshape(rewriter, loc, adaptor.getWeight(),
                withShape(wType, {groups, w[0] / groups, w[1], w[2], w[3]}));
    auto groupedOut = withShape(
        resultType, {out[0], groups, out[1] / groups, out[2], out[3]});
    Value init = filledTensor(rewriter, loc, groupedOut, zero);
    Value conv =
        rewriter
            .create<linalg::Conv2DNgchwGfchwOp>(
                loc, TypeRange{groupedOut}, ValueRange{groupedIn, groupedW},
                ValueRange{init}, strides, dilations)
            .getResult(0);
    rewriter.replaceOp(op, reshape(rewriter, loc, conv, resultType));
    return success();
  }
};

struct MaxPool2dLowering : public OpConversionPattern<MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!allStatic(op))
      return rewriter.notifyMatchFailure(op, "dynamic sizes");
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    TypedAttr lowest =
        reductionInit(rewriter, resultType.getElementType(), ReduceKind::Max);
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(), lowest);
    Value window = rewriter.create<tensor::EmptyOp>(
        loc, op.getKernel(), resultType.getElementType());
    Value init = filledTensor(rewriter, loc, resultType, lowest);
    rewriter.replaceOp(op, rewriter
                               .create<linalg::PoolingNchwMaxOp>(
                                   loc, TypeRange{resultType},
                                   ValueRange{input, window}, ValueRange{init},
                                   rewriter.getI64TensorAttr(op.getStrides()),
                                   rewriter.getI64TensorAttr({1, 1}))
                               .getResult(0));
    return success();
  }
};

struct AvgPool2dLowering : public OpConversionPattern<AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!allStatic(op))
      return rewriter.notifyMatchFailure(op, "dynamic sizes");
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    TypedAttr zero = reductionInit(rewriter, elementType, ReduceKind::Sum);
    auto strides = rewriter.getI64TensorAttr(op.getStrides());
    auto dilations = rewriter.getI64TensorAttr({1, 1});
    Value window =
        rewriter.create<tensor::EmptyOp>(loc, op.getKernel(), elementType);
    auto sumPool = [&](Value source) {
      Value padded = padSpatial(rewriter, loc, source, op.getPadding(), zero);
      Value init = filledTensor(rewriter, loc, resultType, zero);
      return rewriter
          .create<linalg::PoolingNchwSumOp>(
              loc, TypeRange{resultType}, ValueRange{padded, window},
              ValueRange{init}, strides, dilations)
          .getResult(0);
    };
    Value sums = sumPool(adaptor.getInput());
    Value result;
    if (op.getCountIncludePad()) {
      double count = op.getKernel()[0] * op.getKernel()[1];
      result =
          elementwise(rewriter, loc, resultType, sums,
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        return b.create<arith::DivFOp>(
                            l, a[0], scalarConstant(b, l, elementType, count));
                      });
    } else {
      // Divide by the number of real (unpadded) elements in each window.
      auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
      Value ones = filledTensor(rewriter, loc, inType,
                                rewriter.getFloatAttr(elementType, 1.0));
      Value counts = sumPool(ones);
      result = elementwise(
          rewriter, loc, resultType, ValueRange{sums, counts},
          [](OpBuilder &b, Location l, ValueRange a) {
            return b.create<arith::DivFOp>(l, a[0], a[1]).getResult();
          });
    }
    rewriter.replaceOp(op, result);
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

struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType in = op.getInput().getType(), out = op.getType();
    // An expanded group's sizes follow from its source only with at most one
    // dynamic size among them.
    bool collapses = in.getRank() > out.getRank() &&
                     getReassociationIndicesForReshape(in, out);
    if (out.getNumDynamicDims() > 1 && !collapses)
      return rewriter.notifyMatchFailure(
          op, "reshape into several dynamic dimensions");
    rewriter.replaceOp(
        op, reshape(rewriter, op.getLoc(), adaptor.getInput(), op.getType()));
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

struct ConcatLowering : public OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!allStatic(op))
      return rewriter.notifyMatchFailure(op, "dynamic sizes");
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t axis = op.getAxis();
    Value result = emptyTensor(rewriter, loc, type);
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      auto inType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), rewriter.getIndexAttr(1));
      for (int64_t d : inType.getShape())
        sizes.push_back(rewriter.getIndexAttr(d));
      offsets[axis] = rewriter.getIndexAttr(offset);
      result = rewriter.create<tensor::InsertSliceOp>(loc, input, result,
                                                      offsets, sizes, strides);
      offset += inType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t v : op.getStart())
      offsets.push_back(rewriter.getIndexAttr(v));
    for (int64_t v : op.getType().getShape())
      sizes.push_back(rewriter.getIndexAttr(v));
    for (int64_t v : op.getStep())
      strides.push_back(rewriter.getIndexAttr(v));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), adaptor.getInput(), offsets, sizes, strides);
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
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lowering::populateStructuredPatterns(RewritePatternSet &patterns) {
  patterns
      .add<MatmulLowering, Conv2dLowering, MaxPool2dLowering, AvgPool2dLowering,
           SoftmaxLowering, LayerNormLowering, BatchNormLowering,
           ReshapeLowering, TransposeLowering, ConcatLowering, SliceLowering,
           GatherLowering, ReduceLowering<ReduceSumOp, ReduceKind::Sum>,
           ReduceLowering<ReduceMeanOp, ReduceKind::Sum, true>,
           ReduceLowering<ReduceMaxOp, ReduceKind::Max>,
           ReduceLowering<ReduceMinOp, ReduceKind::Min>>(patterns.getContext());
}
