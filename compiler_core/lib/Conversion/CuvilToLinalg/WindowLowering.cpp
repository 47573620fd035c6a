//===- WindowLowering.cpp - convolution and pooling over NCHW tensors -----===//
//
// Conv2d and 2-D pooling as linalg named ops. Batch, channels and spatial
// sizes may be dynamic: each dynamic result size is computed from the padded
// input (or the weights) at run time, so one compilation serves every image
// size.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::lowering;

namespace {

/// Pads the two trailing dims of an NCHW tensor by (top, left, bottom, right);
/// a dynamic size stays dynamic.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> padding, TypedAttr padValue) {
  if (llvm::all_of(padding, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> low = {0, 0, padding[0], padding[1]};
  SmallVector<int64_t> high = {0, 0, padding[2], padding[3]};
  SmallVector<int64_t> shape(type.getShape());
  for (int d : {2, 3})
    if (!ShapedType::isDynamic(shape[d]))
      shape[d] += low[d] + high[d];
  Value pad = b.create<arith::ConstantOp>(loc, padValue);
  SmallVector<OpFoldResult> lowOfr, highOfr;
  for (int64_t v : low)
    lowOfr.push_back(b.getIndexAttr(v));
  for (int64_t v : high)
    highOfr.push_back(b.getIndexAttr(v));
  return b.create<tensor::PadOp>(loc, withShape(type, shape), input, lowOfr,
                                 highOfr, pad);
}

/// A window op's geometry: the padded NCHW input, where the output channels
/// come from, the kernel extents (attribute or weight sizes), strides and
/// dilations.
struct Window {
  Value padded;
  Value channels;
  int64_t channelDim;
  SmallVector<OpFoldResult> kernel;
  SmallVector<int64_t, 2> strides, dilations;
};

/// The sizes of `resultType`'s dynamic dims: batch from the input, channels
/// from `w.channels`, and each spatial size
/// (padded - dilation * (kernel - 1) - 1) / stride + 1.
SmallVector<Value> windowResultSizes(OpBuilder &b, Location loc,
                                     RankedTensorType resultType,
                                     const Window &w) {
  SmallVector<Value> sizes;
  if (resultType.isDynamicDim(0))
    sizes.push_back(b.create<tensor::DimOp>(loc, w.padded, 0));
  if (resultType.isDynamicDim(1))
    sizes.push_back(b.create<tensor::DimOp>(loc, w.channels, w.channelDim));
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  for (int64_t d : {0, 1}) {
    if (!resultType.isDynamicDim(2 + d))
      continue;
    // The extent one window covers: dilation * (kernel - 1) + 1.
    Value extent;
    if (std::optional<int64_t> k = getConstantIntValue(w.kernel[d])) {
      extent = index(w.dilations[d] * (*k - 1) + 1);
    } else {
      Value kernel = getValueOrCreateConstantIndexOp(b, loc, w.kernel[d]);
      extent = b.create<arith::AddIOp>(
          loc,
          b.create<arith::MulIOp>(
              loc, index(w.dilations[d]),
              b.create<arith::SubIOp>(loc, kernel, index(1))),
          index(1));
    }
    Value in = b.create<tensor::DimOp>(loc, w.padded, 2 + d);
    Value steps = b.create<arith::DivSIOp>(
        loc, b.create<arith::SubIOp>(loc, in, extent), index(w.strides[d]));
    sizes.push_back(b.create<arith::AddIOp>(loc, steps, index(1)));
  }
  return sizes;
}

struct Conv2dLowering : public OpConversionPattern<Conv2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    TypedAttr zero = reductionInit(rewriter, elementType, ReduceKind::Sum);
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(), zero);
    Value weight = adaptor.getWeight();
    Window window{input,
                  weight,
                  0,
                  {tensor::getMixedSize(rewriter, loc, weight, 2),
                   tensor::getMixedSize(rewriter, loc, weight, 3)},
                  SmallVector<int64_t, 2>(op.getStrides()),
                  SmallVector<int64_t, 2>(op.getDilations())};
    SmallVector<Value> sizes =
        windowResultSizes(rewriter, loc, resultType, window);
    auto strides = rewriter.getI64TensorAttr(op.getStrides());
    auto dilations = rewriter.getI64TensorAttr(op.getDilations());
    int64_t groups = op.getGroups();
    if (groups == 1) {
      Value init = filledTensor(rewriter, loc, resultType, zero, sizes);
      rewriter.replaceOp(op, rewriter
                                 .create<linalg::Conv2DNchwFchwOp>(
                                     loc, TypeRange{resultType},
                                     ValueRange{input, weight},
                                     ValueRange{init}, strides, dilations)
                                 .getResult(0));
      return success();
    }
    // Grouped: split channels into (G, C/G) and use the NGCHW form. Each
    // split group holds one size of the channel dim, so dynamic batch and
    // spatial sizes pass through the reshapes unchanged.
    auto inType = cast<RankedTensorType>(input.getType());
    auto wType = cast<RankedTensorType>(weight.getType());
    auto split = [&](int64_t size) {
      return ShapedType::isDynamic(size) ? size : size / groups;
    };
    ArrayRef<int64_t> in = inType.getShape(), w = wType.getShape(),
                      out = resultType.getShape();
    Value groupedIn =
        reshape(rewriter, loc, input,
                withShape(inType, {in[0], groups, split(in[1]), in[2], in[3]}));
    Value groupedW =
        reshape(rewriter, loc, weight,
                withShape(wType, {groups, split(w[0]), w[1], w[2], w[3]}));
    auto groupedOut =
        withShape(resultType, {out[0], groups, split(out[1]), out[2], out[3]});
    Value init = filledTensor(rewriter, loc, groupedOut, zero, sizes);
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

/// Pooling `source` padded with `padValue` into a new result filled with
/// `init` (the window is a shape-only operand of the named op).
template <typename PoolOp, typename OpTy>
Value pool(OpBuilder &b, Location loc, OpTy op, Value source,
           TypedAttr padValue, TypedAttr init) {
  RankedTensorType resultType = op.getType();
  Value padded = padSpatial(b, loc, source, op.getPadding(), padValue);
  Window window{padded,
                padded,
                1,
                getAsIndexOpFoldResult(b.getContext(), op.getKernel()),
                SmallVector<int64_t, 2>(op.getStrides()),
                {1, 1}};
  Value filled = filledTensor(b, loc, resultType, init,
                              windowResultSizes(b, loc, resultType, window));
  Value shape = b.create<tensor::EmptyOp>(loc, op.getKernel(),
                                          resultType.getElementType());
  return b
      .create<PoolOp>(loc, TypeRange{resultType}, ValueRange{padded, shape},
                      ValueRange{filled}, b.getI64TensorAttr(op.getStrides()),
                      b.getI64TensorAttr({1, 1}))
      .getResult(0);
}

struct MaxPool2dLowering : public OpConversionPattern<MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TypedAttr lowest =
        reductionInit(rewriter, op.getType().getElementType(), ReduceKind::Max);
    rewriter.replaceOp(
        op, pool<linalg::PoolingNchwMaxOp>(rewriter, op.getLoc(), op,
                                           adaptor.getInput(), lowest, lowest));
    return success();
  }
};

struct AvgPool2dLowering : public OpConversionPattern<AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    TypedAttr zero = reductionInit(rewriter, elementType, ReduceKind::Sum);
    auto sumPool = [&](Value source) {
      return pool<linalg::PoolingNchwSumOp>(rewriter, loc, op, source, zero,
                                            zero);
    };
    Value input = adaptor.getInput();
    Value sums = sumPool(input);
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
      auto inType = cast<RankedTensorType>(input.getType());
      SmallVector<Value> inSizes;
      for (int64_t d = 0; d < inType.getRank(); ++d)
        if (inType.isDynamicDim(d))
          inSizes.push_back(rewriter.create<tensor::DimOp>(loc, input, d));
      Value ones =
          filledTensor(rewriter, loc, inType,
                       rewriter.getFloatAttr(elementType, 1.0), inSizes);
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

} // namespace

void lowering::populateWindowPatterns(RewritePatternSet &patterns) {
  patterns.add<Conv2dLowering, MaxPool2dLowering, AvgPool2dLowering>(
      patterns.getContext());
}
