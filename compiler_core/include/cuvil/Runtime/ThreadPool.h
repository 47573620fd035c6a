//===- ThreadPool.h - The threads compiled CPU code runs on -----*- C++ -*-===//
//
// Compiled CPU code distributes its parallel loops the way OpenMP code does
// (MLIR's convert-scf-to-openmp, then LLVM's OpenMP builder: a fork of an
// outlined region, a static share of the loop per thread). It does not call
// an OpenMP runtime: it calls the entry points here through slots
// (RuntimeSlots.h); unfilled (the library loaded by something else) the
// code runs serially.
//
// What differs from an OpenMP runtime's fork-join: the caller runs the
// region's threads itself as long as any is unclaimed, and waits only for
// the shares other threads have started. A worker that is asleep or has no
// core (another library's pool spinning on it) is not waited for; with
// OpenMP's fork-join every call paid a scheduler time slice for it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_THREADPOOL_H
#define CUVIL_RUNTIME_THREADPOOL_H

#include "cuvil/Runtime/RuntimeSlots.h"

#include <string_view>
#include <vector>

namespace cuvil::threads {

/// The OpenMP entry points the generated code calls through slots, and the
/// one it calls instead of the variadic `__kmpc_fork_call`:
/// `void cuvil_fork_call(void *loc, int32_t argc, void *microtask,
/// void **args)`.
constexpr const char *kForkFunction = "cuvil_fork_call";
inline constexpr std::string_view kEntryPoints[] = {
    kForkFunction,
    "__kmpc_fork_call_if",
    "__kmpc_global_thread_num",
    "__kmpc_for_static_init_4",
    "__kmpc_for_static_init_4u",
    "__kmpc_for_static_init_8",
    "__kmpc_for_static_init_8u",
    "__kmpc_for_static_fini",
    "__kmpc_barrier",
    "__kmpc_serialized_parallel",
    "__kmpc_end_serialized_parallel",
};

/// Whether the generated code calls `name` through a slot.
inline bool isRuntimeFunction(std::string_view name) {
  for (std::string_view entry : kEntryPoints)
    if (name == entry)
      return true;
  return false;
}

/// Every entry point of kEntryPoints with its address, for the loader.
const std::vector<RuntimeFunction> &runtimeFunctions();

/// Threads a parallel region of the calling thread uses: its own setting
/// (setCallerThreads), else OMP_NUM_THREADS, else the cores this process
/// may run on.
int callerThreads();

/// Sets the calling thread's count; 0 returns to the default.
void setCallerThreads(int threads);

/// Called where a call's failure lands (a failed allocation jumps out of
/// the compiled code, maybe out of a share of a region this thread runs):
/// the region ends once its other running shares have, and the pool is
/// free for the next call.
void abandonRegions();

} // namespace cuvil::threads

#endif // CUVIL_RUNTIME_THREADPOOL_H
