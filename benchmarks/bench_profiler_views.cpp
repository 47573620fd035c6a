//===- bench_profiler_views.cpp - Opening and drawing a 1M-event profile --===//
//
//   bench-profiler-views [EVENTS] [--keep PATH]
//
// Writes a generated Chrome trace of EVENTS (default 1,000,000) events —
// Python calls from 48 call sites, NVTX ranges, CPU kernels (each op from
// one of 4 source lines) and GPU kernels on 4 threads and 2 streams — then
// times what the Workbench does to open it: read and analyze (timeline rows,
// call tree, per-op table), build the flame graph model, paint the flame graph
// and the timeline once into a QImage, and the whole ProfilerPage opening it
// off the GUI thread. Then times interactions: zooming into a frame, searching,
// zooming the timeline, aggregating a selected range. Exits 1 when opening
// takes 3 s or more.
//
//===----------------------------------------------------------------------===//

#include "FlameGraphModel.h"
#include "FlameGraphView.h"
#include "OpTableModel.h"
#include "ProfileData.h"
#include "ProfilerPage.h"
#include "TimelineView.h"

#include "cuvil/Profiler/Profiler.h"

#include <QApplication>
#include <QEventLoop>
#include <QImage>
#include <QPainter>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace cuvil::workbench;
namespace prof = cuvil::profiler;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Per call: 1 Python call, 2 NVTX ranges, 8 CPU kernels and 8 GPU
/// kernels (launched by the CPU kernels, flows between them): 19 events.
prof::Trace generate(size_t target) {
  prof::Trace trace;
  struct Op {
    const char *name, *loc;
  };
  const Op ops[] = {
      {"linalg.matmul", "/src/model/attention.py:31:15"},
      {"linalg.generic(subf,exp)", "/src/model/attention.py:19:9"},
      {"linalg.fill + linalg.batch_matmul", "/src/model/attention.py:33:12"},
      {"linalg.transpose", "/src/model/attention.py:28:16"},
      {"linalg.generic(mulf,addf)", "/src/model/norm.py:14:11"},
      {"linalg.generic(addf,sqrt,divf)", "/src/model/norm.py:15:12"},
      {"linalg.matmul + linalg.generic(addf,mulf,erf)",
       "/src/model/mlp.py:39:11"},
      {"linalg.generic(addf)", "/src/model/mlp.py:40:23"}};
  prof::StringId names[8], gpuNames[8];
  for (int i = 0; i < 8; ++i) {
    names[i] = trace.intern(ops[i].name);
    gpuNames[i] = trace.intern(std::string("cuvil_kernel_") +
                               std::to_string(i) + "_128x128");
  }
  prof::StringId forward = trace.intern("forward"),
                 python = trace.intern("python"), nvtx = trace.intern("nvtx"),
                 cpu = trace.intern("cpu_kernel"),
                 gpu = trace.intern("gpu_kernel"),
                 layers[2] = {trace.intern("encoder.layer0"),
                              trace.intern("encoder.layer1")};
  // 48 call sites: a driver, one of 6 pipelines, one of 8 request handlers
  // (each at its own line), so the flame tree has thousands of frames.
  std::vector<prof::StackId> stacks;
  const char *drivers[] = {"main", "evaluate"};
  for (int p = 0; p < 6; ++p)
    for (int h = 0; h < 8; ++h)
      stacks.push_back(trace.stack(
          {trace.frame("<module>", "/src/run.py", 3),
           trace.frame(drivers[p % 2], "/src/run.py", 12 + p % 2 * 10),
           trace.frame("pipeline_" + std::to_string(p),
                       "/src/serve/pipeline.py", uint32_t(30 + p * 12)),
           trace.frame("handle_request_" + std::to_string(h),
                       "/src/serve/handlers.py", uint32_t(100 + h * 9)),
           trace.frame("Model.forward", "/src/model/model.py", 40)}));
  // Each op is traced from one of 4 source lines (e.g. a layer's copies).
  std::vector<prof::StringId> lineLocs;
  for (int o = 0; o < 8; ++o)
    for (int v = 0; v < 4; ++v) {
      std::string loc = ops[o].loc;
      size_t colon = loc.find(':');
      size_t second = loc.find(':', colon + 1);
      int line = std::stoi(loc.substr(colon + 1, second - colon - 1)) + v * 100;
      lineLocs.push_back(trace.intern(loc.substr(0, colon + 1) +
                                      std::to_string(line) +
                                      loc.substr(second)));
    }
  const int threads = 4;
  size_t calls = target / 19 / threads + 1;
  uint64_t correlation = 0;
  for (int t = 0; t < threads; ++t) {
    uint32_t thread = trace.thread(4242, 100 + t);
    trace.threads[thread].name = trace.intern("worker " + std::to_string(t));
    trace.threads[thread].processName = trace.intern("bench");
    uint32_t stream = trace.thread(prof::kGpuProcessBase, 7 + t % 2);
    trace.threads[stream].name =
        trace.intern("stream " + std::to_string(7 + t % 2));
    trace.threads[stream].processName = trace.intern("GPU 0");
    int64_t now = 1000 + t * 333;
    for (size_t c = 0; c < calls && trace.events.size() < target; ++c) {
      prof::Event call;
      call.startNs = now;
      call.name = forward;
      call.category = python;
      call.kind = prof::EventKind::Python;
      call.thread = thread;
      call.stack = stacks[(c * 7 + size_t(t)) % stacks.size()];
      size_t callIndex = trace.events.size();
      trace.events.push_back(call);
      int64_t at = now + 100;
      for (int layer = 0; layer < 2; ++layer) {
        prof::Event range;
        range.startNs = at;
        range.name = layers[layer];
        range.category = nvtx;
        range.kind = prof::EventKind::Nvtx;
        range.thread = thread;
        size_t rangeIndex = trace.events.size();
        trace.events.push_back(range);
        at += 20;
        for (int o = layer * 4; o < layer * 4 + 4; ++o) {
          int64_t dur = 800 + int64_t((c * 7 + size_t(o) * 13) % 50) * 20 +
                        (o == 0 ? 2000 : 0);
          prof::Event op;
          op.startNs = at;
          op.durationNs = dur;
          op.name = names[o];
          op.category = cpu;
          op.kind = prof::EventKind::CpuKernel;
          op.thread = thread;
          op.opId = o;
          op.loc = lineLocs[size_t(o) * 4 + (c / 3 + size_t(o)) % 4];
          op.stack = call.stack;
          op.correlation = ++correlation;
          uint32_t opIndex = uint32_t(trace.events.size());
          trace.events.push_back(op);
          prof::Event kernel = op;
          kernel.startNs = at + 300;
          kernel.durationNs = dur - 200;
          kernel.name = gpuNames[o];
          kernel.category = gpu;
          kernel.kind = prof::EventKind::GpuKernel;
          kernel.thread = stream;
          trace.flows.push_back({opIndex, uint32_t(trace.events.size())});
          trace.events.push_back(kernel);
          at += dur + 10;
        }
        trace.events[rangeIndex].durationNs =
            at - trace.events[rangeIndex].startNs;
        at += 30;
      }
      trace.events[callIndex].durationNs = at - now + 50;
      now = at + 4 * 200 + 1500;
    }
  }
  return trace;
}

void paintOnce(QWidget &widget, QImage &image) {
  image.fill(Qt::white);
  QPainter painter(&image);
  widget.render(&painter);
}

} // namespace

int main(int argc, char **argv) {
  qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty()
                                 ? QByteArray("offscreen")
                                 : qgetenv("QT_QPA_PLATFORM"));
  QApplication app(argc, argv);
  size_t events = 1000000;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--keep") && i + 1 < argc)
      keep = argv[++i];
    else
      events = std::strtoull(argv[i], nullptr, 10);
  }
  std::string path = keep.empty() ? "/tmp/cuvil-bench-profiler-views-" +
                                        std::to_string(getpid()) + ".json"
                                  : keep;
  {
    prof::Trace trace = generate(events);
    if (auto error = prof::writeTraceFile(trace, path)) {
      std::fprintf(stderr, "%s\n", error->text().c_str());
      return 2;
    }
  }

  auto start = std::chrono::steady_clock::now();
  ProfileLoad load = loadProfile(QString::fromStdString(path));
  if (!load.profile) {
    std::fprintf(stderr, "%s\n", qPrintable(load.error));
    return 2;
  }
  double loadS = secondsSince(start);
  const Profile &profile = *load.profile;

  auto step = std::chrono::steady_clock::now();
  FlameGraphModel flameModel;
  flameModel.setTree(FlameTree::fromCallTree(profile.callTree));
  OpTableModel opModel;
  opModel.setRows(profile.ops);
  double modelsS = secondsSince(step);

  FlameGraphView flame;
  flame.setModel(&flameModel);
  flame.resize(1600, 420);
  TimelineView timeline;
  timeline.resize(1600, 700);
  timeline.setProfile(load.profile);
  QImage flameImage(flame.size(), QImage::Format_ARGB32_Premultiplied);
  QImage timelineImage(timeline.size(), QImage::Format_ARGB32_Premultiplied);
  step = std::chrono::steady_clock::now();
  paintOnce(flame, flameImage);
  double flamePaintS = secondsSince(step);
  step = std::chrono::steady_clock::now();
  paintOnce(timeline, timelineImage);
  double timelinePaintS = secondsSince(step);
  double openS = secondsSince(start);

  // Interactions after opening.
  const FlameTree &tree = flameModel.tree();
  uint32_t deepest = 0;
  for (uint32_t i = 1; i < tree.size(); ++i)
    if (tree.node(i).depth == 4 && tree.weight(i) > tree.weight(deepest))
      deepest = i;
  step = std::chrono::steady_clock::now();
  flame.zoomTo(deepest ? deepest : tree.node(0).children.front());
  paintOnce(flame, flameImage);
  double zoomS = secondsSince(step);
  step = std::chrono::steady_clock::now();
  flameModel.setSearchText("matmul");
  paintOnce(flame, flameImage);
  double searchS = secondsSince(step);
  step = std::chrono::steady_clock::now();
  timeline.zoomAround(800, 20.0);
  paintOnce(timeline, timelineImage);
  double timelineZoomS = secondsSince(step);
  step = std::chrono::steady_clock::now();
  prof::Selection quarter;
  quarter.beginNs = profile.beginNs + (profile.endNs - profile.beginNs) / 4;
  quarter.endNs = profile.beginNs + (profile.endNs - profile.beginNs) / 2;
  Aggregates range = aggregate(*profile.trace, quarter);
  flameModel.setTree(FlameTree::fromCallTree(range.callTree));
  opModel.setRows(range.ops);
  paintOnce(flame, flameImage);
  double rangeS = secondsSince(step);
  // The whole page as the Workbench opens it: read and analyze on a worker
  // thread, fill the models, lay out and paint the window once.
  step = std::chrono::steady_clock::now();
  ProfilerPage page;
  page.resize(1600, 1000);
  QEventLoop loop;
  QObject::connect(&page, &ProfilerPage::traceLoaded, &loop, &QEventLoop::quit);
  QObject::connect(&page, &ProfilerPage::loadFailed, &loop, &QEventLoop::quit);
  page.openTrace(QString::fromStdString(path));
  loop.exec();
  QImage pageImage = page.grab().toImage();
  double pageS = secondsSince(step);
  bool pageOpened = page.profile() != nullptr;

  if (!keep.empty()) {
    pageImage.save(QString::fromStdString(keep + ".page.png"));
    flameImage.save(QString::fromStdString(keep + ".flame.png"));
    timelineImage.save(QString::fromStdString(keep + ".timeline.png"));
  } else {
    std::remove(path.c_str());
  }

  size_t rows = 0;
  for (const TimelineTrack &t : profile.tracks)
    rows += t.rows.size();
  std::printf("trace: %zu events, %zu tracks (%zu rows), %zu flame frames\n",
              profile.trace->events.size(), profile.tracks.size(), rows,
              tree.size());
  std::printf("read trace file:                      %7.3f s\n",
              profile.readSeconds);
  std::printf("analyze (timeline, call tree, ops):   %7.3f s\n",
              profile.analyzeSeconds);
  std::printf("flame graph + op table models:        %7.3f s\n", modelsS);
  std::printf("paint flame graph (1600x420):         %7.3f s (%zu frames)\n",
              flamePaintS, flame.drawnFrameCount());
  std::printf("paint timeline (1600x700):            %7.3f s\n",
              timelinePaintS);
  std::printf("open (load + models + first paints):  %7.3f s (budget 3 s)\n",
              openS);
  std::printf("ProfilerPage open, async + painted:   %7.3f s (budget 3 s)\n",
              pageS);
  std::printf("flame graph zoom into a frame+paint:  %7.3f s\n", zoomS);
  std::printf("flame graph search \"matmul\" + paint:  %7.3f s\n", searchS);
  std::printf("timeline zoom x20 + paint:            %7.3f s\n", timelineZoomS);
  std::printf("select a quarter: aggregate + paint:  %7.3f s\n", rangeS);
  (void)loadS;
  return pageOpened && openS < 3.0 && pageS < 3.0 ? 0 : 1;
}
