//===- bench_profiler.cpp - Profiler load, flame-tree and recorder costs --===//
//
//   cuvil-bench-profiler [EVENTS] [--keep PATH]
//
// Writes a generated Chrome trace of EVENTS (default 1,000,000) events --
// Python calls (64 distinct stacks, 3 to 10 frames) enclosing IR ops (each at
// 4 source lines) enclosing kernels on 4 threads, with flows -- then times:
// reading it, building the flame tree, the per-op table, a range selection,
// a search, and writing it back. Also times an EventRecorder::Scope with
// recording off and on, and an NvtxRange without a tool attached. Exits 1
// when opening (reading plus the flame tree) takes 3 s or more.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Profiler/Profiler.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace cuvil::profiler;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// A trace shaped like a profiled model: per thread, calls of 10 ops each
/// holding one kernel, so 1 call + 10 ops + 10 kernels = 21 events a call.
Trace generate(size_t target) {
  Trace trace;
  const char *ops[] = {"cuvil.matmul",  "cuvil.add",        "cuvil.relu",
                       "cuvil.softmax", "cuvil.exp",        "cuvil.layer_norm",
                       "cuvil.conv2d",  "cuvil.max_pool2d", "cuvil.gelu",
                       "cuvil.sum"};
  StringId opNames[10], kernelNames[10], locs[10][4];
  for (int i = 0; i < 10; ++i) {
    opNames[i] = trace.intern(ops[i]);
    kernelNames[i] = trace.intern(std::string(ops[i] + 6) + "_kernel_" +
                                  std::to_string(i * 64) + "x128");
    for (int l = 0; l < 4; ++l) // each op at 4 source lines
      locs[i][l] =
          trace.intern("model.py:" + std::to_string(10 + i + 20 * l) + ":9");
  }
  StringId python = trace.intern("python"), cpuOp = trace.intern("cpu_kernel"),
           call = trace.intern("forward");
  // 64 distinct Python stacks, 3 to 10 frames deep, over 8 modules.
  std::vector<StackId> stacks;
  for (int s = 0; s < 64; ++s) {
    std::vector<FrameId> frames = {trace.frame("<module>", "run.py", 3),
                                   trace.frame("main", "run.py", 12)};
    for (int d = 0; d < 1 + s % 8; ++d)
      frames.push_back(trace.frame("layer" + std::to_string((s + d) % 16),
                                   "model" + std::to_string(d) + ".py",
                                   uint32_t(20 + s)));
    stacks.push_back(trace.stack(frames));
  }
  const int threads = 4;
  size_t calls = target / 21 / threads + 1;
  uint64_t correlation = 0;
  for (int t = 0; t < threads; ++t) {
    uint32_t thread = trace.thread(4242, 100 + t);
    trace.threads[thread].name = trace.intern("worker " + std::to_string(t));
    trace.threads[thread].processName = trace.intern("bench");
    int64_t now = 1000;
    for (size_t c = 0; c < calls && trace.events.size() < target; ++c) {
      Event callEvent;
      callEvent.startNs = now;
      callEvent.name = call;
      callEvent.category = python;
      callEvent.kind = EventKind::Python;
      callEvent.thread = thread;
      callEvent.stack = stacks[(c * 7 + t) % stacks.size()];
      callEvent.correlation = ++correlation;
      size_t callIndex = trace.events.size();
      trace.events.push_back(callEvent);
      int64_t at = now + 100;
      for (int o = 0; o < 10; ++o) {
        int64_t dur = 1000 + ((c * 7 + o * 13) % 50) * 20;
        Event op;
        op.startNs = at;
        op.durationNs = dur;
        op.name = opNames[o];
        op.category = cpuOp;
        op.kind = EventKind::CpuKernel;
        op.thread = thread;
        op.opId = o;
        op.loc = locs[o][c % 4];
        op.correlation = callEvent.correlation;
        trace.events.push_back(op);
        Event kernel = op;
        kernel.startNs = at + 50;
        kernel.durationNs = dur - 100;
        kernel.name = kernelNames[o];
        kernel.correlation = 0;
        trace.events.push_back(kernel);
        at += dur + 10;
      }
      trace.events[callIndex].durationNs = at - now + 50;
      trace.flows.push_back({uint32_t(callIndex), uint32_t(callIndex + 1)});
      now = at + 200;
    }
  }
  return trace;
}

void timeRecorder() {
  EventRecorder recorder;
  uint32_t name = recorder.intern("cuvil.matmul");
  const int off = 20000000, on = 2000000, nvtx = 5000000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < off; ++i) {
    EventRecorder::Scope scope(recorder, name, i);
    asm volatile("" ::: "memory");
  }
  double offNs = secondsSince(start) * 1e9 / off;
  recorder.setEnabled(true);
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < on; ++i) {
    EventRecorder::Scope scope(recorder, name, i);
    asm volatile("" ::: "memory");
  }
  double onNs = secondsSince(start) * 1e9 / on;
  recorder.setEnabled(false);
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < nvtx; ++i) {
    NvtxRange range("cuvil.matmul", i);
    asm volatile("" ::: "memory");
  }
  double nvtxNs = secondsSince(start) * 1e9 / nvtx;
  start = std::chrono::steady_clock::now();
  Trace recorded = recorder.takeTrace();
  double takeS = secondsSince(start);
  std::printf("recorder scope, recording off:  %8.2f ns per kernel\n", offNs);
  std::printf("recorder scope, recording on:   %8.2f ns per kernel\n", onNs);
  std::printf("NvtxRange, no tool attached:    %8.2f ns per kernel%s\n", nvtxNs,
              nvtxAvailable() ? "" : " (NVTX compiled out)");
  std::printf("takeTrace of %zu events:       %8.3f s\n",
              recorded.events.size(), takeS);
}

} // namespace

int main(int argc, char **argv) {
  size_t events = 1000000;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--keep") && i + 1 < argc)
      keep = argv[++i];
    else
      events = std::strtoull(argv[i], nullptr, 10);
  }
  std::string path = keep.empty() ? "/tmp/cuvil-bench-profiler-" +
                                        std::to_string(getpid()) + ".json"
                                  : keep;
  {
    Trace generated = generate(events);
    if (auto error = writeTraceFile(generated, path, TraceFormat::Chrome)) {
      std::fprintf(stderr, "%s\n", error->text().c_str());
      return 2;
    }
  }
  std::ifstream probe(path, std::ios::binary | std::ios::ate);
  double megabytes = double(probe.tellg()) / 1e6;

  auto start = std::chrono::steady_clock::now();
  Expected<Trace> trace = readTraceFile(path);
  double readS = secondsSince(start);
  if (!trace) {
    std::fprintf(stderr, "%s\n", trace.error().text().c_str());
    return 2;
  }
  start = std::chrono::steady_clock::now();
  CallTree tree = CallTree::build(*trace);
  double treeS = secondsSince(start);
  start = std::chrono::steady_clock::now();
  std::vector<OpRow> rows = opTable(*trace);
  double tableS = secondsSince(start);
  auto [begin, end] = trace->timeBounds();
  Selection window;
  window.beginNs = begin + (end - begin) / 4;
  window.endNs = begin + (end - begin) / 2;
  start = std::chrono::steady_clock::now();
  CallTree ranged = CallTree::build(*trace, window);
  double rangeS = secondsSince(start);
  start = std::chrono::steady_clock::now();
  CallTree::SearchResult found = tree.search("matmul");
  double searchS = secondsSince(start);
  start = std::chrono::steady_clock::now();
  std::string written = writeChromeTrace(*trace);
  double writeS = secondsSince(start);
  if (keep.empty())
    std::remove(path.c_str());

  std::printf("trace: %zu events, %zu flows, %.1f MB of Chrome JSON\n",
              trace->events.size(), trace->flows.size(), megabytes);
  std::printf("read Chrome trace:               %8.3f s\n", readS);
  std::printf("build flame tree (%zu nodes): %8.3f s\n", tree.nodes().size(),
              treeS);
  std::printf("per-op table (%zu rows):          %8.3f s\n", rows.size(),
              tableS);
  std::printf("flame tree of a quarter range:   %8.3f s (%zu nodes)\n", rangeS,
              ranged.nodes().size());
  std::printf("flame tree search \"matmul\":     %8.6f s (%zu frames)\n",
              searchS, found.matches.size());
  std::printf("write Chrome trace:              %8.3f s\n", writeS);
  std::printf("open (read + flame tree):        %8.3f s (budget 3 s)\n",
              readS + treeS);
  timeRecorder();
  return readS + treeS < 3.0 ? 0 : 1;
}
