//===- CuvilOpFolders.cpp - Folders of cuvil ops
//---------------------------===//
//
// Local folds only: identities and constant reshapes. Whole-subgraph constant
// evaluation is a pass of its own.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

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
  // reshape(reshape(x)) -> reshape(x)
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
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

void PowOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<SimplifyConstantPower>(context);
}
