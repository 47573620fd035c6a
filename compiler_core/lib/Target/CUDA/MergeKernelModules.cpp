//===- MergeKernelModules.cpp - One GPU module per compilation ------------===//
//
// cuvil-cuda-merge-kernel-modules: gpu-kernel-outlining makes a gpu.module
// per kernel; this moves every kernel into one module, `cuvil_kernels`,
// renamed after the module it came from, and repoints the launches; its
// shared memory is aligned to 16 bytes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDAMERGEKERNELMODULES
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMergedName = "cuvil_kernels";

/// `cuvil.kernels` on `func`: [name, location] of each kernel it launches,
/// in order (the profiler's kernel table, as cuvil-instrument-kernels
/// records it on the CPU), named after what cuvil-tag-kernels recorded for
/// the launch's location.
void recordKernelTable(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  llvm::DenseMap<Location, StringAttr> tagged =
      mlir::cuvil::taggedKernelNames(func);
  SmallVector<Attribute> table;
  func.walk([&](gpu::LaunchFuncOp launch) {
    Location loc = launch.getLoc();
    StringAttr name = tagged.lookup(loc);
    if (!name)
      name = StringAttr::get(ctx, "gpu kernel");
    table.push_back(ArrayAttr::get(ctx, {name, loc}));
  });
  if (!table.empty())
    func->setAttr(mlir::cuvil::CuvilDialect::KernelsAttrHelper::getNameStr(),
                  ArrayAttr::get(ctx, table));
}

/// Shared memory 16-byte aligned: vector accesses and ldmatrix (each row
/// address 16-byte aligned) need it, an array's own alignment is its
/// element's.
void alignSharedMemory(gpu::GPUFuncOp func) {
  Builder b(func.getContext());
  for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i)
    func.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(16));
}

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

    // Each kernel is named after the host function launching it and its
    // place in that function's kernel table, `<function>_k<N>`: the runtime
    // reads N off the name to report the launch as kernel N.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, std::string> names;
    for (auto func : module.getOps<func::FuncOp>()) {
      int index = 0;
      func.walk([&](gpu::LaunchFuncOp launch) {
        SymbolRefAttr kernel = launch.getKernel();
        names[{kernel.getRootReference(), kernel.getLeafReference()}] =
            (func.getSymName() + "_k" + Twine(index++)).str();
      });
    }
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
        auto key = std::make_pair(source.getNameAttr(), oldName);
        bool isKernel = isa<gpu::GPUFuncOp>(op) &&
                        cast<gpu::GPUFuncOp>(op).isKernel() && names.count(key);
        if (isKernel)
          symbol.setName(names[key]);
        if (auto func = dyn_cast<gpu::GPUFuncOp>(op))
          alignSharedMemory(func);
        op.moveBefore(merged.getBody()->getTerminator());
        StringAttr newName = mergedSymbols.insert(&op);
        if (isKernel)
          renamed[key] = newName;
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
    for (auto func : module.getOps<func::FuncOp>())
      recordKernelTable(func);
  }
};

} // namespace
