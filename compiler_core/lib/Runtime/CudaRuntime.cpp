//===- CudaRuntime.cpp - The functions CUDA host code calls ---------------===//
//
// The `mgpu*` functions of MLIR's gpu-to-llvm ABI and cuvilCudaConstant,
// answered from the state of the CudaExecutable whose call is running on
// this thread (set by CudaExecutable::call). Modules are loaded once per
// executable (MLIR's host code loads and unloads one around every launch),
// the stream is the executable's own (created once; host code's create,
// destroy and synchronize are no-ops on it: the executable synchronizes
// once after the call's copies), and memory comes from the device's
// stream-ordered pool. A failing driver call records the first error and
// turns every later runtime call of that host call into a no-op; the
// executable reports it when the host code returns.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/CudaDriver.h"
#include "cuvil/Runtime/CudaExecutable.h"
#include "cuvil/Runtime/CudaRuntimeAbi.h"
#include "cuvil/Runtime/MemRefCall.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>

using namespace cuvil;
using namespace cuvil::cuda;

#if CUVIL_HAVE_CUDA_H

namespace cuvil::cuda {

/// What the calls of one executable share.
struct ExecutableState {
  const Driver *driver = nullptr;
  int device = 0;
  std::mutex mutex; ///< one call at a time uses the stream and caches
  CUstream stream = nullptr;
  CUmemoryPool pool = nullptr;
  std::map<const void *, CUmodule> modules;
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
  /// Kernel number of each function (its name ends in `_k<N>`), for the
  /// profiling hooks; -1 when it has none.
  std::map<CUfunction, int32_t> kernelNumbers;
  std::map<const void *, CUdeviceptr> constants;
  /// Pinned staging memory for host copies that no call holds now: a call
  /// takes a buffer and gives it back once its copies are done (a queued
  /// call holds its own until it is waited for).
  std::vector<std::pair<void *, size_t>> spareStaging;
  CopyStats stats;
};

} // namespace cuvil::cuda

namespace {

/// Bytes the device's pool keeps cached between calls: 2 GiB, or
/// CUVIL_CUDA_POOL_MB, or what a runtime reserved (reservePool).
const uint64_t defaultPoolBytes = [] {
  const char *mb = std::getenv("CUVIL_CUDA_POOL_MB");
  uint64_t value = mb ? std::strtoull(mb, nullptr, 10) : 2048;
  return value << 20;
}();
std::mutex poolMutex;
std::map<int, uint64_t> reservedPoolBytes; ///< by device

uint64_t poolBytes(int device) {
  std::lock_guard<std::mutex> lock(poolMutex);
  auto it = reservedPoolBytes.find(device);
  return it == reservedPoolBytes.end() ? defaultPoolBytes : it->second;
}

/// The host call in progress on this thread.
struct CallState {
  ExecutableState *exe;
  /// The profiler's hooks for this call, or null.
  const KernelHooks *hooks = nullptr;
  std::string error;
  bool failed() const { return !error.empty(); }
};
thread_local CallState *current = nullptr;

/// The running call, or null (and a message) outside of one or after its
/// first failure.
CallState *active(const char *function) {
  if (!current) {
    std::fprintf(stderr,
                 "cuvil: %s called outside a Cuvil CUDA call; CUDA code "
                 "compiled by Cuvil runs only through its runtime\n",
                 function);
    return nullptr;
  }
  return current->failed() ? nullptr : current;
}

/// Records a failed driver call; true when `status` is success.
bool check(CallState *call, CUresult status, const char *what) {
  if (status == CUDA_SUCCESS)
    return true;
  if (!call->failed())
    call->error = call->exe->driver->describe(status, what);
  return false;
}

CUstream streamOf(CallState *call, void *stream) {
  return stream ? static_cast<CUstream>(stream) : call->exe->stream;
}

/// N of a kernel named `<function>_k<N>` (cuvil-cuda-merge-kernel-modules
/// names them so), or -1.
int32_t kernelNumber(const char *name) {
  std::string_view text(name);
  size_t at = text.rfind("_k");
  if (at == std::string_view::npos || at + 2 >= text.size())
    return -1;
  int32_t number = 0;
  for (char c : text.substr(at + 2)) {
    if (c < '0' || c > '9' || number > 1'000'000)
      return -1;
    number = number * 10 + (c - '0');
  }
  return number;
}

// -- The functions host code calls ----------------------------------------

void *mgpuModuleLoad(void *data, size_t /*bytes*/) {
  CallState *call = active("mgpuModuleLoad");
  if (!call)
    return nullptr;
  ExecutableState &exe = *call->exe;
  auto it = exe.modules.find(data);
  if (it != exe.modules.end())
    return it->second;
  CUmodule module = nullptr;
  if (!check(call, exe.driver->cuModuleLoadData(&module, data),
             "loading the GPU code (cuModuleLoadData)"))
    return nullptr;
  exe.modules[data] = module;
  return module;
}

void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  // PTX: the driver compiles it for the device when loading it.
  return mgpuModuleLoad(data, 0);
}

void mgpuModuleUnload(void *) {
  // The executable owns its modules and unloads them when it goes.
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CallState *call = active("mgpuModuleGetFunction");
  if (!call || !module)
    return nullptr;
  ExecutableState &exe = *call->exe;
  auto key = std::make_pair(static_cast<CUmodule>(module), std::string(name));
  auto it = exe.functions.find(key);
  if (it != exe.functions.end())
    return it->second;
  CUfunction function = nullptr;
  if (!check(call, exe.driver->cuModuleGetFunction(&function, key.first, name),
             "finding a kernel (cuModuleGetFunction)"))
    return nullptr;
  exe.functions[key] = function;
  exe.kernelNumbers[function] = kernelNumber(name);
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  CallState *call = active("mgpuLaunchKernel");
  if (!call || !function)
    return;
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return; // an empty loop: nothing to run
  // The profiler sees each launch as its kernel (IR op, location): NVTX
  // ranges and CUPTI's correlation tie the GPU's work to it.
  int32_t kernel = -1;
  if (call->hooks) {
    auto it = call->exe->kernelNumbers.find(static_cast<CUfunction>(function));
    kernel = it == call->exe->kernelNumbers.end() ? -1 : it->second;
  }
  if (kernel >= 0)
    call->hooks->hook(call->hooks->context, kernel, 0);
  check(call,
        call->exe->driver->cuLaunchKernel(
            static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX,
            blockY, blockZ, sharedBytes, streamOf(call, stream), params, extra),
        "launching a kernel (cuLaunchKernel)");
  if (kernel >= 0)
    call->hooks->hook(call->hooks->context, kernel, 1);
}

void *mgpuStreamCreate() {
  CallState *call = active("mgpuStreamCreate");
  return call ? call->exe->stream : nullptr;
}

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *stream) {
  CallState *call = active("mgpuStreamSynchronize");
  // The call's own stream is synchronized once, after the copies out.
  if (call && stream && stream != call->exe->stream)
    check(call,
          call->exe->driver->cuStreamSynchronize(static_cast<CUstream>(stream)),
          "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  if (CallState *call = active("mgpuStreamWaitEvent"))
    check(call,
          call->exe->driver->cuStreamWaitEvent(streamOf(call, stream),
                                               static_cast<CUevent>(event), 0),
          "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  CallState *call = active("mgpuEventCreate");
  CUevent event = nullptr;
  if (call)
    check(call,
          call->exe->driver->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  if (current && event)
    current->exe->driver->cuEventDestroy(static_cast<CUevent>(event));
}

void mgpuEventSynchronize(void *event) {
  if (CallState *call = active("mgpuEventSynchronize"))
    check(call,
          call->exe->driver->cuEventSynchronize(static_cast<CUevent>(event)),
          "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  if (CallState *call = active("mgpuEventRecord"))
    check(call,
          call->exe->driver->cuEventRecord(static_cast<CUevent>(event),
                                           streamOf(call, stream)),
          "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t bytes, void *stream, bool /*isHostShared*/) {
  CallState *call = active("mgpuMemAlloc");
  if (!call || bytes == 0)
    return nullptr;
  CUdeviceptr pointer = 0;
  if (!check(call,
             call->exe->driver->cuMemAllocFromPoolAsync(
                 &pointer, bytes, call->exe->pool, streamOf(call, stream)),
             "allocating device memory (cuMemAllocFromPoolAsync)"))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *pointer, void *stream) {
  // Freed even after a failure in the call: the pool keeps no leaked blocks.
  if (!current || !pointer)
    return;
  CUresult status = current->exe->driver->cuMemFreeAsync(
      reinterpret_cast<CUdeviceptr>(pointer), streamOf(current, stream));
  if (!current->failed())
    check(current, status, "cuMemFreeAsync");
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (CallState *call = active("mgpuMemcpy"))
    check(call,
          call->exe->driver->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                           reinterpret_cast<CUdeviceptr>(src),
                                           bytes, streamOf(call, stream)),
          "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  if (CallState *call = active("mgpuMemset32"))
    check(call,
          call->exe->driver->cuMemsetD32Async(
              reinterpret_cast<CUdeviceptr>(dst), value, count,
              streamOf(call, stream)),
          "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  if (CallState *call = active("mgpuMemset16"))
    check(call,
          call->exe->driver->cuMemsetD16Async(
              reinterpret_cast<CUdeviceptr>(dst), value, count,
              streamOf(call, stream)),
          "cuMemsetD16Async");
}

void mgpuSetDefaultDevice(int32_t) {
  // The executable's device is current for the whole call.
}

void *cuvilCudaConstant(const void *host, int64_t bytes) {
  CallState *call = active(kConstantFunction);
  if (!call)
    return nullptr;
  ExecutableState &exe = *call->exe;
  auto it = exe.constants.find(host);
  if (it != exe.constants.end())
    return reinterpret_cast<void *>(it->second);
  CUdeviceptr device = 0;
  if (!check(call, exe.driver->cuMemAlloc(&device, bytes ? bytes : 1),
             "allocating device memory for a constant (cuMemAlloc)"))
    return nullptr;
  // Made once per executable; the copy runs before any kernel reads it.
  if (!check(call,
             exe.driver->cuMemcpyHtoDAsync(device, host, bytes, exe.stream),
             "copying a constant to the device (cuMemcpyHtoDAsync)")) {
    exe.driver->cuMemFree(device);
    return nullptr;
  }
  exe.stats.hostToDevice += 1;
  exe.stats.hostToDeviceBytes += bytes;
  exe.constants[host] = device;
  return reinterpret_cast<void *>(device);
}

} // namespace

const std::vector<RuntimeFunction> &cuda::runtimeFunctions() {
#define CUVIL_RUNTIME_FUNCTION(name)                                           \
  RuntimeFunction { #name, reinterpret_cast<void *>(&name) }
  static const std::vector<RuntimeFunction> table = {
      CUVIL_RUNTIME_FUNCTION(mgpuModuleLoad),
      CUVIL_RUNTIME_FUNCTION(mgpuModuleLoadJIT),
      CUVIL_RUNTIME_FUNCTION(mgpuModuleUnload),
      CUVIL_RUNTIME_FUNCTION(mgpuModuleGetFunction),
      CUVIL_RUNTIME_FUNCTION(mgpuLaunchKernel),
      CUVIL_RUNTIME_FUNCTION(mgpuStreamCreate),
      CUVIL_RUNTIME_FUNCTION(mgpuStreamDestroy),
      CUVIL_RUNTIME_FUNCTION(mgpuStreamSynchronize),
      CUVIL_RUNTIME_FUNCTION(mgpuStreamWaitEvent),
      CUVIL_RUNTIME_FUNCTION(mgpuEventCreate),
      CUVIL_RUNTIME_FUNCTION(mgpuEventDestroy),
      CUVIL_RUNTIME_FUNCTION(mgpuEventSynchronize),
      CUVIL_RUNTIME_FUNCTION(mgpuEventRecord),
      CUVIL_RUNTIME_FUNCTION(mgpuMemAlloc),
      CUVIL_RUNTIME_FUNCTION(mgpuMemFree),
      CUVIL_RUNTIME_FUNCTION(mgpuMemcpy),
      CUVIL_RUNTIME_FUNCTION(mgpuMemset32),
      CUVIL_RUNTIME_FUNCTION(mgpuMemset16),
      CUVIL_RUNTIME_FUNCTION(mgpuSetDefaultDevice),
      CUVIL_RUNTIME_FUNCTION(cuvilCudaConstant),
  };
#undef CUVIL_RUNTIME_FUNCTION
  return table;
}

// -- CudaExecutable --------------------------------------------------------

CudaExecutable::CudaExecutable(std::unique_ptr<Executable> host, int device,
                               std::vector<TensorSignature> inputs,
                               std::vector<TensorSignature> outputs,
                               std::vector<size_t> elementBytes)
    : host(std::move(host)), deviceIndex(device), inputs(std::move(inputs)),
      outputs(std::move(outputs)), elementBytes(std::move(elementBytes)),
      state(std::make_unique<ExecutableState>()) {}

std::unique_ptr<CudaExecutable>
CudaExecutable::create(std::unique_ptr<Executable> host, int device,
                       const std::vector<TensorSignature> &inputs,
                       const std::vector<TensorSignature> &outputs,
                       std::vector<size_t> elementBytes, std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver || !driver->makeCurrent(device, error))
    return nullptr;
  std::unique_ptr<CudaExecutable> exe(new CudaExecutable(
      std::move(host), device, inputs, outputs, std::move(elementBytes)));
  ExecutableState &s = *exe->state;
  s.driver = driver;
  s.device = device;
  CUresult status = driver->cuStreamCreate(&s.stream, CU_STREAM_NON_BLOCKING);
  if (status != CUDA_SUCCESS) {
    error = driver->describe(status, "cuStreamCreate");
    return nullptr;
  }
  CUdevice handle;
  driver->cuDeviceGet(&handle, device);
  status = driver->cuDeviceGetDefaultMemPool(&s.pool, handle);
  if (status != CUDA_SUCCESS) {
    error = driver->describe(status, "cuDeviceGetDefaultMemPool") +
            " (the device has no stream-ordered memory pool)";
    return nullptr;
  }
  cuuint64_t keep = poolBytes(device);
  driver->cuMemPoolSetAttribute(s.pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                &keep);
  return exe;
}

bool cuda::reservePool(int device, uint64_t bytes, std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver || !driver->makeCurrent(device, error))
    return false;
  CUdevice handle;
  CUmemoryPool pool = nullptr;
  CUresult status = driver->cuDeviceGet(&handle, device);
  if (status == CUDA_SUCCESS)
    status = driver->cuDeviceGetDefaultMemPool(&pool, handle);
  cuuint64_t keep = bytes;
  if (status == CUDA_SUCCESS)
    status = driver->cuMemPoolSetAttribute(
        pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  if (status != CUDA_SUCCESS) {
    error = driver->describe(status, "setting up the device's memory pool");
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(poolMutex);
    reservedPoolBytes[device] = bytes;
  }
  if (!bytes)
    return true;
  // Taken once and given back: the pool keeps it (up to the threshold).
  CUdeviceptr block = 0;
  status = driver->cuMemAllocFromPoolAsync(&block, bytes, pool, nullptr);
  if (status == CUDA_SUCCESS) {
    driver->cuMemFreeAsync(block, nullptr);
    status = driver->cuStreamSynchronize(nullptr);
  }
  if (status != CUDA_SUCCESS) {
    std::string what =
        "reserving " + std::to_string(bytes >> 20) + " MiB of device memory";
    error = driver->describe(status, what.c_str());
    return false;
  }
  return true;
}

CudaExecutable::~CudaExecutable() {
  ExecutableState &s = *state;
  if (!s.driver)
    return;
  std::string ignored;
  s.driver->makeCurrent(s.device, ignored);
  if (s.stream)
    s.driver->cuStreamSynchronize(s.stream);
  for (auto &[host, device] : s.constants)
    s.driver->cuMemFree(device);
  for (auto &[data, module] : s.modules)
    s.driver->cuModuleUnload(module);
  for (auto [data, bytes] : s.spareStaging)
    s.driver->cuMemFreeHost(data);
  if (s.stream)
    s.driver->cuStreamDestroy(s.stream);
}

size_t CudaExecutable::bytesOf(size_t argument, const Shapes *shapes) const {
  const TensorSignature &signature = argument < inputs.size()
                                         ? inputs[argument]
                                         : outputs[argument - inputs.size()];
  const std::vector<int64_t> &shape =
      shapes ? (*shapes)[argument] : signature.shape;
  size_t bytes = elementBytes[argument];
  for (int64_t size : shape)
    bytes *= static_cast<size_t>(size < 0 ? 0 : size);
  return bytes;
}

namespace {
/// Makes `state` the one runtime calls on this thread use, for a scope.
class ActiveCall {
public:
  explicit ActiveCall(ExecutableState &exe) : previous(current) {
    call.exe = &exe;
    current = &call;
  }
  ~ActiveCall() { current = previous; }
  CallState call;

private:
  CallState *previous;
};

/// Runs `body` as one call of `exe`'s code on this thread (its device
/// current, the runtime's functions answered from `exe`, `hooks` told of
/// each launch), waits for the stream unless told not to and reports the
/// call's first failure. The caller holds `exe.mutex`. True when nothing
/// failed.
template <typename Body>
bool runCall(ExecutableState &exe, const KernelHooks *hooks, Body body,
             bool wait = true) {
  std::string error;
  if (!exe.driver->makeCurrent(exe.device, error)) {
    reportCallFailure(error);
    return false;
  }
  ActiveCall active(exe);
  CallState *call = &active.call;
  call->hooks = hooks;
  body(call);
  if (wait || call->failed())
    check(call, exe.driver->cuStreamSynchronize(exe.stream),
          "running the kernels (cuStreamSynchronize)");
  exe.stats.calls += 1;
  if (call->failed())
    reportCallFailure(call->error);
  return !call->failed();
}

/// Pinned staging memory of at least `bytes` for one call's copies: a
/// spare buffer that is large enough, else a new one (the smallest spare
/// is freed for it). The caller holds the executable's mutex.
std::pair<void *, size_t> takeStaging(CallState *call, size_t bytes) {
  ExecutableState &s = *call->exe;
  auto &spare = s.spareStaging;
  auto fits = llvm::find_if(spare, [&](auto &b) { return b.second >= bytes; });
  if (fits != spare.end()) {
    auto buffer = *fits;
    spare.erase(fits);
    return buffer;
  }
  if (!spare.empty()) {
    auto smallest = llvm::min_element(
        spare, [](auto &x, auto &y) { return x.second < y.second; });
    s.driver->cuMemFreeHost(smallest->first);
    spare.erase(smallest);
  }
  void *data = nullptr;
  bytes = std::max<size_t>(bytes, 1);
  if (!check(call, s.driver->cuMemHostAlloc(&data, bytes, 0),
             "allocating pinned host memory (cuMemHostAlloc)"))
    return {nullptr, 0};
  return {data, bytes};
}

/// Spare staging buffers an executable keeps for its next calls.
constexpr size_t kSpareStaging = 4;

void giveBackStaging(ExecutableState &s, std::pair<void *, size_t> buffer) {
  if (!buffer.first)
    return;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.spareStaging.size() < kSpareStaging)
    s.spareStaging.push_back(buffer);
  else
    s.driver->cuMemFreeHost(buffer.first);
}

/// A call queued by CudaExecutable::enqueue.
class QueuedCall : public PendingCall {
public:
  explicit QueuedCall(ExecutableState &exe) : exe(exe) {}
  ~QueuedCall() override { finish(/*copyResults=*/false); }

  void wait() override { finish(/*copyResults=*/true); }

  std::pair<void *, size_t> staging{nullptr, 0};
  CUevent done = nullptr;
  struct Result {
    void *target;
    size_t offset, bytes;
  };
  std::vector<Result> results;

private:
  /// Waits for the call's event, copies the results out of the staging
  /// memory (unless dropped unwaited) and gives the memory back.
  void finish(bool copyResults) {
    if (finished)
      return;
    finished = true;
    std::string error;
    if (done) {
      if (!exe.driver->makeCurrent(exe.device, error)) {
        // No context here: the staging memory cannot be known free.
        if (copyResults)
          reportCallFailure(error);
        return;
      }
      CUresult status = exe.driver->cuEventSynchronize(done);
      exe.driver->cuEventDestroy(done);
      if (status != CUDA_SUCCESS)
        error = exe.driver->describe(
            status, "running the kernels (cuEventSynchronize)");
    }
    if (copyResults && error.empty())
      for (const Result &r : results)
        std::memcpy(r.target, static_cast<char *>(staging.first) + r.offset,
                    r.bytes);
    giveBackStaging(exe, staging);
    if (copyResults && !error.empty())
      reportCallFailure(error);
  }

  ExecutableState &exe;
  bool finished = false;
};
} // namespace

void CudaExecutable::call(void *const *in, void *const *out,
                          const KernelHooks *hooks,
                          const Shapes *shapes) const {
  enqueue(in, out, hooks, shapes)->wait();
}

std::unique_ptr<PendingCall>
CudaExecutable::enqueue(void *const *in, void *const *out,
                        const KernelHooks *hooks, const Shapes *shapes) const {
  ExecutableState &s = *state;
  auto queued = std::make_unique<QueuedCall>(s);
  std::lock_guard<std::mutex> lock(s.mutex);
  // Arguments (inputs then outputs) side by side in the staging memory.
  size_t count = inputs.size() + outputs.size(), total = 0;
  std::vector<size_t> bytes(count), offsets(count);
  for (size_t i = 0; i < count; ++i) {
    bytes[i] = bytesOf(i, shapes);
    offsets[i] = total;
    total += bytes[i];
  }
  bool ok = runCall(
      s, hooks,
      [&](CallState *call) {
        // Pinned staging: the copies in and out run asynchronously from it.
        queued->staging = takeStaging(call, total);
        char *staging = static_cast<char *>(queued->staging.first);
        if (!staging)
          return;
        std::vector<void *> device(count, nullptr);
        for (size_t i = 0; i < count && !call->failed(); ++i) {
          device[i] = mgpuMemAlloc(bytes[i], s.stream, false);
          if (i >= inputs.size() || !bytes[i])
            continue;
          std::memcpy(staging + offsets[i], in[i], bytes[i]);
          check(call,
                s.driver->cuMemcpyHtoDAsync(
                    reinterpret_cast<CUdeviceptr>(device[i]),
                    staging + offsets[i], bytes[i], s.stream),
                "copying an input to the device (cuMemcpyHtoDAsync)");
          s.stats.hostToDevice += 1;
          s.stats.hostToDeviceBytes += bytes[i];
        }
        if (!call->failed())
          host->call(device.data(), device.data() + inputs.size(), nullptr,
                     shapes);
        for (size_t i = inputs.size(); i < count && !call->failed(); ++i) {
          if (!bytes[i])
            continue;
          check(call,
                s.driver->cuMemcpyDtoHAsync(
                    staging + offsets[i],
                    reinterpret_cast<CUdeviceptr>(device[i]), bytes[i],
                    s.stream),
                "copying a result to the host (cuMemcpyDtoHAsync)");
          s.stats.deviceToHost += 1;
          s.stats.deviceToHostBytes += bytes[i];
        }
        for (void *pointer : device)
          if (pointer)
            s.driver->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer),
                                     s.stream);
        if (call->failed())
          return;
        // Recorded after the copies out: when it is reached, the results
        // are in the staging memory.
        CUevent event = nullptr;
        if (check(call,
                  s.driver->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                  "creating an event (cuEventCreate)")) {
          queued->done = event;
          check(call, s.driver->cuEventRecord(event, s.stream),
                "queueing the call's end (cuEventRecord)");
        }
      },
      /*wait=*/false);
  if (ok)
    for (size_t i = inputs.size(); i < count; ++i)
      queued->results.push_back({out[i - inputs.size()], offsets[i], bytes[i]});
  else
    queued->results.clear(); // reported: wait() only gives the memory back
  return queued;
}

bool CudaExecutable::callOnDevice(void *const *in, void *const *out,
                                  const KernelHooks *hooks) const {
  ExecutableState &s = *state;
  std::lock_guard<std::mutex> lock(s.mutex);
  runCall(s, hooks,
          [&](CallState *call) { host->call(in, out, nullptr, nullptr); });
  return true;
}

std::unique_ptr<DeviceBuffer> DeviceBuffer::allocate(int device, size_t bytes,
                                                     std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver || !driver->makeCurrent(device, error))
    return nullptr;
  CUdeviceptr pointer = 0;
  CUresult status = driver->cuMemAlloc(&pointer, bytes ? bytes : 1);
  if (status != CUDA_SUCCESS) {
    error = driver->describe(status, "allocating device memory (cuMemAlloc)") +
            " for " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
  return std::unique_ptr<DeviceBuffer>(
      new DeviceBuffer(device, reinterpret_cast<void *>(pointer), bytes));
}

DeviceBuffer::~DeviceBuffer() {
  std::string ignored;
  const Driver *driver = Driver::get(ignored);
  if (driver && driver->makeCurrent(deviceIndex, ignored))
    driver->cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
}

namespace {
/// A synchronous copy on the default stream.
bool copy(int device, void *dst, const void *src, size_t count, bool toDevice,
          std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver || !driver->makeCurrent(device, error))
    return false;
  CUresult status =
      toDevice ? driver->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                           src, count, nullptr)
               : driver->cuMemcpyDtoHAsync(
                     dst, reinterpret_cast<CUdeviceptr>(src), count, nullptr);
  if (status == CUDA_SUCCESS)
    status = driver->cuStreamSynchronize(nullptr);
  if (status != CUDA_SUCCESS) {
    error =
        driver->describe(status, toDevice ? "cuMemcpyHtoD" : "cuMemcpyDtoH");
    return false;
  }
  return true;
}
} // namespace

bool cuda::copyDeviceToHost(int device, const void *source, void *target,
                            size_t count, std::string &error) {
  return copy(device, target, source, count, false, error);
}

bool DeviceBuffer::copyFromHost(const void *host, size_t count,
                                std::string &error) {
  if (count > bytes) {
    error = "copying " + std::to_string(count) +
            " bytes into a device "
            "buffer of " +
            std::to_string(bytes);
    return false;
  }
  return copy(deviceIndex, pointer, host, count, true, error);
}

bool DeviceBuffer::copyToHost(void *host, size_t count,
                              std::string &error) const {
  if (count > bytes) {
    error = "copying " + std::to_string(count) +
            " bytes out of a device "
            "buffer of " +
            std::to_string(bytes);
    return false;
  }
  return copy(deviceIndex, host, pointer, count, false, error);
}

CopyStats CudaExecutable::copyStats() const {
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->stats;
}

#else // !CUVIL_HAVE_CUDA_H

CopyStats CudaExecutable::copyStats() const { return {}; }

namespace cuvil::cuda {
struct ExecutableState {};
} // namespace cuvil::cuda

const std::vector<RuntimeFunction> &cuda::runtimeFunctions() {
  static const std::vector<RuntimeFunction> none;
  return none;
}

std::unique_ptr<CudaExecutable>
CudaExecutable::create(std::unique_ptr<Executable>, int,
                       const std::vector<TensorSignature> &,
                       const std::vector<TensorSignature> &,
                       std::vector<size_t>, std::string &error) {
  availableDevices(error);
  return nullptr;
}
CudaExecutable::~CudaExecutable() = default;
void CudaExecutable::call(void *const *, void *const *, const KernelHooks *,
                          const Shapes *) const {}
std::unique_ptr<PendingCall>
CudaExecutable::enqueue(void *const *in, void *const *out,
                        const KernelHooks *hooks, const Shapes *shapes) const {
  return Executable::enqueue(in, out, hooks, shapes);
}
bool CudaExecutable::callOnDevice(void *const *, void *const *,
                                  const KernelHooks *) const {
  return false;
}
std::unique_ptr<DeviceBuffer> DeviceBuffer::allocate(int, size_t,
                                                     std::string &error) {
  availableDevices(error);
  return nullptr;
}
DeviceBuffer::~DeviceBuffer() = default;
bool DeviceBuffer::copyFromHost(const void *, size_t, std::string &error) {
  availableDevices(error);
  return false;
}
bool DeviceBuffer::copyToHost(void *, size_t, std::string &error) const {
  availableDevices(error);
  return false;
}
bool cuda::reservePool(int, uint64_t, std::string &error) {
  availableDevices(error);
  return false;
}
bool cuda::copyDeviceToHost(int, const void *, void *, size_t,
                            std::string &error) {
  availableDevices(error);
  return false;
}

#endif

std::vector<std::pair<std::string, uint64_t>> CudaExecutable::counters() const {
  CopyStats stats = copyStats();
  return {{"host_to_device", stats.hostToDevice},
          {"host_to_device_bytes", stats.hostToDeviceBytes},
          {"device_to_host", stats.deviceToHost},
          {"device_to_host_bytes", stats.deviceToHostBytes},
          {"calls", stats.calls}};
}
