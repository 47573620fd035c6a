//===- DeviceConstants.cpp - Kernels read constants from device memory ----===//
//
// cuvil-cuda-device-constants: in host code lowered to the LLVM dialect,
// the address of a constant global (a weight, a table) becomes the address
// of its device copy, which the runtime makes on the first use and keeps
// while the code is loaded.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/CudaRuntimeAbi.h"
#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDADEVICECONSTANTS
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CudaDeviceConstantsPass
    : mlir::cuvil::impl::CudaDeviceConstantsBase<CudaDeviceConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    SymbolTable symbols(module);
    const DataLayout &layout = DataLayout::closest(module);
    LLVM::LLVMFuncOp upload;

    SmallVector<LLVM::AddressOfOp> uses;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      func.walk([&](LLVM::AddressOfOp op) {
        auto global = symbols.lookup<LLVM::GlobalOp>(op.getGlobalName());
        if (global && global.getConstant())
          uses.push_back(op);
      });
    if (uses.empty())
      return;
    OpBuilder builder(ctx);
    builder.setInsertionPointToEnd(module.getBody());
    upload = builder.create<LLVM::LLVMFuncOp>(
        module.getLoc(), ::cuvil::cuda::kConstantFunction,
        LLVM::LLVMFunctionType::get(ptrType, {ptrType, i64}));
    for (LLVM::AddressOfOp op : uses) {
      auto global = symbols.lookup<LLVM::GlobalOp>(op.getGlobalName());
      uint64_t bytes = layout.getTypeSize(global.getType());
      builder.setInsertionPointAfter(op);
      Value size = builder.create<LLVM::ConstantOp>(
          op.getLoc(), i64, builder.getI64IntegerAttr(bytes));
      auto call = builder.create<LLVM::CallOp>(
          op.getLoc(), upload, ValueRange{op.getResult(), size});
      op.getResult().replaceAllUsesExcept(call.getResult(), call);
    }
  }
};

} // namespace
