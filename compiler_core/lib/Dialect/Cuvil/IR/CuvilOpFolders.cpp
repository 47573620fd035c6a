//===- CuvilOpFolders.cpp - Folders of cuvil ops --------------------------===//
//
// Local folds only: identities, constant reshapes, and run-time sizes that
// turn out static. Whole-subgraph constant evaluation is a pass of its own.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::cuvil;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// True when `attr` is a splat constant equal to `value`.
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType))
    return splat.getSplatValue<APFloat>().convertToDouble() == value;
  if (elementType.isInteger(1))
    return false;
  if (isa<IntegerType>(elementType))
    return splat.getSplatValue<APInt>().getSExtValue() == (int64_t)value;
  return false;
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 -> x, only when no broadcast happens (the type is unchanged).
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 0.0))
    return getLhs();
  if (getRhs().getType() == getType() && isSplatOf(adaptor.getLhs(), 0.0))
    return getRhs();
  return {};
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 1.0))
    return getLhs();
  if (getRhs().getType() == getType() && isSplatOf(adaptor.getLhs(), 1.0))
    return getRhs();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // tensor<?x?xf32> to tensor<?x?xf32> may regroup the same elements into
  // other sizes; with one dynamic dimension the sizes follow from the count.
  if (getInput().getType() == getType() && getType().getNumDynamicDims() <= 1)
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  // reshape(reshape(x)) -> reshape(x), unless the inner reshape's sizes are
  // what tells this one's several dynamic sizes apart.
  bool derivable = !getSizes().empty() || getType().getNumDynamicDims() <= 1;
  if (auto producer = getInput().getDefiningOp<ReshapeOp>();
      producer && derivable) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  int64_t size = getInput().getType().getDimSize(getAxis());
  if (ShapedType::isDynamic(size))
    return {};
  return IntegerAttr::get(IndexType::get(getContext()), size);
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // The whole tensor: every start 0, step 1, and the same (static) type.
  if (!getDynamicLimits().empty() || getInput().getType() != getType())
    return {};
  if (llvm::any_of(getStart(), [](int64_t v) { return v != 0; }) ||
      llvm::any_of(getStep(), [](int64_t v) { return v != 1; }))
    return {};
  return getInput();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if ((int64_t)i != p)
      return {};
  return getInput();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  // Only static sizes say nothing is broadcast (a dynamic 1 may become N),
  // and a constant needs a static type.
  if (!getType().hasStaticShape())
    return {};
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

namespace {
/// `value` (of a type with more static sizes) as `type`, for the users of an
/// op whose run-time sizes became constants: a reshape that only casts.
Value castToType(PatternRewriter &rewriter, Location loc, Value value,
                 RankedTensorType type) {
  if (value.getType() == type)
    return value;
  return rewriter.create<ReshapeOp>(loc, type, value);
}

/// range with a constant limit -> the constant it computes.
struct FoldConstantRange : public OpRewritePattern<RangeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RangeOp op,
                                PatternRewriter &rewriter) const override {
    APInt limit;
    if (!matchPattern(op.getLimit(), m_ConstantInt(&limit)))
      return rewriter.notifyMatchFailure(op, "limit is not a constant");
    int64_t start = op.getStart(), step = op.getStep();
    int64_t count =
        std::max<int64_t>(0, (limit.getSExtValue() - start + step - 1) / step);
    RankedTensorType type = op.getType();
    if (!type.isDynamicDim(0) && type.getDimSize(0) != count)
      return rewriter.notifyMatchFailure(op, "limit contradicts the type");
    auto staticType = RankedTensorType::get({count}, type.getElementType());
    SmallVector<Attribute> values;
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = start + i * step;
      if (auto f = dyn_cast<FloatType>(type.getElementType()))
        values.push_back(FloatAttr::get(f, (double)v));
      else
        values.push_back(IntegerAttr::get(type.getElementType(), v));
    }
    Value constant = rewriter.create<ConstantOp>(
        op.getLoc(), staticType, DenseElementsAttr::get(staticType, values));
    rewriter.replaceOp(op, castToType(rewriter, op.getLoc(), constant, type));
    return success();
  }
};

/// A run-time slice limit that is a constant on a static dimension becomes
/// a static limit (clamped, as at run time).
struct FoldConstantSliceLimits : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> in = op.getInput().getType().getShape();
    SmallVector<int64_t> limits(op.getLimit());
    SmallVector<Value> dynamic;
    bool changed = false;
    auto operand = op.getDynamicLimits().begin();
    for (auto [d, limit] : llvm::enumerate(limits)) {
      if (!ShapedType::isDynamic(limit))
        continue;
      Value size = *operand++;
      APInt value;
      if (ShapedType::isDynamic(in[d]) ||
          !matchPattern(size, m_ConstantInt(&value)) ||
          value.getSExtValue() < op.getStart()[d]) {
        dynamic.push_back(size);
        continue;
      }
      limit = std::min(value.getSExtValue(), in[d]);
      changed = true;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no constant run-time limit");
    auto slice = rewriter.create<SliceOp>(op.getLoc(), op.getInput(), dynamic,
                                          op.getStart(), limits, op.getStep());
    rewriter.replaceOp(op,
                       castToType(rewriter, op.getLoc(), slice, op.getType()));
    return success();
  }
};

/// Reshape sizes that are constants become static sizes of the type.
struct FoldConstantReshapeSizes : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<Value> dynamic;
    auto operand = op.getSizes().begin();
    for (int64_t &size : shape) {
      if (!ShapedType::isDynamic(size) || op.getSizes().empty())
        continue;
      Value given = *operand++;
      APInt value;
      if (matchPattern(given, m_ConstantInt(&value)))
        size = value.getSExtValue();
      else
        dynamic.push_back(given);
    }
    if (dynamic.size() == op.getSizes().size())
      return rewriter.notifyMatchFailure(op, "no constant size");
    auto staticType = RankedTensorType::get(shape, type.getElementType());
    // One dynamic size left follows from the element count.
    if (dynamic.size() == 1)
      dynamic.clear();
    auto reshape = rewriter.create<ReshapeOp>(op.getLoc(), staticType,
                                              op.getInput(), dynamic);
    rewriter.replaceOp(op, castToType(rewriter, op.getLoc(), reshape, type));
    return success();
  }
};

/// pow(x, c) for a splat constant c in {1, 2, 0.5}, without broadcasting.
struct SimplifyConstantPower : public OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PowOp op,
                                PatternRewriter &rewriter) const override {
    Attribute exponent;
    if (op.getLhs().getType() != op.getType() ||
        !matchPattern(op.getRhs(), m_Constant(&exponent)))
      return rewriter.notifyMatchFailure(op, "not x ** constant");
    if (isSplatOf(exponent, 1.0)) {
      rewriter.replaceOp(op, op.getLhs());
      return success();
    }
    if (isSplatOf(exponent, 2.0)) {
      rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), op.getLhs(),
                                         op.getLhs());
      return success();
    }
    if (isSplatOf(exponent, 0.5) &&
        isa<FloatType>(op.getType().getElementType())) {
      rewriter.replaceOpWithNewOp<SqrtOp>(op, op.getType(), op.getLhs());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "exponent is not 1, 2 or 0.5");
  }
};
} // namespace

void RangeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<FoldConstantRange>(context);
}

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<FoldConstantSliceLimits>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<FoldConstantReshapeSizes>(context);
}

void PowOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<SimplifyConstantPower>(context);
}
