//===- InstrumentKernels.cpp - The cuvil-instrument-kernels pass ----------===//
//
// Brackets each kernel of an entry function with calls through a hook table
// passed as a trailing argument. Profiling off means a null table: one
// compare per kernel, no call.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_INSTRUMENTKERNELS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
/// Ops that do the work of a kernel; everything else at the top level
/// (constants, views, allocations) is bookkeeping.
bool isKernelOp(Operation *op) {
  return op->getNumRegions() > 0 || isa<linalg::LinalgOp, memref::CopyOp>(op);
}

/// Emits `if (on) hooks->fn(hooks->ctx, kernel, phase)`, where `on` is
/// the function's one `hooks != null` test.
void emitHookCall(OpBuilder &b, Location loc, Value hooks, Value on,
                  int32_t kernel, int32_t phase) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type();
  auto guard = b.create<scf::IfOp>(loc, on, /*withElseRegion=*/false);
  OpBuilder then = guard.getThenBodyBuilder();
  Value fn = then.create<LLVM::LoadOp>(loc, ptr, hooks);
  Value ctxSlot =
      then.create<LLVM::GEPOp>(loc, ptr, ptr, hooks, ArrayRef<LLVM::GEPArg>{1});
  Value context = then.create<LLVM::LoadOp>(loc, ptr, ctxSlot);
  Value id = then.create<LLVM::ConstantOp>(loc, i32, kernel);
  Value when = then.create<LLVM::ConstantOp>(loc, i32, phase);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          {ptr, i32, i32});
  then.create<LLVM::CallOp>(loc, type, ValueRange{fn, context, id, when});
}

struct InstrumentKernelsPass
    : public cuvil::impl::InstrumentKernelsBase<InstrumentKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    Builder b(ctx);

    // Names recorded by cuvil-tag-kernels, by location; the attribute has
    // served its purpose whether or not this function is instrumented.
    DenseMap<Location, StringAttr> names = mlir::cuvil::taggedKernelNames(func);
    func->removeAttr(
        mlir::cuvil::CuvilDialect::KernelNamesAttrHelper::getNameStr());
    if (func.isDeclaration() || !func->hasAttr("llvm.emit_c_interface") ||
        func->hasAttr(
            mlir::cuvil::CuvilDialect::KernelsAttrHelper::getNameStr()))
      return;

    // Consecutive kernel ops from one location are one kernel.
    struct Kernel {
      Operation *first, *last;
      Location loc;
    };
    SmallVector<Kernel> kernels;
    for (Block &block : func.getBody())
      for (Operation &op : block) {
        if (!isKernelOp(&op))
          continue;
        if (!kernels.empty() && kernels.back().loc == op.getLoc() &&
            kernels.back().last->getBlock() == &block)
          kernels.back().last = &op;
        else
          kernels.push_back({&op, &op, op.getLoc()});
      }

    auto ptr = LLVM::LLVMPointerType::get(ctx);
    unsigned index = func.getNumArguments();
    func.insertArgument(index, ptr, {}, func.getLoc());
    Value hooks = func.getArgument(index);
    Value on;
    if (!kernels.empty()) {
      OpBuilder entry = OpBuilder::atBlockBegin(&func.getBody().front());
      Value null = entry.create<LLVM::ZeroOp>(func.getLoc(), ptr);
      on = entry.create<LLVM::ICmpOp>(func.getLoc(), LLVM::ICmpPredicate::ne,
                                      hooks, null);
    }

    SmallVector<Attribute> table;
    for (auto [id, kernel] : llvm::enumerate(kernels)) {
      // Named after its own location first, then whatever was fused or
      // tiled into it (an epilogue's GEMM, say).
      llvm::SetVector<StringAttr> parts;
      if (StringAttr own = names.lookup(kernel.loc))
        parts.insert(own);
      for (Operation *op = kernel.first;; op = op->getNextNode()) {
        op->walk([&](Operation *nested) {
          if (StringAttr part = names.lookup(nested->getLoc()))
            parts.insert(part);
        });
        if (op == kernel.last)
          break;
      }
      std::string text;
      for (StringAttr part : parts)
        text += (text.empty() ? "" : " + ") + part.str();
      StringAttr name = b.getStringAttr(
          text.empty() ? kernel.first->getName().getStringRef() : text);
      table.push_back(b.getArrayAttr({name, kernel.loc}));
      OpBuilder before(kernel.first);
      emitHookCall(before, kernel.loc, hooks, on, id, 0);
      OpBuilder after(ctx);
      after.setInsertionPointAfter(kernel.last);
      emitHookCall(after, kernel.loc, hooks, on, id, 1);
    }
    func->setAttr(mlir::cuvil::CuvilDialect::KernelsAttrHelper::getNameStr(),
                  b.getArrayAttr(table));
  }
};
} // namespace
