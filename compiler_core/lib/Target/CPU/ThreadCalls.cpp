//===- ThreadCalls.cpp - Parallel regions call Cuvil's thread pool -------===//
//
// LLVM's OpenMP builder turns each omp.parallel into a call of the variadic
// `__kmpc_fork_call` and each static loop into `__kmpc_for_static_init_*`.
// Here every such call goes through a slot the loader fills with Cuvil's
// thread pool (cuvil/Runtime/ThreadPool.h); a library loaded without it
// runs its regions serially on the calling thread.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/ThreadPool.h"
#include "cuvil/Target/CPU/CpuBackend.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"

using namespace mlir;

namespace {

/// `fork(loc, argc, microtask, args...)` becomes: the pool's
/// `cuvil_fork_call(loc, argc, microtask, array)` when loaded by Cuvil's
/// runtime, else `microtask(&0, &0, args...)` right here.
void rewriteFork(llvm::CallInst *fork, llvm::GlobalVariable *slot) {
  llvm::Function *caller = fork->getFunction();
  llvm::LLVMContext &ctx = fork->getContext();
  auto *ptrType = llvm::PointerType::get(ctx, 0);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::SmallVector<llvm::Value *> captured(fork->arg_begin() + 3,
                                            fork->arg_end());
  llvm::IRBuilder<> entry(&caller->getEntryBlock(),
                          caller->getEntryBlock().getFirstInsertionPt());
  auto *array = entry.CreateAlloca(
      ptrType, entry.getInt32(std::max<size_t>(1, captured.size())), "args");
  auto *zero = entry.CreateAlloca(i32, nullptr, "tid");

  llvm::BasicBlock *before = fork->getParent();
  llvm::BasicBlock *after = before->splitBasicBlock(fork, "fork.after");
  before->getTerminator()->eraseFromParent();
  auto *pool = llvm::BasicBlock::Create(ctx, "fork.pool", caller, after);
  auto *serial = llvm::BasicBlock::Create(ctx, "fork.serial", caller, after);
  llvm::IRBuilder<> b(before);
  llvm::Value *target = b.CreateLoad(ptrType, slot);
  b.CreateCondBr(b.CreateIsNull(target), serial, pool);

  b.SetInsertPoint(pool);
  for (auto [i, value] : llvm::enumerate(captured))
    b.CreateStore(value, b.CreateConstGEP1_32(ptrType, array, i));
  auto *forkType = llvm::FunctionType::get(
      b.getVoidTy(), {ptrType, i32, ptrType, ptrType}, false);
  b.CreateCall(forkType, target,
               {fork->getArgOperand(0), fork->getArgOperand(1),
                fork->getArgOperand(2), array});
  b.CreateBr(after);

  b.SetInsertPoint(serial);
  b.CreateStore(b.getInt32(0), zero);
  llvm::SmallVector<llvm::Value *> args = {zero, zero};
  llvm::SmallVector<llvm::Type *> types = {ptrType, ptrType};
  for (llvm::Value *value : captured) {
    args.push_back(value);
    types.push_back(value->getType());
  }
  b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), types, false),
               fork->getArgOperand(2), args);
  b.CreateBr(after);
  fork->eraseFromParent();
}

/// What a runtime function does when no pool filled its slot: a region of
/// one thread (thread 0, its loop's whole range, no barrier to wait at).
void serialBody(llvm::IRBuilder<> &b, llvm::Function &fn) {
  llvm::StringRef name = fn.getName();
  if (name == "__kmpc_global_thread_num") {
    b.CreateRet(b.getInt32(0));
    return;
  }
  if (name.starts_with("__kmpc_for_static_init")) {
    b.CreateStore(b.getInt32(1), fn.getArg(3)); // the last share: all of it
  } else if (name == "__kmpc_fork_call_if") {
    auto *ptrType = b.getPtrTy();
    llvm::Value *zero = b.CreateAlloca(b.getInt32Ty());
    b.CreateStore(b.getInt32(0), zero);
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(),
                                         {ptrType, ptrType, ptrType}, false),
                 fn.getArg(2), {zero, zero, fn.getArg(4)});
  }
  b.CreateRetVoid();
}

} // namespace

llvm::GlobalVariable *mlir::cuvil::cpu::runtimeSlot(llvm::Module &module,
                                                    llvm::StringRef function) {
  std::string name = ::cuvil::slotName(function.str());
  if (llvm::GlobalVariable *existing = module.getGlobalVariable(name))
    return existing;
  auto *ptrType = llvm::PointerType::get(module.getContext(), 0);
  return new llvm::GlobalVariable(
      module, ptrType, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(ptrType), name);
}

void mlir::cuvil::cpu::defineThroughSlot(
    llvm::Function &fn, llvm::GlobalVariable *slot,
    llvm::function_ref<void(llvm::IRBuilder<> &)> unset) {
  llvm::LLVMContext &ctx = fn.getContext();
  fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", &fn);
  auto *call = llvm::BasicBlock::Create(ctx, "call", &fn);
  auto *empty = llvm::BasicBlock::Create(ctx, "unset", &fn);
  llvm::IRBuilder<> b(entry);
  llvm::Value *target = b.CreateLoad(b.getPtrTy(), slot);
  b.CreateCondBr(b.CreateIsNull(target), empty, call);
  b.SetInsertPoint(call);
  llvm::SmallVector<llvm::Value *> args;
  for (llvm::Argument &arg : fn.args())
    args.push_back(&arg);
  llvm::Value *result = b.CreateCall(fn.getFunctionType(), target, args);
  if (fn.getReturnType()->isVoidTy())
    b.CreateRetVoid();
  else
    b.CreateRet(result);
  b.SetInsertPoint(empty);
  unset(b);
}

void mlir::cuvil::cpu::defineThreadCalls(llvm::Module &module) {
  if (llvm::Function *fork = module.getFunction("__kmpc_fork_call")) {
    llvm::GlobalVariable *slot =
        runtimeSlot(module, ::cuvil::threads::kForkFunction);
    for (llvm::User *user : llvm::make_early_inc_range(fork->users()))
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(user))
        rewriteFork(call, slot);
    if (fork->use_empty())
      fork->eraseFromParent();
  }
  for (llvm::Function &fn : module)
    if (fn.isDeclaration() &&
        ::cuvil::threads::isRuntimeFunction(fn.getName()) &&
        fn.getName() != ::cuvil::threads::kForkFunction)
      defineThroughSlot(fn, runtimeSlot(module, fn.getName()),
                        [&](llvm::IRBuilder<> &b) { serialBody(b, fn); });
}
