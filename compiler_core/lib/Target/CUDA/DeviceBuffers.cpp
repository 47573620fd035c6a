//===- DeviceBuffers.cpp - A host function's buffers in GPU memory --------===//
//
// cuvil-cuda-device-buffers: after bufferization, every buffer the host
// function allocates moves to the GPU (gpu.alloc/gpu.dealloc, which the
// runtime serves from its device pool on the call's stream), and copies
// between buffers become linalg.copy so they turn into kernels.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDADEVICEBUFFERS
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CudaDeviceBuffersPass
    : mlir::cuvil::impl::CudaDeviceBuffersBase<CudaDeviceBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Launch sizes and the runtime's copies are computed from static shapes.
    for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto shaped = dyn_cast<ShapedType>(type);
      if (shaped && !shaped.hasStaticShape()) {
        func.emitError() << "the cuda target compiles static shapes only, and "
                         << "argument " << index << " of @" << func.getSymName()
                         << " has type " << type
                         << "; fix: compile with static input shapes, or use "
                            "target='cpu' for dynamic ones";
        return signalPassFailure();
      }
    }
    IRRewriter rewriter(func.getContext());
    SmallVector<Operation *> work;
    func.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
        work.push_back(op);
    });
    for (Operation *op : work) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!alloc.getSymbolOperands().empty()) {
          alloc.emitError("a buffer with symbolic layout operands cannot be "
                          "placed in GPU memory");
          return signalPassFailure();
        }
        // No alignment attribute: device allocations are 256-byte aligned.
        auto device = rewriter.create<gpu::AllocOp>(
            alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
            /*symbolOperands=*/ValueRange(), /*hostShared=*/false);
        rewriter.replaceOp(alloc, device.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        rewriter.create<gpu::DeallocOp>(dealloc.getLoc(), /*asyncToken=*/Type(),
                                        ValueRange(), dealloc.getMemref());
        rewriter.eraseOp(dealloc);
      } else {
        auto copy = cast<memref::CopyOp>(op);
        rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                    copy.getTarget());
      }
    }
  }
};

} // namespace
