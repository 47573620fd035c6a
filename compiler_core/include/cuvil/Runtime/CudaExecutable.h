//===- CudaExecutable.h - Calling code compiled for a CUDA GPU --*- C++ -*-===//
//
// The cuda target's host code is a shared library whose function takes
// device buffers and launches the kernels through the runtime
// (CudaRuntimeAbi.h). A CudaExecutable owns what those calls share: the
// loaded GPU modules (each loaded once, not on every launch), the device
// copies of constant buffers, the call's stream and the device memory pool
// (the driver's stream-ordered allocator, keeping up to the pool size
// cached between calls). A call with host buffers copies the inputs in
// through pinned staging memory, runs, and copies the outputs back, and
// counts both; a call with device buffers copies nothing. A call can also
// be queued without waiting for it (enqueue): calls queued one after the
// other keep the GPU busy while the host prepares the next.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_CUDAEXECUTABLE_H
#define CUVIL_RUNTIME_CUDAEXECUTABLE_H

#include "cuvil/Runtime/Executable.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cuvil::cuda {

/// Host<->device traffic of an executable's calls.
struct CopyStats {
  uint64_t hostToDevice = 0, deviceToHost = 0; ///< copies
  uint64_t hostToDeviceBytes = 0, deviceToHostBytes = 0;
  uint64_t calls = 0;
};

struct ExecutableState;

class CudaExecutable : public Executable {
public:
  /// Wraps `host`, the loaded host code (called with device pointers), for
  /// device `device`; `elementBytes` has one size per input then output.
  /// Null with `error` when the driver or the device is unusable.
  static std::unique_ptr<CudaExecutable>
  create(std::unique_ptr<Executable> host, int device,
         const std::vector<TensorSignature> &inputs,
         const std::vector<TensorSignature> &outputs,
         std::vector<size_t> elementBytes, std::string &error);
  ~CudaExecutable() override;

  /// Host buffers in and out: copies around the call (enqueue, then wait).
  void call(void *const *inputs, void *const *outputs, const KernelHooks *hooks,
            const Shapes *shapes = nullptr) const override;
  /// The inputs copied into pinned staging memory of the call's own, the
  /// copies in, the launches and the copies out queued on the stream
  /// behind the calls before, and an event after them; wait() waits for
  /// the event and copies the results out of the staging memory.
  std::unique_ptr<PendingCall> enqueue(void *const *inputs,
                                       void *const *outputs,
                                       const KernelHooks *hooks,
                                       const Shapes *shapes) const override;
  /// Device buffers in and out (pointers of this executable's device): no
  /// copies; returns once the results are written.
  bool callOnDevice(void *const *inputs, void *const *outputs,
                    const KernelHooks *hooks) const override;

  CopyStats copyStats() const;
  /// copyStats() by name: host_to_device, host_to_device_bytes,
  /// device_to_host, device_to_host_bytes, calls.
  std::vector<std::pair<std::string, uint64_t>> counters() const override;
  int device() const { return deviceIndex; }

private:
  CudaExecutable(std::unique_ptr<Executable> host, int device,
                 std::vector<TensorSignature> inputs,
                 std::vector<TensorSignature> outputs,
                 std::vector<size_t> elementBytes);
  size_t bytesOf(size_t argument, const Shapes *shapes) const;

  std::unique_ptr<Executable> host;
  int deviceIndex;
  std::vector<TensorSignature> inputs, outputs;
  std::vector<size_t> elementBytes;
  std::unique_ptr<ExecutableState> state;
};

/// Makes device `device`'s memory pool (the driver's stream-ordered pool
/// every call allocates from) keep `bytes` between calls, and reserves
/// them now: the steady state allocates nothing from the device. False
/// with `error` without a driver or device, or when the memory is not
/// there. Executables created later keep the same size.
bool reservePool(int device, uint64_t bytes, std::string &error);

/// Copies `count` bytes of device memory at `source` (device `device`, any
/// owner: another library's DLPack tensor) to `target`, synchronously.
bool copyDeviceToHost(int device, const void *source, void *target,
                      size_t count, std::string &error);

/// Device memory Cuvil owns (`cuvil.nd.array(x, device="cuda:0")`).
class DeviceBuffer {
public:
  /// `bytes` on device `device`; null with `error` (no driver, no memory).
  static std::unique_ptr<DeviceBuffer> allocate(int device, size_t bytes,
                                                std::string &error);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return pointer; }
  size_t size() const { return bytes; }
  int device() const { return deviceIndex; }
  /// Synchronous copies of `count` bytes (no more than size()).
  bool copyFromHost(const void *host, size_t count, std::string &error);
  bool copyToHost(void *host, size_t count, std::string &error) const;

private:
  DeviceBuffer(int device, void *pointer, size_t bytes)
      : deviceIndex(device), pointer(pointer), bytes(bytes) {}
  int deviceIndex;
  void *pointer;
  size_t bytes;
};

} // namespace cuvil::cuda

#endif // CUVIL_RUNTIME_CUDAEXECUTABLE_H
