//===- GraphLayoutBenchmark.cpp - Layout and draw time of a 2,000-op graph ===//
//
// Builds the IR of a synthetic 2,000-op function (elementwise chains with
// fan-in, GEMMs and fused linalg.generic regions, as a big transformer's
// snapshots look), then times graph building (cuvil-graph, MLIR's parser, in
// a child process), Graphviz layout and drawing into a GraphView (rendered
// once into an image, offscreen). Prints the best
// of five runs. Usage: bench-graph-layout [OPS | SNAPSHOT.mlir [--collapse]
// [--hide-constants]]
// (a snapshot's IR, e.g. one saved with File > Export > MLIR of this step).
//
//===----------------------------------------------------------------------===//

#include "GraphView.h"
#include "IrOpModel.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cstdio>
#include <string>

using namespace cuvil::workbench;

/// `loc("/bench.py":LINE:5)`, as snapshots print source locations.
static std::string benchLoc(int line) {
  return "loc(\"/bench.py\":" + std::to_string(line) + ":5)";
}

static QString syntheticIr(int ops) {
  const std::string t = "tensor<64x64xf32>";
  std::string ir = "#map = affine_map<(d0, d1) -> (d0, d1)>\nmodule {\n"
                   "  func.func @big(%arg0: " +
                   t + " " + benchLoc(1) + ", %arg1: " + t + " " + benchLoc(1) +
                   ") -> " + t + " {\n";
  const char *unary[] = {"cuvil.exp", "cuvil.tanh", "cuvil.gelu", "cuvil.neg"};
  const char *binary[] = {"cuvil.add", "cuvil.mul", "cuvil.sub",
                          "cuvil.matmul"};
  int emitted = 0, value = 0;
  auto operand = [&](int back) {
    int v = value - back;
    return v < 0 ? "%arg" + std::to_string(-v % 2) : "%" + std::to_string(v);
  };
  while (emitted < ops) {
    std::string result = "    %" + std::to_string(value) + " = ";
    std::string loc = benchLoc(10 + emitted / 3);
    if (emitted % 25 == 24 && emitted + 4 <= ops) {
      // A fused region: the generic op and three body ops.
      ir += result +
            "linalg.generic {indexing_maps = [#map, #map, #map], "
            "iterator_types = [\"parallel\", \"parallel\"]} ins(" +
            operand(1) + ", " + operand(7) + " : " + t + ", " + t + ") outs(" +
            operand(1) + " : " + t + ") {\n" + "    ^bb0(%in: f32 " + loc +
            ", %in_0: f32 " + loc + ", %out: f32 " + loc + "):\n" +
            "      %r0 = arith.addf %in, %in_0 : f32 " + loc + "\n" +
            "      %r1 = math.exp %r0 : f32 " + loc + "\n" +
            "      linalg.yield %r1 : f32 " + loc + "\n" + "    } -> " + t +
            " " + loc + "\n";
      emitted += 4;
    } else if (emitted % 3 == 0) {
      ir += result + unary[emitted % 4] + " " + operand(1) + " : " + t + " " +
            loc + "\n";
      ++emitted;
    } else {
      ir += result + binary[emitted % 4] + " " + operand(1) + ", " +
            operand(2 + value % 13) + " : (" + t + ", " + t + ") -> " + t +
            " " + loc + "\n";
      ++emitted;
    }
    ++value;
  }
  ir += "    return %" + std::to_string(value - 1) + " : " + t + " " +
        benchLoc(2) + "\n  }\n}\n";
  return QString::fromStdString(ir);
}

int main(int argc, char **argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QString arg = argc > 1 ? QString(argv[1]) : QString();
  int ops = 2000;
  QString ir;
  cuvil::graph::GraphOptions options;
  for (int i = 2; i < argc; ++i) {
    options.collapseRegions |= QString(argv[i]) == "--collapse";
    options.hideConstants |= QString(argv[i]) == "--hide-constants";
  }
  if (arg.endsWith(".mlir")) {
    QFile file(arg);
    if (!file.open(QIODevice::ReadOnly)) {
      std::fprintf(stderr, "bench-graph-layout: cannot read %s\n", argv[1]);
      return 1;
    }
    ir = QString::fromUtf8(file.readAll());
    ops = 0;
  } else {
    if (!arg.isEmpty())
      ops = std::max(10, arg.toInt());
    ir = syntheticIr(ops);
  }

  double best[4] = {1e9, 1e9, 1e9, 1e9};
  size_t nodes = 0, edges = 0;
  int runs = qEnvironmentVariableIntValue("CUVIL_BENCH_RUNS");
  for (int run = 0; run < (runs > 0 ? runs : 5); ++run) {
    QElapsedTimer clock;
    clock.start();
    StepGraph step = buildStepGraph(ir, {}, options);
    double buildMs = clock.nsecsElapsed() / 1e6;
    if (!step.error.isEmpty()) {
      std::fprintf(stderr, "bench-graph-layout: %s\n", qPrintable(step.error));
      return 1;
    }
    nodes = step.graph.nodes.size();
    edges = step.graph.edges.size();
    GraphLayout layout;
    QString error;
    QByteArray extra = qgetenv("CUVIL_DOT_EXTRA");
    if (!extra.isEmpty())
      step.dot.insert(step.dot.find("];", step.dot.find("graph [")),
                      ", " + extra.toStdString());
    clock.restart();
    if (!layoutGraph(step.dot, layout, error)) {
      std::fprintf(stderr, "bench-graph-layout: %s\n", qPrintable(error));
      return 1;
    }
    double layoutMs = clock.nsecsElapsed() / 1e6;
    clock.restart();
    GraphView view;
    view.resize(1600, 1000);
    view.setGraphLayout(layout);
    view.fit();
    QImage image(view.viewport()->size(), QImage::Format_ARGB32);
    QPainter painter(&image);
    view.render(&painter);
    painter.end();
    double drawMs = clock.nsecsElapsed() / 1e6;
    double totals[4] = {buildMs, layoutMs, drawMs, buildMs + layoutMs + drawMs};
    for (int i = 0; i < 4; ++i)
      best[i] = std::min(best[i], totals[i]);
  }
  if (ops > 0)
    std::printf("graph of %d ops: ", ops);
  else
    std::printf("graph of %s: ", argv[1]);
  std::printf("%zu nodes, %zu edges\n", nodes, edges);
  std::printf("build + DOT %8.1f ms\n", best[0]);
  std::printf("layout      %8.1f ms (Graphviz dot)\n", best[1]);
  std::printf("draw        %8.1f ms (GraphView items + one render)\n", best[2]);
  std::printf("total       %8.1f ms (best of %d)\n", best[3],
              runs > 0 ? runs : 5);
  return 0;
}
