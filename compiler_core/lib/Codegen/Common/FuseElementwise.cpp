//===- FuseElementwise.cpp - The cuvil-fuse-elementwise pass --------------===//
//
// Producer-consumer fusion of elementwise linalg.generic ops, restricted to
// single-use producers so no work is recomputed. A producer whose payload
// reads no input (a constant broadcast like a dynamic tensor) stays apart
// from a reduction: fused, the reduction's body would read no input either, and
// MLIR 19's vectorizer then drops the reduced dimension (summing a ?x20
// tensor of ones over its rows gave 1 instead of 20).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
/// Whether `op`'s payload reads no run-time input: only constants (a splat
/// broadcast) and inputs that give nothing but the shape.
bool readsNoInput(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return false;
  return llvm::all_of(linalgOp.getDpsInputOperands(), [&](OpOperand *input) {
    return !linalgOp.payloadUsesValueFromOperand(input) ||
           matchPattern(input->get(), m_Constant());
  });
}

struct FuseElementwisePass
    : public cuvil::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          if (!producer || !producer->hasOneUse())
            return false;
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          // A quantized GEMM's dequantization is fused by the CPU schedule,
          // a group of rows at a time; fused here it would be recomputed for
          // every row of the activation.
          if (consumer &&
              consumer->hasAttr(
                  cuvil::CuvilDialect::DequantizedGemmAttrHelper::getNameStr()))
            return false;
          return !(consumer && consumer.getNumReductionLoops() > 0 &&
                   readsNoInput(producer));
        });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
