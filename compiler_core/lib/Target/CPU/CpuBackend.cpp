//===- CpuBackend.cpp - LLVM code generation for the host CPU -------------===//
//
// Translation to LLVM IR, its optimization, object/assembly emission and
// shared-library linking.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/CpuBackend.h"
#include "SplitCodegen.h"
#include "cuvil/Runtime/MemRefCall.h"
#include "cuvil/Runtime/MemoryPool.h"
#include "cuvil/Runtime/SharedLibrary.h"
#include "cuvil/Target/LLVMCodegen.h"
#include "cuvil/Target/TargetSupport.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

#ifndef CUVIL_LLVM_LIB_DIR
#define CUVIL_LLVM_LIB_DIR "/usr/lib/llvm-19/lib"
#endif

using namespace mlir;
using namespace mlir::cuvil;

void cpu::initializeTargets(DialectRegistry &registry) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)initialized;
  registerAllToLLVMIRTranslations(registry);
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
cpu::createHostTargetMachine(bool positionIndependent) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (positionIndependent)
    builder->setRelocationModel(llvm::Reloc::PIC_);
  return builder->createTargetMachine();
}

std::string cpu::hostDescription() {
  std::string text =
      llvm::sys::getProcessTriple() + " " + llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (const char *name : {"avx512f", "avx2", "fma"})
    if (features.lookup(name))
      text += std::string(" +") + name;
  return text;
}

/// `module` translated to LLVM IR for `tm`, completed with the runtime's
/// functions and optimized: what every artifact is emitted from.
static llvm::Expected<std::unique_ptr<llvm::Module>>
optimizedModule(ModuleOp module, llvm::LLVMContext &context,
                llvm::TargetMachine &tm, llvm::StringRef packedEntry,
                cpu::FinishModule finish, bool forObjects) {
  auto llvmModule = translateToLLVMIR(module, context, tm, /*optimize=*/false,
                                      /*constantsAsBytes=*/forObjects);
  if (!llvmModule)
    return llvmModule.takeError();
  if (!packedEntry.empty())
    if (llvm::Error e = cpu::addPackedInterface(**llvmModule, packedEntry))
      return std::move(e);
  cpu::defineAllocationFunctions(**llvmModule);
  cpu::defineSizeMismatchFunction(**llvmModule);
  if (finish)
    finish(**llvmModule);
  // A GEMM's fill of its accumulator tile is a store loop per row, which
  // LLVM's idiom recognition turns into one memset call per row (64 calls of
  // 1 KB for a 64x256 tile): a tenth of a 64x128x512 GEMM's time went to
  // them. The stores stay vector stores.
  for (llvm::Function &f : **llvmModule)
    if (!f.isDeclaration())
      f.addFnAttr("no-builtin-memset");
  if (llvm::Error e = optimizeLLVMIR(**llvmModule, tm))
    return std::move(e);
  // After the optimizer: its OpenMP passes know what __kmpc_fork_call does
  // with the outlined region (an indirect call through a slot, it ran the
  // regions' GEMMs 20-50% slower).
  cpu::defineThreadCalls(**llvmModule);
  return llvmModule;
}

llvm::Error cpu::emitArtifact(ModuleOp module, Artifact kind, std::string &out,
                              llvm::StringRef packedEntry,
                              FinishModule finish) {
  auto tm = createHostTargetMachine(/*positionIndependent=*/true);
  if (!tm)
    return tm.takeError();
  llvm::LLVMContext context;
  auto llvmModule = optimizedModule(module, context, **tm, packedEntry, finish,
                                    kind == Artifact::Object);
  if (!llvmModule)
    return llvmModule.takeError();
  if (kind == Artifact::LLVMIR) {
    out.clear();
    llvm::raw_string_ostream os(out);
    (*llvmModule)->print(os, nullptr);
    return llvm::Error::success();
  }
  return emitMachineCode(**llvmModule, **tm, kind == Artifact::Assembly, out);
}

llvm::Error cpu::addPackedInterface(llvm::Module &module,
                                    llvm::StringRef name) {
  std::string target = ("_mlir_ciface_" + name).str();
  llvm::Function *callee = module.getFunction(target);
  if (!callee)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no function %s", target.c_str());
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::get(ctx, 0);
  auto *wrapper = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrType}, false),
      llvm::GlobalValue::ExternalLinkage, "_mlir_" + target, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::Value *args = wrapper->getArg(0);
  llvm::SmallVector<llvm::Value *> values;
  for (auto [i, arg] : llvm::enumerate(callee->args())) {
    llvm::Value *slot = builder.CreateLoad(
        ptrType, builder.CreateConstGEP1_64(ptrType, args, i));
    values.push_back(builder.CreateLoad(arg.getType(), slot));
  }
  llvm::Value *result = builder.CreateCall(callee, values);
  if (!callee->getReturnType()->isVoidTy()) {
    llvm::Value *slot = builder.CreateLoad(
        ptrType, builder.CreateConstGEP1_64(ptrType, args, values.size()));
    builder.CreateStore(result, slot);
  }
  builder.CreateRetVoid();
  return llvm::Error::success();
}

/// The pointer global `name` the runtime fills when it loads the code (null
/// until then): how compiled code reaches the runtime's failure handlers.
static llvm::GlobalVariable *handlerSlot(llvm::Module &module,
                                         llvm::StringRef name) {
  auto *ptrType = llvm::PointerType::get(module.getContext(), 0);
  return new llvm::GlobalVariable(
      module, ptrType, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(ptrType), name);
}

/// Calls the hook in pointer global `slot` with `args` when it is set:
/// returns the call's value (or null when unset and the hook returns one).
static llvm::Value *callHookIfSet(llvm::IRBuilder<> &b, llvm::Function *fn,
                                  llvm::GlobalVariable *slot,
                                  llvm::FunctionType *type,
                                  llvm::ArrayRef<llvm::Value *> args) {
  llvm::LLVMContext &ctx = fn->getContext();
  auto *ptrType = llvm::PointerType::get(ctx, 0);
  llvm::Value *hook = b.CreateLoad(ptrType, slot);
  auto *call = llvm::BasicBlock::Create(ctx, "hook", fn);
  auto *after = llvm::BasicBlock::Create(ctx, "after.hook", fn);
  llvm::BasicBlock *from = b.GetInsertBlock();
  b.CreateCondBr(b.CreateIsNull(hook), after, call);
  b.SetInsertPoint(call);
  llvm::Value *result = b.CreateCall(type, hook, args);
  b.CreateBr(after);
  b.SetInsertPoint(after);
  if (type->getReturnType()->isVoidTy())
    return nullptr;
  llvm::PHINode *phi = b.CreatePHI(type->getReturnType(), 2);
  phi->addIncoming(llvm::Constant::getNullValue(type->getReturnType()), from);
  phi->addIncoming(result, call);
  return phi;
}

/// `_mlir_memref_to_llvm_alloc`: the active memory pool first (the runtime's
/// hook), then malloc; a failed malloc calls the failure handler.
static void defineAllocate(llvm::Function *alloc) {
  llvm::Module &module = *alloc->getParent();
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::get(ctx, 0);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *voidType = llvm::Type::getVoidTy(ctx);
  llvm::GlobalVariable *failureSlot =
      handlerSlot(module, ::cuvil::kAllocationFailureHandlerSymbol);
  llvm::GlobalVariable *poolSlot =
      handlerSlot(module, ::cuvil::kPoolAllocateSymbol);
  llvm::FunctionCallee malloc = module.getOrInsertFunction(
      "malloc", llvm::FunctionType::get(ptrType, {i64}, false));
  alloc->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::Value *bytes = alloc->getArg(0);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", alloc));
  llvm::Value *pooled =
      callHookIfSet(b, alloc, poolSlot,
                    llvm::FunctionType::get(ptrType, {i64}, false), {bytes});
  auto *fromPool = llvm::BasicBlock::Create(ctx, "pooled", alloc);
  auto *fromMalloc = llvm::BasicBlock::Create(ctx, "malloc", alloc);
  b.CreateCondBr(b.CreateIsNull(pooled), fromMalloc, fromPool);
  b.SetInsertPoint(fromPool);
  b.CreateRet(pooled);
  b.SetInsertPoint(fromMalloc);
  llvm::Value *ptr = b.CreateCall(malloc, {bytes});
  // malloc(0) may return null without failing.
  llvm::Value *isFailure =
      b.CreateAnd(b.CreateIsNull(ptr), b.CreateICmpNE(bytes, b.getInt64(0)));
  auto *failed = llvm::BasicBlock::Create(ctx, "failed", alloc);
  auto *done = llvm::BasicBlock::Create(ctx, "done", alloc);
  b.CreateCondBr(isFailure, failed, done);
  b.SetInsertPoint(failed);
  callHookIfSet(b, alloc, failureSlot,
                llvm::FunctionType::get(voidType, {i64}, false), {bytes});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRet(ptr);
}

/// `_mlir_memref_to_llvm_free`: pool memory is the pool's (the runtime's
/// release hook says so); the rest goes to free.
static void defineRelease(llvm::Function *release) {
  llvm::Module &module = *release->getParent();
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::get(ctx, 0);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *voidType = llvm::Type::getVoidTy(ctx);
  llvm::GlobalVariable *poolSlot =
      handlerSlot(module, ::cuvil::kPoolReleaseSymbol);
  llvm::FunctionCallee free = module.getOrInsertFunction(
      "free", llvm::FunctionType::get(voidType, {ptrType}, false));
  release->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::Value *ptr = release->getArg(0);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", release));
  llvm::Value *owned =
      callHookIfSet(b, release, poolSlot,
                    llvm::FunctionType::get(i32, {ptrType}, false), {ptr});
  auto *freeIt = llvm::BasicBlock::Create(ctx, "free", release);
  auto *done = llvm::BasicBlock::Create(ctx, "done", release);
  b.CreateCondBr(b.CreateICmpNE(owned, b.getInt32(0)), done, freeIt);
  b.SetInsertPoint(freeIt);
  b.CreateCall(free, {ptr});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

void cpu::defineAllocationFunctions(llvm::Module &module) {
  llvm::Function *alloc = module.getFunction("_mlir_memref_to_llvm_alloc");
  if (alloc && alloc->isDeclaration())
    defineAllocate(alloc);
  llvm::Function *release = module.getFunction("_mlir_memref_to_llvm_free");
  if (release && release->isDeclaration())
    defineRelease(release);
}

void cpu::defineSizeMismatchFunction(llvm::Module &module) {
  llvm::Function *report = module.getFunction("cuvil_result_size_mismatch");
  if (!report || !report->isDeclaration())
    return;
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::get(ctx, 0);
  auto *voidType = llvm::Type::getVoidTy(ctx);
  llvm::GlobalVariable *slot =
      handlerSlot(module, ::cuvil::kSizeMismatchHandlerSymbol);
  llvm::FunctionCallee abort = module.getOrInsertFunction(
      "abort", llvm::FunctionType::get(voidType, {}));
  report->setLinkage(llvm::GlobalValue::InternalLinkage);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", report);
  auto *call = llvm::BasicBlock::Create(ctx, "call", report);
  auto *stop = llvm::BasicBlock::Create(ctx, "stop", report);
  llvm::IRBuilder<> b(entry);
  llvm::Value *handler = b.CreateLoad(ptrType, slot);
  b.CreateCondBr(b.CreateIsNull(handler), stop, call);
  // The runtime's handler unwinds to the caller and does not return; code
  // loaded without it (a library used on its own) stops rather than write
  // past the out-param.
  b.SetInsertPoint(call);
  llvm::SmallVector<llvm::Value *, 4> args;
  for (llvm::Argument &arg : report->args())
    args.push_back(&arg);
  b.CreateCall(report->getFunctionType(), handler, args);
  b.CreateBr(stop);
  b.SetInsertPoint(stop);
  b.CreateCall(abort);
  b.CreateUnreachable();
}

llvm::Error cpu::emitSharedLibrary(ModuleOp module, llvm::StringRef funcName,
                                   llvm::StringRef path, FinishModule finish) {
  auto tm = createHostTargetMachine(/*positionIndependent=*/true);
  if (!tm)
    return tm.takeError();
  std::vector<std::string> objects;
  {
    llvm::LLVMContext context;
    auto llvmModule = optimizedModule(module, context, **tm, funcName, finish,
                                      /*forObjects=*/true);
    if (!llvmModule)
      return llvmModule.takeError();
    if (llvm::Error e = emitObjects(**llvmModule, **tm, objects))
      return e;
  }
  std::vector<std::string> objectPaths;
  auto removeObjects = llvm::make_scope_exit([&] {
    for (const std::string &objectPath : objectPaths)
      llvm::sys::fs::remove(objectPath);
  });
  for (auto [index, object] : llvm::enumerate(objects)) {
    objectPaths.push_back((path + "." + llvm::Twine(index) + ".o").str());
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPaths.back(), ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write %s",
                                     objectPaths.back().c_str());
    os << object;
  }
  return linkSharedLibrary(objectPaths, path);
}

llvm::Error cpu::linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths,
                                   llvm::StringRef sharedLibraryPath) {
  // -Bsymbolic binds the library's calls to its own functions: several
  // cached libraries define the same names (cuvil_f for every shape of f)
  // and are loaded into one process. The libraries it may call are named by
  // their runtime files (no development symlinks needed where a package is
  // installed), each kept only where the code calls it (--as-needed); libm's
  // and the C library's folder is the one the build found the C library in.
  std::string rpath = "-rpath=" CUVIL_LLVM_LIB_DIR;
  std::string systemDir = "-L" CUVIL_SYSTEM_LIB_DIR;
  std::vector<std::string> runtime = ::cuvil::codeRuntimeLibraries();
  llvm::SmallVector<llvm::StringRef> args = {
      "-shared", "-Bsymbolic", "--eh-frame-hdr", "--as-needed", "--threads=1"};
  args.append(objectPaths.begin(), objectPaths.end());
  args.append({"-o", sharedLibraryPath, rpath});
  args.append(runtime.begin(), runtime.end());
  args.append({systemDir, "-l:libm.so.6", "-l:libc.so.6"});
  return runLinker(LinkerFlavor::Elf, args, sharedLibraryPath);
}
