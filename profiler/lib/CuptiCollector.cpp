//===- CuptiCollector.cpp - GPU activity through a dlopen'ed libcupti -----===//
//
// libcupti is never linked: it is looked up at run time, so Cuvil builds and
// runs where no CUDA is installed. CUPTI's activity API is process-wide, so
// one collector at a time owns the buffer callbacks.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Profiler/Collectors.h"

#if CUVIL_HAVE_CUPTI
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#endif

#include <cstdlib>
#include <dlfcn.h>

namespace cuvil::profiler {

#if CUVIL_HAVE_CUPTI

struct CuptiCollector::Api {
  void *handle = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
  decltype(&cuptiActivityFlushAll) flushAll = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) pushExternal = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) popExternal = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) timestampCallback = nullptr;
  decltype(&cuptiGetResultString) resultString = nullptr;
  decltype(&cuptiGetCallbackName) callbackName = nullptr;

  std::mutex mutex; // guards parser against CUPTI's completion thread
  CuptiRecordParser parser;
  bool running = false;

  ~Api() {
    if (handle)
      dlclose(handle);
  }

  std::string describe(CUptiResult result) const {
    const char *text = nullptr;
    if (resultString && resultString(result, &text) == CUPTI_SUCCESS && text)
      return text;
    return "CUPTI error " + std::to_string(int(result));
  }
};

namespace {

constexpr size_t kBufferSize = 8 << 20;
std::atomic<CuptiCollector::Api *> activeApi{nullptr};

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size,
                              size_t *maxNumRecords) {
  // Records must be 8-byte aligned; aligned_alloc's result is.
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferSize));
  *size = *buffer ? kBufferSize : 0;
  *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t,
                              size_t validSize) {
  CuptiCollector::Api *api = activeApi.load();
  if (api && validSize) {
    std::lock_guard<std::mutex> lock(api->mutex);
    CUpti_Activity *record = nullptr;
    while (api->nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS)
      api->parser.add(record);
  }
  std::free(buffer);
}

uint64_t CUPTIAPI steadyTimestamp() {
  return static_cast<uint64_t>(steadyNowNs());
}

// Kernels, copies, sets and runtime calls are needed; the rest enrich the
// trace where this CUPTI supports them.
const CUpti_ActivityKind kRequiredKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME};
const CUpti_ActivityKind kOptionalKinds[] = {
    CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

std::vector<std::string> candidatePaths() {
  std::vector<std::string> paths;
  if (const char *explicitPath = std::getenv("CUPTI_LIBRARY"))
    paths.push_back(explicitPath);
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = std::getenv(variable)) {
      paths.push_back(std::string(home) + "/extras/CUPTI/lib64/libcupti.so");
      paths.push_back(std::string(home) + "/lib64/libcupti.so");
      paths.push_back(std::string(home) + "/lib/libcupti.so");
    }
  paths.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
  paths.push_back("/usr/local/cuda/lib64/libcupti.so");
  paths.push_back("libcupti.so"); // the loader's own search path
  paths.push_back("libcupti.so.13");
  paths.push_back("libcupti.so.12");
  return paths;
}

} // namespace

Expected<std::unique_ptr<CuptiCollector>> CuptiCollector::open() {
  auto api = std::make_unique<Api>();
  std::string tried, loaded;
  for (const std::string &path : candidatePaths()) {
    api->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (api->handle) {
      loaded = path;
      break;
    }
    const char *why = dlerror();
    tried += "\n  " + path + ": " + (why ? why : "not found");
  }
  TraceError error;
  error.path = "libcupti";
  if (!api->handle) {
    error.message = "cannot load libcupti; tried:" + tried +
                    "\nInstall the CUDA toolkit's CUPTI or set CUPTI_LIBRARY "
                    "to the library's path";
    return error;
  }
  auto resolve = [&](auto &slot, const char *name, bool required) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        dlsym(api->handle, name));
    if (!slot && required)
      error.message += std::string(error.message.empty() ? "" : ", ") + name;
  };
  resolve(api->registerCallbacks, "cuptiActivityRegisterCallbacks", true);
  resolve(api->enable, "cuptiActivityEnable", true);
  resolve(api->disable, "cuptiActivityDisable", true);
  resolve(api->nextRecord, "cuptiActivityGetNextRecord", true);
  resolve(api->flushAll, "cuptiActivityFlushAll", true);
  resolve(api->pushExternal, "cuptiActivityPushExternalCorrelationId", false);
  resolve(api->popExternal, "cuptiActivityPopExternalCorrelationId", false);
  resolve(api->timestampCallback, "cuptiActivityRegisterTimestampCallback",
          false);
  resolve(api->resultString, "cuptiGetResultString", false);
  resolve(api->callbackName, "cuptiGetCallbackName", false);
  if (!error.message.empty()) {
    error.message = loaded + " lacks " + error.message +
                    "; it is older than the CUPTI Cuvil was built against";
    return error;
  }
  auto namer = api->callbackName;
  api->parser.callbackName = [namer](bool runtime, uint32_t cbid) {
    const char *name = nullptr;
    if (namer &&
        namer(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                      : CUPTI_CB_DOMAIN_DRIVER_API,
              cbid, &name) == CUPTI_SUCCESS &&
        name)
      return std::string(name);
    return std::string();
  };
  std::unique_ptr<CuptiCollector> collector(new CuptiCollector());
  collector->api = std::move(api);
  collector->library = loaded;
  return std::move(collector);
}

CuptiCollector::~CuptiCollector() {
  if (api && api->running)
    stop();
}

bool CuptiCollector::start() {
  Api *expected = nullptr;
  if (!activeApi.compare_exchange_strong(expected, api.get())) {
    lastError = "another CuptiCollector is already collecting (CUPTI's "
                "activity API is process-wide); stop it first";
    return false;
  }
  if (api->timestampCallback) // CUPTI then shares the recorder's clock
    api->timestampCallback(&steadyTimestamp);
  CUptiResult result =
      api->registerCallbacks(&bufferRequested, &bufferCompleted);
  if (result != CUPTI_SUCCESS) {
    lastError =
        "cuptiActivityRegisterCallbacks failed: " + api->describe(result);
    activeApi.store(nullptr);
    return false;
  }
  for (CUpti_ActivityKind kind : kRequiredKinds) {
    result = api->enable(kind);
    if (result != CUPTI_SUCCESS) {
      lastError = "cuptiActivityEnable(" + std::to_string(int(kind)) +
                  ") failed: " + api->describe(result) +
                  " (is a CUDA driver and GPU present?)";
      for (CUpti_ActivityKind k : kRequiredKinds)
        api->disable(k);
      activeApi.store(nullptr);
      return false;
    }
  }
  for (CUpti_ActivityKind kind : kOptionalKinds)
    api->enable(kind); // unsupported kinds are simply not collected
  api->running = true;
  return true;
}

void CuptiCollector::stop() {
  if (!api->running)
    return;
  api->flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind kind : kRequiredKinds)
    api->disable(kind);
  for (CUpti_ActivityKind kind : kOptionalKinds)
    api->disable(kind);
  api->flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  api->running = false;
  activeApi.store(nullptr);
}

void CuptiCollector::pushExternalId(uint64_t id) {
  if (api->pushExternal)
    api->pushExternal(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void CuptiCollector::popExternalId() {
  uint64_t last = 0;
  if (api->popExternal)
    api->popExternal(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

Trace CuptiCollector::takeTrace() {
  std::lock_guard<std::mutex> lock(api->mutex);
  return api->parser.finish();
}

#else // !CUVIL_HAVE_CUPTI

struct CuptiCollector::Api {};

Expected<std::unique_ptr<CuptiCollector>> CuptiCollector::open() {
  TraceError error;
  error.path = "libcupti";
  error.message = "this Cuvil was built without the CUPTI headers "
                  "(cupti_activity.h); reconfigure with the CUDA toolkit "
                  "installed (CUDA_HOME or /usr/local/cuda)";
  return error;
}
CuptiCollector::~CuptiCollector() = default;
bool CuptiCollector::start() { return false; }
void CuptiCollector::stop() {}
void CuptiCollector::pushExternalId(uint64_t) {}
void CuptiCollector::popExternalId() {}
Trace CuptiCollector::takeTrace() { return Trace(); }

#endif

} // namespace cuvil::profiler
