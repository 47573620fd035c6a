//===- WasmToLLVM.cpp - Loop-level IR to the LLVM dialect for wasm32 ------===//
//
// cuvil-wasm-to-llvm: MLIR's conversions to the LLVM dialect in one pass
// with one type converter, so that every `index` becomes i32 (upstream's
// convert-vector-to-llvm fixes index at 64 bits) and memref arguments are
// bare pointers.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/Wasm/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_WASMTOLLVM
#include "cuvil/Target/Wasm/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// wasm32's pointer width, and so its index width.
constexpr unsigned kIndexBits = 32;

/// Lowers vector ops LLVM has no counterpart for (contractions, transposes,
/// broadcasts, shape casts, masks, rank > 1 and out-of-bounds transfers) to
/// ones it has.
LogicalResult lowerVectorOps(ModuleOp module) {
  MLIRContext *context = module.getContext();
  RewritePatternSet patterns(context);
  vector::VectorTransformsOptions options;
  vector::populateVectorToVectorCanonicalizationPatterns(patterns);
  vector::populateVectorBitCastLoweringPatterns(patterns);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorContractLoweringPatterns(patterns, options);
  vector::populateVectorMaskOpLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorInterleaveLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(patterns, options);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  // Transfers that may run past their buffer's end get a mask (then become
  // masked loads and stores), while their sources are still memrefs.
  vector::populateVectorMaskMaterializationPatterns(
      patterns, /*force32BitVectorIndices=*/true);
  return applyPatternsAndFoldGreedily(module, std::move(patterns));
}

/// Bare pointers carry no sizes: every memref argument must be static.
LogicalResult checkStaticArguments(ModuleOp module) {
  WalkResult result = module.walk([](func::FuncOp func) {
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = dyn_cast<MemRefType>(type);
      if (memref && !memref.hasStaticShape()) {
        func.emitError() << "the wasm target compiles static shapes only, and "
                            "argument "
                         << i << " of @" << func.getSymName() << " has type "
                         << type
                         << "; fix: compile with static input shapes, or use "
                            "target='cpu' for dynamic ones";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct WasmToLLVMPass : cuvil::impl::WasmToLLVMBase<WasmToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (failed(checkStaticArguments(module)) || failed(lowerVectorOps(module)))
      return signalPassFailure();

    LowerToLLVMOptions options(context);
    options.overrideIndexBitwidth(kIndexBits);
    options.useBarePtrCallConv = true;
    LLVMTypeConverter converter(context, options);
    RewritePatternSet patterns(context);
    populateVectorToLLVMMatrixConversionPatterns(converter, patterns);
    populateVectorToLLVMConversionPatterns(converter, patterns,
                                           /*reassociateFPReductions=*/false,
                                           /*force32BitVectorIndices=*/true);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);

    LLVMConversionTarget target(*context);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // What no pattern converted (casts between converted values go with
    // reconcile-unrealized-casts).
    WalkResult left = module.walk([](Operation *op) {
      if (isa<ModuleOp, UnrealizedConversionCastOp>(op) ||
          isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError() << "the wasm target cannot lower '" << op->getName()
                      << "' to WebAssembly; fix: compile this function for "
                         "target='cpu' or 'c'";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
