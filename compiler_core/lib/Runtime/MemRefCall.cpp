//===- MemRefCall.cpp - Memref descriptors around the caller's buffers ----===//

#include "cuvil/Runtime/MemRefCall.h"
#include "cuvil/Runtime/ThreadPool.h"

#include "llvm/ADT/SmallVector.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>

using namespace cuvil;

namespace {
/// The call in progress on this thread, if any: where a failed allocation
/// in compiled code unwinds to, and how many bytes it asked for.
thread_local sigjmp_buf *activeCall = nullptr;
thread_local int64_t failedBytes = 0;
thread_local size_t activeInputs = 0;
thread_local std::string callFailure;
thread_local std::string runtimeFailure;
} // namespace

void cuvil::reportCallFailure(std::string message) {
  runtimeFailure = std::move(message);
}

CallError cuvil::takeCallError(const std::string &function) {
  CallError error;
  if (!runtimeFailure.empty()) {
    error.kind = CallError::Kind::Runtime;
    error.message = "cuvil: compiled function '" + function +
                    "': " + runtimeFailure + "; the outputs were not written";
  } else if (!callFailure.empty()) {
    error.kind = CallError::Kind::ResultSize;
    error.message = "cuvil: compiled function '" + function +
                    "': " + callFailure +
                    "; the outputs were not written. The sizes Cuvil derived "
                    "for its symbols do not hold for these inputs: report it "
                    "with the model, or compile it for these static shapes";
  } else if (failedBytes) {
    char size[48];
    double mib = failedBytes / (1024.0 * 1024.0);
    if (mib >= 1024)
      std::snprintf(size, sizeof(size), "%.1f GiB", mib / 1024);
    else
      std::snprintf(size, sizeof(size), "%.1f MiB", mib);
    error.kind = CallError::Kind::Allocation;
    error.message = "cuvil: compiled function '" + function +
                    "' could not allocate " + std::to_string(failedBytes) +
                    " bytes (" + size +
                    ") for an intermediate buffer; free memory or call it "
                    "with smaller inputs";
  }
  callFailure.clear();
  runtimeFailure.clear();
  failedBytes = 0;
  return error;
}

extern "C" void cuvilResultSizeMismatch(int64_t argument, int64_t dim,
                                        int64_t expected, int64_t actual) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "output %lld has size %lld in dim %lld but its buffer was "
                "sized %lld from the symbols' size expressions",
                static_cast<long long>(argument) -
                    static_cast<long long>(activeInputs),
                static_cast<long long>(actual), static_cast<long long>(dim),
                static_cast<long long>(expected));
  if (!activeCall) {
    std::fprintf(stderr, "cuvil: compiled code: %s; stopping the process\n",
                 text);
    std::abort();
  }
  callFailure = text;
  siglongjmp(*activeCall, 1);
}

extern "C" void cuvilAllocationFailed(int64_t bytes) {
  if (!activeCall) {
    std::fprintf(stderr,
                 "cuvil: compiled code could not allocate %lld bytes on a "
                 "worker thread; stopping the process\n",
                 static_cast<long long>(bytes));
    std::abort();
  }
  failedBytes = bytes;
  siglongjmp(*activeCall, 1);
}

MemRefCallExecutable::MemRefCallExecutable(
    PackedEntry entry, const std::vector<TensorSignature> &inputs,
    const std::vector<TensorSignature> &outputs, bool instrumented)
    : entry(entry), numInputs(inputs.size()), instrumented(instrumented) {
  for (const auto *list : {&inputs, &outputs})
    for (const TensorSignature &sig : *list) {
      std::vector<int64_t> desc = {0, 0, 0};
      desc.insert(desc.end(), sig.shape.begin(), sig.shape.end());
      std::vector<int64_t> strides(sig.shape.size(), 1);
      for (int i = (int)sig.shape.size() - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * sig.shape[i + 1];
      desc.insert(desc.end(), strides.begin(), strides.end());
      descriptors.push_back(std::move(desc));
    }
}

/// Sizes and row-major strides of `shape` into a descriptor's words.
static void setShape(int64_t *desc, const std::vector<int64_t> &shape) {
  size_t rank = shape.size();
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    desc[3 + d] = shape[d];
    desc[3 + rank + d] = stride;
    stride *= shape[d];
  }
}

void MemRefCallExecutable::call(void *const *inputs, void *const *outputs,
                                const KernelHooks *hooks,
                                const Shapes *shapes) const {
  size_t numArgs = descriptors.size();
  llvm::SmallVector<int64_t, 64> words;
  llvm::SmallVector<size_t, 8> offsets;
  for (const std::vector<int64_t> &desc : descriptors) {
    offsets.push_back(words.size());
    words.append(desc.begin(), desc.end());
  }
  llvm::SmallVector<void *, 8> descriptorPtrs(numArgs);
  llvm::SmallVector<void *, 8> packed(numArgs);
  // Instrumented code takes the hook table (or null) as a last argument.
  void *hookTable = const_cast<KernelHooks *>(hooks);
  if (instrumented)
    packed.push_back(&hookTable);
  for (size_t i = 0; i < numArgs; ++i) {
    void *data = i < numInputs ? inputs[i] : outputs[i - numInputs];
    int64_t *desc = words.data() + offsets[i];
    desc[0] = reinterpret_cast<int64_t>(data);
    desc[1] = reinterpret_cast<int64_t>(data);
    if (shapes && i < shapes->size())
      setShape(desc, (*shapes)[i]);
    descriptorPtrs[i] = desc;
    packed[i] = &descriptorPtrs[i];
  }
  // Compiled code is C-like (no destructors run on its frames), so a failed
  // allocation can jump straight back here. What it allocated before is
  // lost; the process stays usable.
  sigjmp_buf env;
  sigjmp_buf *previous = activeCall;
  size_t previousInputs = activeInputs;
  failedBytes = 0;
  callFailure.clear();
  if (sigsetjmp(env, 0)) {
    activeCall = previous;
    activeInputs = previousInputs;
    threads::abandonRegions();
    return;
  }
  activeCall = &env;
  activeInputs = numInputs;
  entry(packed.data());
  activeCall = previous;
  activeInputs = previousInputs;
}

std::string cuvil::packedEntryName(const std::string &symbol) {
  return "_mlir__mlir_ciface_" + symbol;
}
