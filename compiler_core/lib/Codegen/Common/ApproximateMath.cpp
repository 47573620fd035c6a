//===- ApproximateMath.cpp - The cuvil-approximate-math pass --------------===//
//
// MLIR's polynomial approximations of transcendental functions, so that
// vectorized kernels evaluate exp/tanh/erf/log with vector arithmetic
// instead of one libm call per lane.
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
struct ApproximateMathPass
    : public cuvil::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
