//===- ExpandBf16Conversions.cpp - bf16 conversions as integer ops --------===//
//
// cuvil-expand-bf16-conversions: without AVX512-BF16 (a Zen 3, most AVX2
// machines), LLVM lowers a float32 -> bfloat16 truncation to a call of
// compiler-rt's __truncsfbf2, one element at a time, which the shared
// libraries the cpu target builds do not link: their load failed with an
// undefined symbol. MLIR's bf16 expansion computes both conversions with
// integer ops (a shift for the extension; a rounding bias, a shift and a
// NaN select for round-to-nearest-even truncation) that vectorize on any
// host.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
struct ExpandBf16ConversionsPass
    : public cuvil::impl::ExpandBf16ConversionsBase<ExpandBf16ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
