//===- CudaDriver.h - The CUDA driver, loaded when first needed -*- C++ -*-===//
//
// Cuvil never links against libcuda: a program linked to the toolkit's stub
// does not start where no driver is installed. The driver is opened with
// dlopen("libcuda.so.1") on first use (CUVIL_CUDA_DRIVER names another
// file, for tests), every entry point looked up by name, and cuInit called
// once; each failure becomes one clear message naming the cause and the
// fix. Devices are used through their primary contexts.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_CUDADRIVER_H
#define CUVIL_RUNTIME_CUDADRIVER_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#if CUVIL_HAVE_CUDA_H
#include <cuda.h>
#endif

namespace cuvil::cuda {

/// One GPU as the runtime uses it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0; ///< compute capability
  uint64_t totalMemory = 0;
  int multiprocessors = 0;
};

#if CUVIL_HAVE_CUDA_H
// The driver entry points the runtime uses: X(name as cuda.h spells it).
// The symbol looked up is the macro-expanded name (cuMemAlloc_v2).
// clang-format off
#define CUVIL_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuGetErrorName) \
  X(cuGetErrorString) \
  X(cuDeviceGetCount) \
  X(cuDeviceGet) \
  X(cuDeviceGetName) \
  X(cuDeviceGetAttribute) \
  X(cuDeviceTotalMem) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent) \
  X(cuCtxGetCurrent) \
  X(cuModuleLoadData) \
  X(cuModuleUnload) \
  X(cuModuleGetFunction) \
  X(cuLaunchKernel) \
  X(cuStreamCreate) \
  X(cuStreamDestroy) \
  X(cuStreamSynchronize) \
  X(cuStreamWaitEvent) \
  X(cuEventCreate) \
  X(cuEventDestroy) \
  X(cuEventRecord) \
  X(cuEventSynchronize) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemAllocFromPoolAsync) \
  X(cuMemFreeAsync) \
  X(cuDeviceGetDefaultMemPool) \
  X(cuMemPoolSetAttribute) \
  X(cuMemPoolTrimTo) \
  X(cuMemcpyAsync) \
  X(cuMemcpyHtoDAsync) \
  X(cuMemcpyDtoHAsync) \
  X(cuMemsetD32Async) \
  X(cuMemsetD16Async) \
  X(cuMemsetD8Async) \
  X(cuMemHostAlloc) \
  X(cuMemFreeHost)
// clang-format on

/// The loaded driver: its entry points and the devices it reports.
class Driver {
public:
  /// The process's driver, loaded and initialized on the first call; null
  /// with `error` saying why (no driver, the toolkit's stub, no device).
  static const Driver *get(std::string &error);

#define CUVIL_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  CUVIL_CUDA_DRIVER_FUNCTIONS(CUVIL_CUDA_DECLARE)
#undef CUVIL_CUDA_DECLARE

  const std::string &path() const { return libraryPath; }
  int version() const { return driverVersion; }
  const std::vector<DeviceInfo> &devices() const { return deviceList; }

  /// "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument)"
  /// for `result`, with `what` naming the call.
  std::string describe(CUresult result, const char *what) const;

  /// Makes device `index`'s primary context current on this thread
  /// (retained once per process). False with `error` set.
  bool makeCurrent(int index, std::string &error) const;

private:
  Driver() = default;
  void *handle = nullptr;
  std::string libraryPath;
  int driverVersion = 0;
  std::vector<DeviceInfo> deviceList;
  mutable std::mutex contextMutex;
  mutable std::vector<CUcontext> contexts;
};
#endif

/// The CUDA devices this process can use: empty with `error` set when there
/// is no usable driver or no device. Never throws, never aborts.
std::vector<DeviceInfo> availableDevices(std::string &error);

} // namespace cuvil::cuda

#endif // CUVIL_RUNTIME_CUDADRIVER_H
