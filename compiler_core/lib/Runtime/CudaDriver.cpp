//===- CudaDriver.cpp - Opening the CUDA driver and its devices -----------===//

#include "cuvil/Runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace cuvil;
using namespace cuvil::cuda;

#if CUVIL_HAVE_CUDA_H

namespace {

#define CUVIL_STRINGIFY_EXPANDED(x) CUVIL_STRINGIFY(x)
#define CUVIL_STRINGIFY(x) #x

constexpr const char *kFix =
    "fix: install the NVIDIA driver for a CUDA GPU, or compile for "
    "target='cpu'";

/// Where the stub library of the toolkit answers every call.
constexpr CUresult kStubLibrary = CUDA_ERROR_STUB_LIBRARY;

struct Loaded {
  std::unique_ptr<Driver> driver;
  std::string error;
};

} // namespace

std::string Driver::describe(CUresult result, const char *what) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string message = std::string(what) + " failed: ";
  message += name ? name : "CUDA error " + std::to_string(result);
  if (text)
    message += std::string(" (") + text + ")";
  return message;
}

const Driver *Driver::get(std::string &error) {
  static Loaded loaded = [] {
    Loaded result;
    const char *override = std::getenv("CUVIL_CUDA_DRIVER");
    std::string path = override && *override ? override : "libcuda.so.1";
    void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = ::dlerror();
      result.error = "no CUDA driver: cannot load " + path + " (" +
                     (why ? why : "unknown reason") + "); " + kFix;
      return result;
    }
    std::unique_ptr<Driver> driver(new Driver());
    driver->handle = handle;
    driver->libraryPath = path;
#define CUVIL_CUDA_LOOKUP(name)                                                \
  driver->name = reinterpret_cast<decltype(driver->name)>(                     \
      ::dlsym(handle, CUVIL_STRINGIFY_EXPANDED(name)));                        \
  if (!driver->name) {                                                         \
    result.error = "the CUDA driver " + path + " has no " +                    \
                   CUVIL_STRINGIFY_EXPANDED(name) +                            \
                   ": it is older than CUDA 11.2, which Cuvil needs; fix: "    \
                   "update the NVIDIA driver";                                 \
    return result;                                                             \
  }
    CUVIL_CUDA_DRIVER_FUNCTIONS(CUVIL_CUDA_LOOKUP)
#undef CUVIL_CUDA_LOOKUP
    CUresult status = driver->cuInit(0);
    if (status == kStubLibrary) {
      result.error = "the CUDA driver " + path +
                     " is the CUDA toolkit's stub library, which answers "
                     "every call with CUDA_ERROR_STUB_LIBRARY: no NVIDIA "
                     "driver is installed; " +
                     kFix;
      return result;
    }
    if (status == CUDA_ERROR_NO_DEVICE) {
      result.error = "the CUDA driver sees no GPU (CUDA_ERROR_NO_DEVICE; "
                     "check CUDA_VISIBLE_DEVICES and nvidia-smi); " +
                     std::string(kFix);
      return result;
    }
    if (status != CUDA_SUCCESS) {
      result.error = driver->describe(status, "cuInit") + "; " + kFix;
      return result;
    }
    driver->cuDriverGetVersion(&driver->driverVersion);
    int count = 0;
    if ((status = driver->cuDeviceGetCount(&count)) != CUDA_SUCCESS) {
      result.error = driver->describe(status, "cuDeviceGetCount");
      return result;
    }
    for (int i = 0; i < count; ++i) {
      DeviceInfo info;
      info.index = i;
      CUdevice device;
      if (driver->cuDeviceGet(&device, i) != CUDA_SUCCESS)
        continue;
      char name[256] = {0};
      driver->cuDeviceGetName(name, sizeof(name) - 1, device);
      info.name = name;
      driver->cuDeviceGetAttribute(
          &info.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
      driver->cuDeviceGetAttribute(
          &info.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
      driver->cuDeviceGetAttribute(&info.multiprocessors,
                                   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   device);
      size_t bytes = 0;
      driver->cuDeviceTotalMem(&bytes, device);
      info.totalMemory = bytes;
      driver->deviceList.push_back(info);
    }
    if (driver->deviceList.empty()) {
      result.error =
          "the CUDA driver reports no usable GPU; " + std::string(kFix);
      return result;
    }
    driver->contexts.assign(driver->deviceList.size(), nullptr);
    result.driver = std::move(driver);
    return result;
  }();
  if (!loaded.driver)
    error = loaded.error;
  return loaded.driver.get();
}

bool Driver::makeCurrent(int index, std::string &error) const {
  if (index < 0 || index >= static_cast<int>(deviceList.size())) {
    error = "there is no CUDA device " + std::to_string(index) + " (" +
            std::to_string(deviceList.size()) + " found)";
    return false;
  }
  CUcontext context;
  {
    std::lock_guard<std::mutex> lock(contextMutex);
    if (!contexts[index]) {
      CUdevice device;
      CUresult status = cuDeviceGet(&device, index);
      if (status == CUDA_SUCCESS)
        status = cuDevicePrimaryCtxRetain(&contexts[index], device);
      if (status != CUDA_SUCCESS) {
        contexts[index] = nullptr;
        error = describe(status, "cuDevicePrimaryCtxRetain");
        return false;
      }
    }
    context = contexts[index];
  }
  CUcontext current = nullptr;
  cuCtxGetCurrent(&current);
  if (current == context)
    return true;
  CUresult status = cuCtxSetCurrent(context);
  if (status != CUDA_SUCCESS) {
    error = describe(status, "cuCtxSetCurrent");
    return false;
  }
  return true;
}

std::vector<DeviceInfo> cuda::availableDevices(std::string &error) {
  const Driver *driver = Driver::get(error);
  return driver ? driver->devices() : std::vector<DeviceInfo>{};
}

#else // !CUVIL_HAVE_CUDA_H

std::vector<DeviceInfo> cuda::availableDevices(std::string &error) {
  error = "this Cuvil was built without the CUDA toolkit's headers (cuda.h), "
          "so it cannot run CUDA code; fix: install the CUDA toolkit and "
          "rebuild";
  return {};
}

#endif
