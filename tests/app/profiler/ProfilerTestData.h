//===- ProfilerTestData.h - Small traces for the view tests -----*- C++ -*-===//
#ifndef CUVIL_TESTS_APP_PROFILER_PROFILERTESTDATA_H
#define CUVIL_TESTS_APP_PROFILER_PROFILERTESTDATA_H

#include "TestData.h"

#include "cuvil/Profiler/Formats.h"

#include <QAbstractItemModel>
#include <QStringList>

namespace cuvil::workbench::test {

namespace prof = cuvil::profiler;

/// Folded stacks (weights in ns) of a small model run.
inline const char *kCurrentFolded = "run;model.forward;cuvil.matmul 500\n"
                                    "run;model.forward;cuvil.relu 100\n"
                                    "run;model.forward 50\n"
                                    "run;data.load;io.read 300\n"
                                    "idle 50\n";
/// The same run before an optimization: matmul slower, read faster.
inline const char *kBaselineFolded = "run;model.forward;cuvil.matmul 800\n"
                                     "run;model.forward;cuvil.relu 100\n"
                                     "run;model.forward 50\n"
                                     "run;data.load;io.read 200\n"
                                     "idle 50\n";

/// A Chrome trace with every track kind: two Python calls on one thread,
/// an NVTX range, CPU kernels with IR op ids and locations, and a GPU
/// kernel on a stream. Times in microseconds.
inline const char *kChromeTrace = R"json({"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"model"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"GPU 0"}},
{"ph":"M","name":"thread_name","pid":2,"tid":7,"args":{"name":"stream 7"}},
{"ph":"X","name":"forward","cat":"python","ts":0,"dur":100,"pid":1,"tid":1},
{"ph":"X","name":"layer0","cat":"nvtx","ts":5,"dur":70,"pid":1,"tid":1},
{"ph":"X","name":"linalg.matmul","cat":"cpu_kernel","ts":10,"dur":40,"pid":1,"tid":1,"args":{"op_id":3,"loc":"/src/m.py:4:9"}},
{"ph":"X","name":"linalg.generic(addf)","cat":"cpu_kernel","ts":55,"dur":10,"pid":1,"tid":1,"args":{"op_id":4,"loc":"/src/m.py:5:9"}},
{"ph":"X","name":"forward","cat":"python","ts":200,"dur":80,"pid":1,"tid":1},
{"ph":"X","name":"linalg.matmul","cat":"cpu_kernel","ts":210,"dur":60,"pid":1,"tid":1,"args":{"op_id":3,"loc":"/src/m.py:4:9"}},
{"ph":"X","name":"gemm_128x128","cat":"gpu_kernel","ts":20,"dur":30,"pid":2,"tid":7,"args":{"op_id":3,"loc":"/src/m.py:4:9"}}
]})json";

/// Kernels of imported models, as cuvil.profile() records them: an FX node
/// in its nn.Module path at the forward's line, an ONNX node in its file.
inline const char *kImportedModelTrace = R"json({"traceEvents":[
{"ph":"X","name":"linalg.conv_2d_nchw_fchw","cat":"cpu_kernel","ts":0,"dur":30,"pid":1,"tid":1,"args":{"op_id":0,"loc":"/e/torch_cnn.py:37:0","node":"features.conv1/convolution"}},
{"ph":"X","name":"linalg.conv_2d_nchw_fchw","cat":"cpu_kernel","ts":40,"dur":20,"pid":1,"tid":1,"args":{"op_id":7,"loc":"/r/resnet.onnx:0:0","node":"/stem/stem.0/Conv"}}
]})json";

/// One nn.Sequential line making two convolutions (two FX nodes), run in
/// two calls: the flame graph shows two frames, each of both calls.
inline const char *kSequentialLineTrace = R"json({"traceEvents":[
{"ph":"X","name":"forward","cat":"python","ts":0,"dur":100,"pid":1,"tid":1},
{"ph":"X","name":"linalg.conv_2d_nchw_fchw","cat":"cpu_kernel","ts":0,"dur":30,"pid":1,"tid":1,"args":{"op_id":0,"loc":"/e/cnn.py:9:0","node":"features.0/convolution"}},
{"ph":"X","name":"linalg.conv_2d_nchw_fchw","cat":"cpu_kernel","ts":40,"dur":50,"pid":1,"tid":1,"args":{"op_id":1,"loc":"/e/cnn.py:9:0","node":"features.2/convolution"}},
{"ph":"X","name":"forward","cat":"python","ts":200,"dur":100,"pid":1,"tid":1},
{"ph":"X","name":"linalg.conv_2d_nchw_fchw","cat":"cpu_kernel","ts":200,"dur":30,"pid":1,"tid":1,"args":{"op_id":0,"loc":"/e/cnn.py:9:0","node":"features.0/convolution"}},
{"ph":"X","name":"linalg.conv_2d_nchw_fchw","cat":"cpu_kernel","ts":240,"dur":50,"pid":1,"tid":1,"args":{"op_id":1,"loc":"/e/cnn.py:9:0","node":"features.2/convolution"}}
]})json";

inline prof::Trace parsedFolded(const char *text) {
  prof::Expected<prof::Trace> trace =
      prof::parseFoldedStacks(text, "test.folded");
  if (!trace)
    qFatal("%s", trace.error().text().c_str());
  return std::move(*trace);
}

inline prof::Trace parsedChrome(const char *text) {
  prof::Expected<prof::Trace> trace = prof::parseChromeTrace(text, "test.json");
  if (!trace)
    qFatal("%s", trace.error().text().c_str());
  return std::move(*trace);
}

/// "header | header" then each row's cells, children indented by two
/// spaces under their parent (a table prints as a flat list).
inline QString dumpModel(const QAbstractItemModel &model,
                         const QModelIndex &parent = {}, int depth = 0) {
  QString out;
  if (!parent.isValid()) {
    QStringList header;
    for (int c = 0; c < model.columnCount(); ++c)
      header << model.headerData(c, Qt::Horizontal).toString();
    out += header.join(" | ") + '\n';
  }
  for (int r = 0; r < model.rowCount(parent); ++r) {
    QStringList cells;
    for (int c = 0; c < model.columnCount(parent); ++c)
      cells << model.index(r, c, parent).data().toString();
    out += QString(2 * depth, ' ') + cells.join(" | ") + '\n';
    out += dumpModel(model, model.index(r, 0, parent), depth + 1);
  }
  return out;
}

} // namespace cuvil::workbench::test

#endif // CUVIL_TESTS_APP_PROFILER_PROFILERTESTDATA_H
