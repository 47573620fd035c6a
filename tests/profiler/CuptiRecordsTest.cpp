//===- CuptiRecordsTest.cpp - Parsing recorded CUPTI activity records -----===//
//
// The records are the toolkit's own structs (cupti_activity.h), filled the
// way CUPTI fills them for one launch: a cudaLaunchKernel runtime record, a
// kernel, a memcpy and a memset, NVTX start/end markers in the "cuvil"
// domain with their marker data (the op id payload), and an external
// correlation record. They are laid out in one 8-byte aligned buffer as an
// activity buffer holds them, and walked record by record.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#if CUVIL_HAVE_CUPTI
#include <cupti_activity.h>

#include <cstdlib>
#include <cstring>

using namespace cuvil::profiler;

namespace {

constexpr uint32_t kPid = 1234, kTid = 1235;

/// An activity buffer: records back to back, each 8-byte aligned.
class ActivityBuffer {
public:
  template <typename Record> void append(const Record &record) {
    size_t at = bytes.size();
    bytes.resize(at + ((sizeof(Record) + 7) & ~size_t(7)));
    std::memcpy(bytes.data() + at, &record, sizeof(Record));
    offsets.push_back(at);
  }
  /// Hands every record to the parser; returns how many it accepted.
  int feed(CuptiRecordParser &parser) const {
    int accepted = 0;
    for (size_t offset : offsets)
      accepted += parser.add(bytes.data() + offset);
    return accepted;
  }

private:
  // uint64_t storage keeps the buffer 8-byte aligned like CUPTI's.
  struct Bytes {
    std::vector<uint64_t> words;
    size_t count = 0;
    size_t size() const { return count; }
    void resize(size_t n) {
      words.resize((n + 7) / 8);
      count = n;
    }
    uint8_t *data() { return reinterpret_cast<uint8_t *>(words.data()); }
    const uint8_t *data() const {
      return reinterpret_cast<const uint8_t *>(words.data());
    }
  } bytes;
  std::vector<size_t> offsets;
};

template <typename Record> Record zeroed(CUpti_ActivityKind kind) {
  Record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

ActivityBuffer recordedLaunch() {
  ActivityBuffer buffer;
  auto start = zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  start.timestamp = 1000;
  start.id = 5;
  start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  start.objectId.pt.processId = kPid;
  start.objectId.pt.threadId = kTid;
  start.name = "cuvil.matmul";
  start.domain = "cuvil";
  buffer.append(start);

  auto api = zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  api.cbid = 211; // cudaLaunchKernel_v7000
  api.start = 1100;
  api.end = 1300;
  api.processId = kPid;
  api.threadId = kTid;
  api.correlationId = 77;
  buffer.append(api);

  auto external = zeroed<CUpti_ActivityExternalCorrelation>(
      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  external.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  external.externalId = 12; // the IR op id the runtime pushed
  external.correlationId = 77;
  buffer.append(external);

  auto kernel =
      zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.start = 1500;
  kernel.end = 4500;
  kernel.deviceId = 0;
  kernel.streamId = 7;
  kernel.correlationId = 77;
  kernel.gridX = 4;
  kernel.gridY = 2;
  kernel.gridZ = 1;
  kernel.blockX = 128;
  kernel.blockY = 1;
  kernel.blockZ = 1;
  kernel.registersPerThread = 64;
  kernel.name = "cuvil_matmul_128x128";
  buffer.append(kernel);

  auto end = zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  end.timestamp = 2000;
  end.id = 5;
  end.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  end.objectId.pt.processId = kPid;
  end.objectId.pt.threadId = kTid;
  buffer.append(end);

  auto data =
      zeroed<CUpti_ActivityMarkerData2>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
  data.id = 5;
  data.payloadKind = CUPTI_METRIC_VALUE_KIND_INT64;
  data.payload.metricValueInt64 = 12;
  buffer.append(data);

  auto copyApi = api;
  copyApi.cbid = 41;
  copyApi.start = 5000;
  copyApi.end = 5600;
  copyApi.correlationId = 78;
  buffer.append(copyApi);

  auto copy = zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  copy.bytes = 4096;
  copy.start = 5100;
  copy.end = 5500;
  copy.streamId = 7;
  copy.correlationId = 78;
  buffer.append(copy);

  auto set = zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  set.bytes = 512;
  set.start = 4600;
  set.end = 4700;
  set.streamId = 7;
  set.correlationId = 79; // launched before collection began: no launcher
  buffer.append(set);

  auto device = zeroed<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  buffer.append(device); // a kind the parser does not convert
  return buffer;
}

const Event *find(const Trace &trace, std::string_view name) {
  for (const Event &e : trace.events)
    if (trace.str(e.name) == name)
      return &e;
  return nullptr;
}

} // namespace

TEST(CuptiRecords, ParsesAndJoinsARecordedLaunch) {
  ASSERT_TRUE(cuptiSupported());
  CuptiRecordParser parser;
  parser.callbackName = [](bool runtime, uint32_t cbid) {
    return runtime && cbid == 211 ? std::string("cudaLaunchKernel_v7000")
                                  : std::string();
  };
  ActivityBuffer buffer = recordedLaunch();
  EXPECT_EQ(buffer.feed(parser), 9);
  EXPECT_EQ(parser.ignoredRecords(), 1u);
  Trace trace = parser.finish();
  ASSERT_EQ(trace.events.size(), 6u);

  const Event *range = find(trace, "cuvil.matmul");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->kind, EventKind::Nvtx);
  EXPECT_EQ(range->startNs, 1000);
  EXPECT_EQ(range->durationNs, 1000);
  EXPECT_EQ(range->opId, 12); // marker data payload, "cuvil" domain

  const Event *launch = find(trace, "cudaLaunchKernel_v7000");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->kind, EventKind::RuntimeApi);
  EXPECT_EQ(trace.threads[launch->thread].pid, kPid);
  EXPECT_EQ(trace.threads[launch->thread].tid, kTid);
  EXPECT_EQ(launch->opId, 12); // external correlation

  const Event *kernel = find(trace, "cuvil_matmul_128x128");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->kind, EventKind::GpuKernel);
  EXPECT_EQ(kernel->durationNs, 3000);
  EXPECT_EQ(kernel->opId, 12);
  EXPECT_EQ(trace.arg(*kernel, "grid"), "4x2x1");
  EXPECT_EQ(trace.arg(*kernel, "block"), "128x1x1");
  EXPECT_EQ(trace.arg(*kernel, "registers"), "64");
  const ThreadInfo &stream = trace.threads[kernel->thread];
  EXPECT_EQ(trace.str(stream.name), "stream 7");
  EXPECT_EQ(trace.str(stream.processName), "GPU 0");
  std::string stack;
  for (FrameId f : trace.stackFrames(kernel->stack))
    stack += std::string(trace.str(trace.frames[f].name)) + ";";
  EXPECT_EQ(stack, "cuvil.matmul;cudaLaunchKernel_v7000;");

  const Event *copy = find(trace, "Memcpy DtoH");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(trace.arg(*copy, "bytes"), "4096");
  EXPECT_EQ(copy->opId, kNoOp);
  EXPECT_NE(find(trace, "cuda runtime 41"), nullptr); // no name: the cbid
  const Event *set = find(trace, "Memset");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->stack, kNoStack);

  ASSERT_EQ(trace.flows.size(), 2u);
  for (const Flow &flow : trace.flows)
    EXPECT_EQ(trace.events[flow.from].kind, EventKind::RuntimeApi);

  // The parser starts over after finish().
  EXPECT_TRUE(parser.finish().events.empty());
}

TEST(CuptiRecords, UnmatchedMarkersAndOtherDomains) {
  CuptiRecordParser parser;
  ActivityBuffer buffer;
  auto end = zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  end.id = 9; // its start came before collection
  buffer.append(end);
  auto start = zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  start.id = 10;
  start.timestamp = 10;
  start.name = "user range";
  start.domain = "other";
  buffer.append(start);
  auto data =
      zeroed<CUpti_ActivityMarkerData2>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
  data.id = 10;
  data.payloadKind = CUPTI_METRIC_VALUE_KIND_UINT64;
  data.payload.metricValueUint64 = 3;
  buffer.append(data);
  auto close = start;
  close.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  close.timestamp = 30;
  close.name = nullptr;
  buffer.append(close);
  auto open = start;
  open.id = 11; // never closed: dropped
  buffer.append(open);
  auto mark = start;
  mark.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  mark.id = 12;
  mark.name = "checkpoint";
  buffer.append(mark);
  EXPECT_EQ(buffer.feed(parser), 5);
  Trace trace = parser.finish();
  ASSERT_EQ(trace.events.size(), 2u);
  const Event *range = find(trace, "user range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->durationNs, 20);
  EXPECT_EQ(range->opId, kNoOp); // payloads of other domains are not op ids
  EXPECT_EQ(find(trace, "checkpoint")->durationNs, 0);
}

TEST(CuptiCollector, LoadsLibcuptiOrNamesEveryPlaceTried) {
  auto collector = CuptiCollector::open();
  if (!collector) {
    EXPECT_NE(collector.error().message.find("tried"), std::string::npos);
    EXPECT_NE(collector.error().message.find("CUPTI_LIBRARY"),
              std::string::npos);
    return;
  }
  EXPECT_FALSE((*collector)->libraryPath().empty());
  // Without a usable GPU, starting fails with a reason instead of crashing;
  // with one, it collects until stopped.
  bool started = (*collector)->start();
  if (!started) {
    EXPECT_FALSE((*collector)->error().empty());
  } else {
    (*collector)->stop();
    (*collector)->takeTrace();
  }
}

TEST(CuptiCollector, AWrongLibraryPathIsReported) {
  setenv("CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
  setenv("CUDA_HOME", "/nonexistent-cuda", 1);
  auto collector = CuptiCollector::open();
  unsetenv("CUPTI_LIBRARY");
  unsetenv("CUDA_HOME");
  if (!collector) { // no libcupti on the loader path either
    EXPECT_NE(collector.error().message.find("/nonexistent/libcupti.so"),
              std::string::npos);
  } else {
    EXPECT_NE((*collector)->libraryPath(), "/nonexistent/libcupti.so");
  }
}

#else

TEST(CuptiRecords, CollectorReportsMissingHeaders) {
  using namespace cuvil::profiler;
  EXPECT_FALSE(cuptiSupported());
  auto collector = CuptiCollector::open();
  ASSERT_FALSE(collector);
  EXPECT_NE(collector.error().message.find("CUPTI"), std::string::npos);
}

#endif
