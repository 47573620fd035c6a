//===- CuptiGpuTest.cpp - The real CUPTI collector on a GPU ---------------===//
//
// Labelled "gpu". Loads the CUDA driver with dlopen, starts the collector,
// copies a buffer to the device and back and sets it (memcpy and memset
// activity, runtime-free: driver API only), and checks that the records came
// back as trace events on one GPU stream joined to their driver calls.
// Exits 77 (CTest: skipped) with the reason when there is no driver or GPU.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Profiler/Profiler.h"

#include <cstdio>
#include <dlfcn.h>
#include <vector>

using namespace cuvil::profiler;

namespace {

constexpr int kSkipped = 77;

int skip(const std::string &why) {
  std::printf("SKIPPED: %s\n", why.c_str());
  return kSkipped;
}

int fail(const std::string &why) {
  std::printf("FAILED: %s\n", why.c_str());
  return 1;
}

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUdeviceptr = unsigned long long;

} // namespace

int main() {
  if (!cuptiSupported())
    return skip("built without the CUPTI headers");
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!cuda)
    return skip(std::string("no CUDA driver (libcuda.so.1): ") + dlerror());
  auto sym = [&](const char *name) { return dlsym(cuda, name); };
  auto cuInit = reinterpret_cast<CUresult (*)(unsigned)>(sym("cuInit"));
  auto cuDeviceGetCount =
      reinterpret_cast<CUresult (*)(int *)>(sym("cuDeviceGetCount"));
  auto cuDeviceGet =
      reinterpret_cast<CUresult (*)(CUdevice *, int)>(sym("cuDeviceGet"));
  auto cuCtxCreate =
      reinterpret_cast<CUresult (*)(CUcontext *, unsigned, CUdevice)>(
          sym("cuCtxCreate_v2"));
  auto cuMemAlloc = reinterpret_cast<CUresult (*)(CUdeviceptr *, size_t)>(
      sym("cuMemAlloc_v2"));
  auto cuMemcpyHtoD =
      reinterpret_cast<CUresult (*)(CUdeviceptr, const void *, size_t)>(
          sym("cuMemcpyHtoD_v2"));
  auto cuMemcpyDtoH =
      reinterpret_cast<CUresult (*)(void *, CUdeviceptr, size_t)>(
          sym("cuMemcpyDtoH_v2"));
  auto cuMemsetD8 =
      reinterpret_cast<CUresult (*)(CUdeviceptr, unsigned char, size_t)>(
          sym("cuMemsetD8_v2"));
  auto cuCtxSynchronize =
      reinterpret_cast<CUresult (*)()>(sym("cuCtxSynchronize"));
  auto cuMemFree =
      reinterpret_cast<CUresult (*)(CUdeviceptr)>(sym("cuMemFree_v2"));
  if (!cuInit || !cuDeviceGetCount || !cuDeviceGet || !cuCtxCreate ||
      !cuMemAlloc || !cuMemcpyHtoD || !cuMemcpyDtoH || !cuMemsetD8 ||
      !cuCtxSynchronize || !cuMemFree)
    return skip("the CUDA driver lacks the driver API entry points used here");
  int devices = 0;
  if (cuInit(0) != 0 || cuDeviceGetCount(&devices) != 0 || devices == 0)
    return skip("a CUDA driver is installed but no GPU is usable");

  auto collector = CuptiCollector::open();
  if (!collector)
    return fail(collector.error().text());
  std::printf("libcupti: %s\n", (*collector)->libraryPath().c_str());
  if (!(*collector)->start())
    return fail((*collector)->error());

  CUdevice device = 0;
  CUcontext context = nullptr;
  CUdeviceptr buffer = 0;
  std::vector<float> host(1 << 20, 1.0f);
  size_t bytes = host.size() * sizeof(float);
  (*collector)->pushExternalId(42);
  if (cuDeviceGet(&device, 0) || cuCtxCreate(&context, 0, device) ||
      cuMemAlloc(&buffer, bytes) || cuMemcpyHtoD(buffer, host.data(), bytes) ||
      cuMemsetD8(buffer, 0, bytes) ||
      cuMemcpyDtoH(host.data(), buffer, bytes) || cuCtxSynchronize())
    return fail("a CUDA driver call failed");
  (*collector)->popExternalId();
  cuMemFree(buffer);
  (*collector)->stop();

  Trace trace = (*collector)->takeTrace();
  int copies = 0, sets = 0, api = 0, tagged = 0;
  for (const Event &e : trace.events) {
    copies += e.kind == EventKind::Memcpy &&
              trace.str(e.name).substr(0, 6) == "Memcpy";
    sets += e.kind == EventKind::Memcpy && trace.str(e.name) == "Memset";
    api += e.kind == EventKind::RuntimeApi;
    tagged += e.opId == 42;
  }
  std::printf("%zu events: %d copies, %d memsets, %d API calls, %zu flows, "
              "%d tagged with op 42\n",
              trace.events.size(), copies, sets, api, trace.flows.size(),
              tagged);
  if (copies < 2 || sets < 1 || api < 3 || trace.flows.empty() || tagged == 0)
    return fail("expected 2 copies, a memset, their driver calls joined by "
                "flows and tagged with the pushed external id");
  std::printf("%s", formatOpTable(opTable(trace)).c_str());
  return 0;
}
