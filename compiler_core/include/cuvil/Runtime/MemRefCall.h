//===- MemRefCall.h - Calling code compiled with memref descriptors -*- C++
//-*-===//
//
// MLIR's C interface passes every buffer as a memref descriptor {allocated,
// aligned, offset, sizes..., strides...} and its packed entry point takes an
// array of pointers to the arguments. This builds those descriptors around
// the caller's C-contiguous buffers and calls such an entry point.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_MEMREFCALL_H
#define CUVIL_RUNTIME_MEMREFCALL_H

#include "cuvil/Runtime/Executable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

/// The packed entry point MLIR generates: `void f(void **args)`.
using PackedEntry = void (*)(void **);

/// An Executable calling one packed entry point with memref descriptors for
/// its inputs then outputs, plus the kernel-hook table when instrumented.
class MemRefCallExecutable : public Executable {
public:
  MemRefCallExecutable(PackedEntry entry,
                       const std::vector<TensorSignature> &inputs,
                       const std::vector<TensorSignature> &outputs,
                       bool instrumented);

  void call(void *const *inputs, void *const *outputs, const KernelHooks *hooks,
            const Shapes *shapes = nullptr) const override;

private:
  PackedEntry entry;
  size_t numInputs;
  bool instrumented;
  /// Descriptor template per argument as 64-bit words; the two pointer
  /// words are filled per call.
  std::vector<std::vector<int64_t>> descriptors;
};

/// Name of the packed entry point of function `symbol` in a shared library
/// the CPU target wrote.
std::string packedEntryName(const std::string &symbol);

/// Why the last `MemRefCallExecutable::call` on this thread returned early
/// with its outputs unwritten, as the message for the user (naming
/// `function`), and whether an allocation failed (Python raises MemoryError)
/// or a result's sizes differed from its out-param's; reading clears it.
struct CallError {
  enum class Kind { None, Allocation, ResultSize, Runtime };
  Kind kind = Kind::None;
  std::string message;
  explicit operator bool() const { return kind != Kind::None; }
};
CallError takeCallError(const std::string &function);

/// Reports that the call in progress on this thread failed in the code's
/// own runtime (`message`, e.g. a wasm module's engine): the call's
/// outputs are unwritten, and takeCallError returns it (RuntimeError).
void reportCallFailure(std::string message);

/// The global compiled code calls when an allocation fails (it is set in
/// every library that defines it): on the calling thread it unwinds to
/// `MemRefCallExecutable::call`, which returns (see takeCallError);
/// on an OpenMP
/// worker thread, where no unwinding is possible, it reports and aborts.
constexpr const char *kAllocationFailureHandlerSymbol =
    "cuvil_alloc_failure_handler";
extern "C" void cuvilAllocationFailed(int64_t bytes);

/// The global through which compiled code reports a result whose dynamic
/// sizes differ from its out-param's (cuvil-check-result-sizes): set in
/// every library that defines it to `cuvilResultSizeMismatch`, which unwinds
/// to `MemRefCallExecutable::call` like a failed allocation.
constexpr const char *kSizeMismatchHandlerSymbol =
    "cuvil_size_mismatch_handler";
extern "C" void cuvilResultSizeMismatch(int64_t argument, int64_t dim,
                                        int64_t expected, int64_t actual);

} // namespace cuvil

#endif // CUVIL_RUNTIME_MEMREFCALL_H
