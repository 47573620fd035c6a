//===- ApproximateMath.cpp - The cuvil-approximate-math pass --------------===//
//
// MLIR's polynomial approximations of transcendental functions, so that
// vectorized kernels evaluate exp/tanh/erf/log with vector arithmetic
// instead of one libm call per lane. MLIR's exp and log take floats apart
// by their exponent bits, which is wrong for subnormals (log(1e-45) gave
// -87.3 instead of -103.3; exp flushed subnormal results to 0): Cuvil first
// rescales those arguments into the normal range, like libm does, and
// reduces sin/cos arguments to one turn in double precision.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Marks the exp/log/sin/cos a pattern here built, so it is not rewritten
/// again.
constexpr llvm::StringLiteral kRescaled = "cuvil.rescaled";

/// Whether `op` is an f32 (scalar or vector) math op not yet rescaled.
bool needsRescaling(Operation *op) {
  return getElementTypeOrSelf(op->getResultTypes()[0]).isF32() &&
         !op->hasAttr(kRescaled);
}

/// A constant of `type` (a float or a vector of floats) holding `value`.
Value constant(PatternRewriter &rewriter, Location loc, Type type,
               double value) {
  auto scalar = rewriter.getFloatAttr(getElementTypeOrSelf(type), value);
  if (auto vector = dyn_cast<VectorType>(type))
    return rewriter.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(vector, scalar.getValue()));
  return rewriter.create<arith::ConstantOp>(loc, scalar);
}

// 2^24: multiplying a subnormal by it (or a result by its inverse) is exact
// up to the final rounding, and brings every subnormal into normal range.
constexpr float kScale = 16777216.0f;
constexpr float kScaleLog = 16.6355323f; // 24 * ln(2)
constexpr float kSmallestNormal = 1.17549435e-38f;
// Below this, expf's result is subnormal (ln(FLT_MIN) = -87.3365).
constexpr float kExpSubnormalBound = -87.0f;

/// `OpTy(argument)`, marked so that the patterns here leave it alone.
template <typename OpTy>
OpTy createMarked(PatternRewriter &rewriter, Location loc, Value argument) {
  auto op = rewriter.create<OpTy>(loc, argument);
  op->setAttr(kRescaled, rewriter.getUnitAttr());
  return op;
}

/// Replaces `op(x)` by `select(cond, fixResult(op(arg)), op(arg))` with
/// `arg = select(cond, fixedArgument, x)`; the new op is marked rescaled.
template <typename OpTy>
void replaceRescaled(OpTy op, PatternRewriter &rewriter, Value cond,
                     Value fixedArgument,
                     llvm::function_ref<Value(Value)> fixResult) {
  Location loc = op.getLoc();
  Value argument = rewriter.create<arith::SelectOp>(loc, cond, fixedArgument,
                                                    op.getOperand());
  auto inner = createMarked<OpTy>(rewriter, loc, argument);
  rewriter.replaceOpWithNewOp<arith::SelectOp>(op, cond, fixResult(inner),
                                               inner);
}

/// log(x) for subnormal x as log(x * 2^24) - 24 ln 2.
struct RescaleSubnormalLog : OpRewritePattern<math::LogOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::LogOp op,
                                PatternRewriter &rewriter) const override {
    if (!needsRescaling(op))
      return failure();
    Location loc = op.getLoc();
    Type type = op.getType();
    Value x = op.getOperand();
    Value positive = rewriter.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OGT, x, constant(rewriter, loc, type, 0.0f));
    Value belowNormal = rewriter.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OLT, x,
        constant(rewriter, loc, type, kSmallestNormal));
    Value subnormal =
        rewriter.create<arith::AndIOp>(loc, positive, belowNormal);
    Value scaled = rewriter.create<arith::MulFOp>(
        loc, x, constant(rewriter, loc, type, kScale));
    replaceRescaled(op, rewriter, subnormal, scaled, [&](Value log) -> Value {
      return rewriter.create<arith::SubFOp>(
          loc, log, constant(rewriter, loc, type, kScaleLog));
    });
    return success();
  }
};

/// exp(x) with a subnormal result as exp(x + 24 ln 2) * 2^-24.
struct RescaleSubnormalExp : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!needsRescaling(op))
      return failure();
    Location loc = op.getLoc();
    Type type = op.getType();
    Value x = op.getOperand();
    Value small = rewriter.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OLT, x,
        constant(rewriter, loc, type, kExpSubnormalBound));
    Value shifted = rewriter.create<arith::AddFOp>(
        loc, x, constant(rewriter, loc, type, kScaleLog));
    replaceRescaled(op, rewriter, small, shifted, [&](Value exp) -> Value {
      return rewriter.create<arith::MulFOp>(
          loc, exp, constant(rewriter, loc, type, 1.0f / kScale));
    });
    return success();
  }
};

/// sin/cos of an f32 `x` as sin/cos(x - 2 pi k), k = round(x / 2 pi), with
/// the reduction in f64. MLIR's approximation reduces by pi/2 held in one
/// f32, which loses about 4e-8 per half turn: 3e-6 at |x| = 100, more than
/// float32 tolerances allow for positional encodings.
template <typename OpTy>
struct ReduceTrigonometricRange : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!needsRescaling(op))
      return failure();
    Location loc = op.getLoc();
    Type type = op.getType();
    Type wide = rewriter.getF64Type();
    if (auto vector = dyn_cast<VectorType>(type))
      wide = vector.clone(wide);
    constexpr double kTwoPi = 6.283185307179586476925;
    Value x = rewriter.create<arith::ExtFOp>(loc, wide, op.getOperand());
    Value turns = rewriter.create<math::RoundEvenOp>(
        loc, rewriter.create<arith::MulFOp>(
                 loc, x, constant(rewriter, loc, wide, 1.0 / kTwoPi)));
    Value reduced = rewriter.create<arith::SubFOp>(
        loc, x,
        rewriter.create<arith::MulFOp>(loc, turns,
                                       constant(rewriter, loc, wide, kTwoPi)));
    Value narrow = rewriter.create<arith::TruncFOp>(loc, type, reduced);
    rewriter.replaceOp(op, createMarked<OpTy>(rewriter, loc, narrow));
    return success();
  }
};

/// erf(x) for f32 as x P(x^2) / Q(x^2) on x clamped to [-3.92, 3.92]
/// (beyond, erf rounds to +-1 in f32), P of degree 6 and Q of degree 4: a
/// rational fit to erf on [0, 3.92] (Sanathanan-Koerner iterations on
/// Chebyshev nodes, then a few Lawson steps), within 4.9e-8 of erf in
/// exact arithmetic and 3.5e-7 evaluated in f32 (MLIR's: 2.5e-7). MLIR's
/// approximation picks one of three polynomials per lane, each of its
/// coefficients a select between three constants: a GELU's erf cost four
/// times a tanh, 13% of the time of the GEMM it ends (256x512x2048).
struct RationalErf : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF32())
      return failure();
    static constexpr double kBound = 3.92;
    static constexpr double kP[] = {
        1.128378764e+00, 2.046156145e-01,  5.119188908e-02, 3.914091570e-03,
        1.479839290e-04, -1.998716781e-06, 2.009022562e-08};
    static constexpr double kQ[] = {1.000000000e+00, 5.146645197e-01,
                                    1.169400195e-01, 1.476168939e-02,
                                    1.011364183e-03};
    Location loc = op.getLoc();
    Type type = op.getType();
    auto c = [&](double value) { return constant(rewriter, loc, type, value); };
    // minimumf/maximumf propagate NaN: erf(NaN) stays NaN.
    auto clamp = [&](Value v, double bound) -> Value {
      Value low = rewriter.create<arith::MaximumFOp>(loc, v, c(-bound));
      return rewriter.create<arith::MinimumFOp>(loc, low, c(bound));
    };
    auto horner = [&](Value t, ArrayRef<double> coefficients) -> Value {
      Value sum = c(coefficients.back());
      for (double coefficient : llvm::reverse(coefficients.drop_back()))
        sum = rewriter.create<math::FmaOp>(loc, sum, t, c(coefficient));
      return sum;
    };
    Value x = clamp(op.getOperand(), kBound);
    Value t = rewriter.create<arith::MulFOp>(loc, x, x);
    Value p = rewriter.create<arith::MulFOp>(loc, x, horner(t, kP));
    Value ratio = rewriter.create<arith::DivFOp>(loc, p, horner(t, kQ));
    rewriter.replaceOp(op, clamp(ratio, 1.0));
    return success();
  }
};

struct ApproximateMathPass
    : public cuvil::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet rescaling(&getContext());
    rescaling.add<RescaleSubnormalLog, RescaleSubnormalExp,
                  ReduceTrigonometricRange<math::SinOp>,
                  ReduceTrigonometricRange<math::CosOp>, RationalErf>(
        &getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(rescaling))))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
