//===- MergeKernelModules.cpp - One GPU module per compilation ------------===//
//
// cuvil-cuda-merge-kernel-modules: gpu-kernel-outlining makes a gpu.module
// per kernel; this moves every kernel into one module, `cuvil_kernels`,
// renamed after the module it came from, and repoints the launches.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDAMERGEKERNELMODULES
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMergedName = "cuvil_kernels";

struct CudaMergeKernelModulesPass
    : mlir::cuvil::impl::CudaMergeKernelModulesBase<
          CudaMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
    if (sources.empty())
      return;
    if (llvm::any_of(sources, [](gpu::GPUModuleOp m) {
          return m.getName() == kMergedName;
        })) {
      module.emitError() << "a gpu.module is already called " << kMergedName;
      return signalPassFailure();
    }
    OpBuilder builder(sources.front());
    auto merged =
        builder.create<gpu::GPUModuleOp>(sources.front().getLoc(), kMergedName);
    if (auto targets = sources.front().getTargetsAttr())
      merged.setTargetsAttr(targets);
    SymbolTable mergedSymbols(merged);

    // Old (module, kernel) -> new kernel name.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp source : sources) {
      for (Operation &op : llvm::make_early_inc_range(source.getOps())) {
        if (isa<gpu::ModuleEndOp>(op))
          continue;
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op.emitError("only symbols can move between GPU modules");
          return signalPassFailure();
        }
        StringAttr oldName = symbol.getNameAttr();
        // An outlined module holds one kernel: name it after its module.
        bool isKernel =
            isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel();
        if (isKernel)
          symbol.setName(source.getName());
        op.moveBefore(merged.getBody()->getTerminator());
        StringAttr newName = mergedSymbols.insert(&op);
        if (isKernel)
          renamed[{source.getNameAttr(), oldName}] = newName;
      }
    }
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end()) {
        launch.emitError() << "launches " << kernel
                           << ", which is no outlined kernel";
        return WalkResult::interrupt();
      }
      launch.getProperties().setKernel(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp source : sources)
      source.erase();
  }
};

} // namespace
