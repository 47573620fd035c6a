//===- Executable.h - Compiled code a target loaded, ready to call -*- C++
//-*-===//
//
// What the runtime calls: a target backend loads compiled code into an
// Executable that owns its calling convention (memref descriptors on the
// CPU, kernel launches on a GPU). Plain data and one virtual call; no MLIR
// headers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_EXECUTABLE_H
#define CUVIL_RUNTIME_EXECUTABLE_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cuvil {

/// Element type and shape of one argument or result; -1 for a dynamic size.
struct TensorSignature {
  std::string dtype; ///< a name of the dtype table, e.g. "float32"
  std::vector<int64_t> shape;
};

/// The actual shape of each argument of one call, inputs then outputs.
using Shapes = std::vector<std::vector<int64_t>>;

/// Where an op, kernel or profile event came from, as structured data: the
/// user's file:line:col and, for imported models, the node's name (an ONNX
/// node, an FX node, an nn.Module path) from a NameLoc.
struct SourceLocation {
  std::string file; ///< empty when unknown
  int line = 0;
  int column = 0;
  std::string name; ///< model node name, or empty

  bool hasFile() const { return !file.empty(); }
  /// "file:line:col", or "" without a file location.
  std::string fileLineCol() const {
    if (!hasFile())
      return "";
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

/// One kernel (loop nest, fused region, copy) of a compiled function.
struct KernelInfo {
  std::string name;      ///< what it computes, e.g. "linalg.matmul"
  std::string location;  ///< the user's "file:line:col", or ""
  SourceLocation source; ///< the same location, structured, with node name
};

/// What instrumented code calls at the start (phase 0) and end (phase 1) of
/// kernel number `kernel`; the layout is the one cuvil-instrument-kernels
/// generates code for.
struct KernelHooks {
  void (*hook)(void *context, int32_t kernel, int32_t phase);
  void *context;
};

/// A call an Executable started without waiting for it (enqueue).
class PendingCall {
public:
  virtual ~PendingCall() = default;
  /// Blocks until the call is done and has written its outputs; a failure
  /// is reported as a call's is (reportCallFailure, on this thread).
  virtual void wait() = 0;
};

/// Loaded code of one compiled function.
class Executable {
public:
  virtual ~Executable() = default;

  /// Calls the function. `inputs` and `outputs` are data pointers of
  /// C-contiguous buffers matching the function's signature; the caller
  /// checks. With `hooks`, instrumented code reports every kernel to them.
  /// `shapes` (inputs then outputs) gives the actual shapes, which a
  /// signature with dynamic sizes (-1) needs on every call.
  virtual void call(void *const *inputs, void *const *outputs,
                    const KernelHooks *hooks,
                    const Shapes *shapes = nullptr) const = 0;

  /// Calls the function with buffers already in the memory of the target's
  /// device (device pointers of C-contiguous buffers: cuvil.nd arrays on a
  /// GPU, DLPack tensors), copying nothing. False, without calling, where
  /// the target has no device memory of its own.
  virtual bool callOnDevice(void *const *inputs, void *const *outputs,
                            const KernelHooks *hooks) const {
    return false;
  }

  /// Starts a call that may still be running when this returns. Code on a
  /// device with a queue of its own (a CUDA stream) takes a copy of the
  /// inputs, queues its copies and launches behind the calls queued before
  /// and returns; the outputs are written by the pending call's wait(), so
  /// they must outlive it. Elsewhere the call runs now and wait() has
  /// nothing left to do.
  virtual std::unique_ptr<PendingCall>
  enqueue(void *const *inputs, void *const *outputs, const KernelHooks *hooks,
          const Shapes *shapes = nullptr) const {
    struct Done : PendingCall {
      void wait() override {}
    };
    call(inputs, outputs, hooks, shapes);
    return std::make_unique<Done>();
  }

  /// Named counters of the calls so far (a GPU's host<->device copies and
  /// bytes); empty where there is nothing to count.
  virtual std::vector<std::pair<std::string, uint64_t>> counters() const {
    return {};
  }
};

} // namespace cuvil

#endif // CUVIL_RUNTIME_EXECUTABLE_H
