/* A stand-in for libcuda.so.1 for tests without a GPU: it answers the driver
 * calls Cuvil's CUDA runtime makes with host memory, checks their arguments
 * (launch bounds, fat binary magic, pointers it handed out) and counts them.
 * Kernels are not run: results are whatever the device buffers held. Set
 * FAKE_CUDA_FAIL=launch to make kernel launches fail. Loaded by Cuvil through
 * CUVIL_CUDA_DRIVER; the test reads the counters with fake_cuda_counter(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kInvalidImage = 200,
  kLaunchFailed = 719
};

static long launches, moduleLoads, moduleUnloads, liveAllocations, hostToDevice,
    deviceToHost, badLaunches, memsets, streamSyncs, eventRecords, eventSyncs,
    liveEvents, livePinned, poolKeepMb;

long fake_cuda_counter(const char *name) {
  if (!strcmp(name, "launches"))
    return launches;
  if (!strcmp(name, "module_loads"))
    return moduleLoads;
  if (!strcmp(name, "module_unloads"))
    return moduleUnloads;
  if (!strcmp(name, "live_allocations"))
    return liveAllocations;
  if (!strcmp(name, "host_to_device"))
    return hostToDevice;
  if (!strcmp(name, "device_to_host"))
    return deviceToHost;
  if (!strcmp(name, "bad_launches"))
    return badLaunches;
  if (!strcmp(name, "memsets"))
    return memsets;
  if (!strcmp(name, "stream_syncs"))
    return streamSyncs;
  if (!strcmp(name, "event_records"))
    return eventRecords;
  if (!strcmp(name, "event_syncs"))
    return eventSyncs;
  if (!strcmp(name, "live_events"))
    return liveEvents;
  if (!strcmp(name, "live_pinned"))
    return livePinned;
  if (!strcmp(name, "pool_keep_mb"))
    return poolKeepMb;
  return -1;
}

CUresult cuInit(unsigned flags) { return kSuccess; }
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == kLaunchFailed   ? "CUDA_ERROR_LAUNCH_FAILED"
       : r == kInvalidImage ? "CUDA_ERROR_INVALID_IMAGE"
                            : "CUDA_ERROR_INVALID_VALUE";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == kLaunchFailed ? "unspecified launch failure" : "invalid argument";
  return kSuccess;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return kSuccess;
}
CUresult cuDeviceGet(CUdevice *d, int i) {
  *d = i;
  return i == 0 ? kSuccess : kInvalidValue;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  snprintf(name, len, "Fake GPU");
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *v, int attribute, CUdevice d) {
  *v = attribute == 75 ? 9 : attribute == 16 ? 132 : 0;
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
  *bytes = (size_t)80 << 30;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d) {
  *ctx = (void *)0x1;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return kSuccess; }
static void *currentContext;
CUresult cuCtxSetCurrent(void *ctx) {
  currentContext = ctx;
  return kSuccess;
}
CUresult cuCtxGetCurrent(void **ctx) {
  *ctx = currentContext;
  return kSuccess;
}

CUresult cuModuleLoadData(void **module, const void *image) {
  uint32_t magic;
  memcpy(&magic, image, 4);
  if (magic != 0xBA55ED50u) /* a fat binary */
    return kInvalidImage;
  ++moduleLoads;
  *module = malloc(1);
  return kSuccess;
}
CUresult cuModuleUnload(void *module) {
  ++moduleUnloads;
  free(module);
  return kSuccess;
}
CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  *fn = strdup(name);
  return kSuccess;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  if (getenv("FAKE_CUDA_FAIL") && !strcmp(getenv("FAKE_CUDA_FAIL"), "launch"))
    return kLaunchFailed;
  if (!f || !params || bx * by * bz > 1024 || bx * by * bz == 0 || gy > 65535 ||
      gz > 65535 || gx == 0)
    ++badLaunches;
  ++launches;
  return kSuccess;
}
CUresult cuStreamCreate(void **s, unsigned flags) {
  *s = malloc(1);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *s) {
  free(s);
  return kSuccess;
}
CUresult cuStreamSynchronize(void *s) {
  ++streamSyncs;
  return kSuccess;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
  return kSuccess;
}
CUresult cuEventCreate(void **e, unsigned flags) {
  *e = malloc(1);
  ++liveEvents;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *e) {
  free(e);
  --liveEvents;
  return kSuccess;
}
CUresult cuEventRecord(void *e, void *s) {
  ++eventRecords;
  return kSuccess;
}
CUresult cuEventSynchronize(void *e) {
  ++eventSyncs;
  return kSuccess;
}

static CUresult allocate(CUdeviceptr *p, size_t bytes) {
  void *memory = calloc(1, bytes ? bytes : 1);
  if (!memory)
    return kInvalidValue;
  ++liveAllocations;
  *p = (CUdeviceptr)(uintptr_t)memory;
  return kSuccess;
}
static CUresult release(CUdeviceptr p) {
  if (!p)
    return kInvalidValue;
  --liveAllocations;
  free((void *)(uintptr_t)p);
  return kSuccess;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  return allocate(p, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr p) { return release(p); }
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t bytes, void *pool,
                                 void *s) {
  return allocate(p, bytes);
}
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { return release(p); }
CUresult cuDeviceGetDefaultMemPool(void **pool, CUdevice d) {
  *pool = (void *)0x2;
  return kSuccess;
}
CUresult cuMemPoolSetAttribute(void *pool, int attribute, void *value) {
  if (attribute == 4) /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    poolKeepMb = (long)(*(unsigned long long *)value >> 20);
  return kSuccess;
}
CUresult cuMemPoolTrimTo(void *pool, size_t keep) { return kSuccess; }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
  memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n,
                              void *st) {
  ++hostToDevice;
  memcpy((void *)(uintptr_t)d, s, n);
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) {
  ++deviceToHost;
  memcpy(d, (void *)(uintptr_t)s, n);
  return kSuccess;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) {
  ++memsets;
  return kSuccess;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *s) {
  ++memsets;
  return kSuccess;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *s) {
  ++memsets;
  return kSuccess;
}
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  *p = malloc(bytes ? bytes : 1);
  if (*p)
    ++livePinned;
  return *p ? kSuccess : kInvalidValue;
}
CUresult cuMemFreeHost(void *p) {
  free(p);
  --livePinned;
  return kSuccess;
}
