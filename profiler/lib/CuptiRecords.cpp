//===- CuptiRecords.cpp - CUPTI activity records to trace events ----------===//
//
// Uses the record structs of the CUDA toolkit's cupti_activity.h (kernel,
// memcpy, memset, runtime/driver API, NVTX marker and marker data, external
// correlation). Without those headers the parser converts nothing.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Profiler/Collectors.h"

#if CUVIL_HAVE_CUPTI
#include <cupti_activity.h>
#endif

#include <cstring>

namespace cuvil::profiler {

CuptiRecordParser::CuptiRecordParser() = default;

#if CUVIL_HAVE_CUPTI

bool cuptiSupported() { return true; }

namespace {

const char *memcpyName(uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "Memcpy HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "Memcpy DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "Memcpy DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
    return "Memcpy HtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return "Memcpy PtoP";
  default:
    return "Memcpy";
  }
}

/// GPU work: one track per stream, in a "process" per device.
uint32_t streamThread(Trace &trace, uint32_t device, uint32_t stream) {
  uint32_t t = trace.thread(kGpuProcessBase + device, stream);
  if (!trace.threads[t].name) {
    trace.threads[t].name = trace.intern("stream " + std::to_string(stream));
    trace.threads[t].processName =
        trace.intern("GPU " + std::to_string(device));
  }
  return t;
}

} // namespace

bool CuptiRecordParser::add(const void *record) {
  const auto *activity = static_cast<const CUpti_Activity *>(record);
  switch (activity->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const auto *k = static_cast<const CUpti_ActivityKernel10 *>(record);
    Event e;
    e.startNs = static_cast<int64_t>(k->start);
    e.durationNs = static_cast<int64_t>(k->end - k->start);
    e.name = trace.intern(k->name ? k->name : "kernel");
    e.category = trace.intern("kernel");
    e.kind = EventKind::GpuKernel;
    e.thread = streamThread(trace, k->deviceId, k->streamId);
    e.correlation = k->correlationId;
    auto number = [&](int64_t v) { return trace.intern(std::to_string(v)); };
    e.args = trace.addArgs(
        {{trace.intern("grid"), trace.intern(std::to_string(k->gridX) + "x" +
                                             std::to_string(k->gridY) + "x" +
                                             std::to_string(k->gridZ))},
         {trace.intern("block"), trace.intern(std::to_string(k->blockX) + "x" +
                                              std::to_string(k->blockY) + "x" +
                                              std::to_string(k->blockZ))},
         {trace.intern("registers"), number(k->registersPerThread)}});
    trace.events.push_back(e);
    return true;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto *m = static_cast<const CUpti_ActivityMemcpy6 *>(record);
    Event e;
    e.startNs = static_cast<int64_t>(m->start);
    e.durationNs = static_cast<int64_t>(m->end - m->start);
    e.name = trace.intern(memcpyName(m->copyKind));
    e.category = trace.intern("gpu_memcpy");
    e.kind = EventKind::Memcpy;
    e.thread = streamThread(trace, m->deviceId, m->streamId);
    e.correlation = m->correlationId;
    e.args = trace.addArgs(
        {{trace.intern("bytes"), trace.intern(std::to_string(m->bytes))}});
    trace.events.push_back(e);
    return true;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const auto *m = static_cast<const CUpti_ActivityMemset4 *>(record);
    Event e;
    e.startNs = static_cast<int64_t>(m->start);
    e.durationNs = static_cast<int64_t>(m->end - m->start);
    e.name = trace.intern("Memset");
    e.category = trace.intern("gpu_memset");
    e.kind = EventKind::Memcpy;
    e.thread = streamThread(trace, m->deviceId, m->streamId);
    e.correlation = m->correlationId;
    e.args = trace.addArgs(
        {{trace.intern("bytes"), trace.intern(std::to_string(m->bytes))}});
    trace.events.push_back(e);
    return true;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const auto *a = static_cast<const CUpti_ActivityAPI *>(record);
    bool runtime = activity->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    Event e;
    e.startNs = static_cast<int64_t>(a->start);
    e.durationNs = static_cast<int64_t>(a->end - a->start);
    std::string name = callbackName ? callbackName(runtime, a->cbid) : "";
    if (name.empty())
      name = std::string(runtime ? "cuda runtime " : "cuda driver ") +
             std::to_string(a->cbid);
    e.name = trace.intern(name);
    e.category = trace.intern(runtime ? "cuda_runtime" : "cuda_driver");
    e.kind = EventKind::RuntimeApi;
    e.thread = trace.thread(a->processId, a->threadId);
    e.correlation = a->correlationId;
    trace.events.push_back(e);
    return true;
  }
  case CUPTI_ACTIVITY_KIND_MARKER: {
    const auto *m = static_cast<const CUpti_ActivityMarker2 *>(record);
    uint32_t thread =
        trace.thread(m->objectId.pt.processId, m->objectId.pt.threadId);
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
      OpenMarker open;
      open.startNs = static_cast<int64_t>(m->timestamp);
      open.thread = thread;
      open.name = trace.intern(m->name ? m->name : "");
      open.cuvilDomain = m->domain && std::strcmp(m->domain, "cuvil") == 0;
      openMarkers[m->id] = open;
      return true;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
      auto found = openMarkers.find(m->id);
      if (found == openMarkers.end()) {
        ++ignored; // an end whose start came before collection began
        return false;
      }
      OpenMarker open = found->second;
      openMarkers.erase(found);
      Event e;
      e.startNs = open.startNs;
      e.durationNs = static_cast<int64_t>(m->timestamp) - open.startNs;
      e.name = open.name;
      e.category = trace.intern("nvtx");
      e.kind = EventKind::Nvtx;
      e.thread = open.thread;
      if (open.cuvilDomain) // its payload (marker data) may come later
        cuvilMarkers.emplace_back(uint32_t(trace.events.size()), m->id);
      trace.events.push_back(e);
      return true;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
      Event e;
      e.startNs = static_cast<int64_t>(m->timestamp);
      e.name = trace.intern(m->name ? m->name : "");
      e.category = trace.intern("nvtx");
      e.kind = EventKind::Nvtx;
      e.thread = thread;
      trace.events.push_back(e);
      return true;
    }
    ++ignored;
    return false;
  }
  case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
    const auto *d = static_cast<const CUpti_ActivityMarkerData2 *>(record);
    if (d->payloadKind == CUPTI_METRIC_VALUE_KIND_INT64)
      markerPayloads[d->id] = d->payload.metricValueInt64;
    else if (d->payloadKind == CUPTI_METRIC_VALUE_KIND_UINT64)
      markerPayloads[d->id] =
          static_cast<int64_t>(d->payload.metricValueUint64);
    return true;
  }
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const auto *x =
        static_cast<const CUpti_ActivityExternalCorrelation *>(record);
    externalIds[x->correlationId] = x->externalId;
    return true;
  }
  default:
    ++ignored;
    return false;
  }
}

#else

bool cuptiSupported() { return false; }

bool CuptiRecordParser::add(const void *) {
  ++ignored;
  return false;
}

#endif

Trace CuptiRecordParser::finish() {
  // Ranges still open at the end of collection are dropped: their end time
  // is unknown.
  openMarkers.clear();
  for (auto [event, marker] : cuvilMarkers) {
    auto payload = markerPayloads.find(marker);
    if (payload != markerPayloads.end())
      trace.events[event].opId = payload->second;
  }
  cuvilMarkers.clear();
  // External correlation ids are the IR op ids the runtime pushed around
  // its launches.
  for (Event &e : trace.events) {
    auto found = externalIds.find(static_cast<uint32_t>(e.correlation));
    if (e.correlation && e.opId == kNoOp && found != externalIds.end())
      e.opId = static_cast<int64_t>(found->second);
  }
  trace.sortEvents();
  trace.linkLaunches();
  Trace out = std::move(trace);
  trace = Trace();
  externalIds.clear();
  markerPayloads.clear();
  return out;
}

} // namespace cuvil::profiler
