//===- FoldBatchNorm.cpp - The cuvil-fold-batch-norm pass -----------------===//
//
// Rewrites batch_norm(conv2d|matmul) as the contraction with scaled weights
// plus a per-channel shift, expressed in cuvil ops so constant folding can
// finish the job when the weights are constants.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
}

struct FoldIntoContraction : public OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    Operation *producer = bn.getInput().getDefiningOp();
    if (!producer || !producer->hasOneUse() ||
        !isa<Conv2dOp, MatmulOp>(producer))
      return rewriter.notifyMatchFailure(bn, "input is not a single-use "
                                             "conv2d or matmul");
    auto matmul = dyn_cast<MatmulOp>(producer);
    if (matmul && (matmul.getType().getRank() != 2 ||
                   matmul.getRhs().getType().getRank() != 2))
      return rewriter.notifyMatchFailure(bn, "matmul is not 2-D");
    if (matmul && matmul.getType().getElementType() !=
                      matmul.getLhs().getType().getElementType())
      return rewriter.notifyMatchFailure(bn, "mixed-precision matmul: its "
                                             "weights have another type");

    Location loc = rewriter.getFusedLoc({producer->getLoc(), bn.getLoc()});
    Type elementType = bn.getType().getElementType();
    auto channels = cast<RankedTensorType>(bn.getScale().getType());
    int64_t c = channels.getDimSize(0);

    // s = scale / sqrt(var + eps); shift = bias - mean * s.
    auto scalarType = RankedTensorType::get({}, elementType);
    Value eps = rewriter.create<ConstantOp>(
        loc, scalarType,
        DenseElementsAttr::get(
            scalarType, rewriter.getFloatAttr(
                            elementType, bn.getEpsilon().convertToDouble())));
    Value varEps = rewriter.create<AddOp>(loc, channels, bn.getVariance(), eps);
    Value inv = rewriter.create<RsqrtOp>(loc, channels, varEps);
    Value s = rewriter.create<MulOp>(loc, channels, bn.getScale(), inv);
    Value meanS = rewriter.create<MulOp>(loc, channels, bn.getMean(), s);
    Value shift = rewriter.create<SubOp>(loc, channels, bn.getBias(), meanS);

    Value contraction;
    if (auto conv = dyn_cast<Conv2dOp>(producer)) {
      Value weight = conv.getWeight();
      auto weightType = cast<RankedTensorType>(weight.getType());
      Value s4 = rewriter.create<ReshapeOp>(loc, withShape(s, {c, 1, 1, 1}), s);
      Value scaled = rewriter.create<MulOp>(loc, weightType, weight, s4);
      contraction = rewriter.create<Conv2dOp>(
          loc, conv.getType(), conv.getInput(), scaled, conv.getStridesAttr(),
          conv.getPaddingAttr(), conv.getDilationsAttr(), conv.getGroupsAttr());
      shift =
          rewriter.create<ReshapeOp>(loc, withShape(shift, {c, 1, 1}), shift);
    } else {
      Value weight = matmul.getRhs();
      Value scaled = rewriter.create<MulOp>(loc, weight.getType(), weight, s);
      contraction = rewriter.create<MatmulOp>(loc, matmul.getType(),
                                              matmul.getLhs(), scaled);
    }
    rewriter.replaceOpWithNewOp<AddOp>(bn, bn.getType(), contraction, shift);
    rewriter.eraseOp(producer);
    return success();
  }
};

struct FoldBatchNormPass
    : public cuvil::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoContraction>(&getContext());
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      signalPassFailure();
  }
};
} // namespace
