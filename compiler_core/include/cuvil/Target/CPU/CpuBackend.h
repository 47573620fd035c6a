//===- CpuBackend.h - LLVM code generation for the host CPU -----*- C++ -*-===//
#ifndef CUVIL_TARGET_CPU_CPUBACKEND_H
#define CUVIL_TARGET_CPU_CPUBACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil::cpu {

/// Registers the LLVM translations and the native target (idempotent).
void initializeTargets(DialectRegistry &registry);

/// A target machine for the host CPU (its name and features detected at run
/// time: compiled code may use AVX-512 where the host has it).
/// With `positionIndependent` the code can go into a shared library.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(bool positionIndependent = false);

/// A short description of the host target, e.g. "x86_64 znver4 +avx512f".
std::string hostDescription();

/// Sends the OpenMP calls of parallel regions (`__kmpc_fork_call`, static
/// loop shares) to Cuvil's thread pool through slots the loader fills
/// (cuvil/Runtime/ThreadPool.h); unfilled, the regions run serially.
void defineThreadCalls(llvm::Module &module);

/// The pointer global `cuvil_slot_<function>` of `module` (made if needed)
/// the loader fills with a runtime function (cuvil/Runtime/RuntimeSlots.h).
llvm::GlobalVariable *runtimeSlot(llvm::Module &module,
                                  llvm::StringRef function);

/// Gives declared function `fn` a body calling through pointer global
/// `slot` (a runtime function the loader provides) when the slot is set;
/// `unset` ends the body for an empty slot (the builder at its block).
void defineThroughSlot(llvm::Function &fn, llvm::GlobalVariable *slot,
                       llvm::function_ref<void(llvm::IRBuilder<> &)> unset);

enum class Artifact { LLVMIR, Assembly, Object };

/// Completes a translated module before it is optimized (a target's host
/// code defining the runtime functions it calls).
using FinishModule = llvm::function_ref<void(llvm::Module &)>;

/// Translates and optimizes an LLVM-dialect module for the host, then prints
/// it as LLVM IR or emits assembly or a (position-independent) object. With
/// `packedEntry`, the packed entry point of that function is added first.
llvm::Error emitArtifact(ModuleOp module, Artifact kind, std::string &out,
                         llvm::StringRef packedEntry = "",
                         FinishModule finish = nullptr);

/// Adds `_mlir__mlir_ciface_<name>(void **args)`, the packed entry point
/// the runtime calls (the form MLIR's ExecutionEngine also generates).
llvm::Error addPackedInterface(llvm::Module &module, llvm::StringRef name);

/// Gives the allocation functions compiled code calls
/// (`_mlir_memref_to_llvm_alloc`/`_free`, from finalize-memref-to-llvm's
/// generic-functions mode) bodies: malloc/free, and on a failed allocation a
/// call through the `cuvil_alloc_failure_handler` pointer the runtime sets
/// when it loads the code (cuvil/Runtime/MemRefCall.h).
void defineAllocationFunctions(llvm::Module &module);

/// The body of `cuvil_result_size_mismatch` (cuvil-check-result-sizes), if
/// declared: a call through the `cuvil_size_mismatch_handler` pointer the
/// runtime sets, which unwinds; without one, abort.
void defineSizeMismatchFunction(llvm::Module &module);

/// Compiles an LLVM-dialect module into a shared library at `path` whose
/// entry point for `funcName` is the packed interface. This is the one way
/// CPU code is built, whether it is then cached or only loaded: code run
/// right after compiling and code loaded from the cache are the same bytes.
/// A large module's machine code is emitted on two threads (see
/// SplitCodegen.cpp).
llvm::Error emitSharedLibrary(ModuleOp module, llvm::StringRef funcName,
                              llvm::StringRef path,
                              FinishModule finish = nullptr);

/// Links object files into one shared library against the runtime
/// libraries.
llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths,
                              llvm::StringRef sharedLibraryPath);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_CPUBACKEND_H
