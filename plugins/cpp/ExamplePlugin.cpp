//===- ExamplePlugin.cpp - An out-of-tree Cuvil pass plugin ---------------===//
//
// The plugin contract: export mlirGetPassPluginInfo, register passes in its
// callback, and refer to cuvil ops by name (the dialect's classes live in
// the host, not in the plugin).
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Config/llvm-config.h"

namespace cuvil_example {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_FOLDDOUBLENEGATION
#include "Passes.h.inc"
} // namespace cuvil_example

using namespace mlir;

namespace {

struct FoldNegNeg : public RewritePattern {
  explicit FoldNegNeg(MLIRContext *ctx)
      : RewritePattern("cuvil.neg", /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Operation *inner = op->getOperand(0).getDefiningOp();
    if (!inner || inner->getName().getStringRef() != "cuvil.neg")
      return rewriter.notifyMatchFailure(op, "operand is not a cuvil.neg");
    rewriter.replaceOp(op, inner->getOperand(0));
    return success();
  }
};

struct FoldDoubleNegationPass
    : public cuvil_example::impl::FoldDoubleNegationBase<
          FoldDoubleNegationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldNegNeg>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "CuvilExamplePlugin", LLVM_VERSION_STRING,
          [] { PassRegistration<FoldDoubleNegationPass>(); }};
}
