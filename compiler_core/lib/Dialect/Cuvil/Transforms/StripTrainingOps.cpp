//===- StripTrainingOps.cpp - The cuvil-strip-training-ops pass -----------===//
//
// Inference-mode cleanup: training-only ops are the identity at inference.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_STRIPTRAININGOPS
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {
struct StripTrainingOpsPass
    : public cuvil::impl::StripTrainingOpsBase<StripTrainingOpsPass> {
  void runOnOperation() override {
    bool changed = false;
    getOperation().walk([&](DropoutOp dropout) {
      dropout.replaceAllUsesWith(dropout.getInput());
      dropout.erase();
      changed = true;
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
