//===- WorkbenchTypes.h - Value types the Workbench's models share -*- C++
//-*-===//
#ifndef CUVIL_WORKBENCH_WORKBENCHTYPES_H
#define CUVIL_WORKBENCH_WORKBENCHTYPES_H

#include <QMetaType>
#include <QString>
#include <QVector>

namespace cuvil::workbench {

/// Element type and shape of one argument or result.
struct TensorInfo {
  QString dtype;
  QVector<qint64> shape;
  /// "float32[64, 256]".
  QString toString() const;
};

/// The IR after one pass (or the input IR, step 0).
struct PassStep {
  QString name;  ///< pass argument, "input" for the traced IR
  QString stage; ///< pipeline stage
  double ms = 0;
  bool changed = false;
  QString ir;
};

/// One compilation the user's file triggered.
struct CompilationRecord {
  int index = 0;
  QString function;
  QString source; ///< "file:line" of the function definition
  QString target;
  /// Artifact kinds the target writes ("mlir", "llvm", "so", ...); empty
  /// when the worker did not say.
  QStringList artifacts;
  bool fusion = true;
  double compileMs = 0;
  QString fingerprint;
  QVector<TensorInfo> inputs;
  QVector<TensorInfo> outputs;
  QVector<PassStep> steps; ///< steps[0] is the input IR

  /// "float32[64, 256], float32[256, 512]".
  QString inputSummary() const;
};

/// Compiled code timed on the recorded inputs, compared with Python.
struct RunResult {
  int index = 0;
  double latencyMs = 0; ///< median
  double minMs = 0;
  double referenceMs = 0; ///< the reference, once
  double maxError = 0;    ///< max |compiled - reference|
  /// What the compiled code was compared with: "the Python function",
  /// "ONNX Runtime", "PyTorch", "JAX", "TensorFlow".
  QString reference = "the Python function";
  int runs = 0;
  QString tracePath; ///< Chrome trace of profiled runs, empty if none
  /// What a call copied between host and GPU (cuda target), empty if none.
  QString copies;
};

/// An exception raised by the user's code.
struct UserException {
  QString type;
  QString message;
  QString traceback;
  QString file;
  int line = 0;
  /// "ZeroDivisionError: division by zero (model.py:12)".
  QString summary() const;
};

} // namespace cuvil::workbench

Q_DECLARE_METATYPE(cuvil::workbench::CompilationRecord)
Q_DECLARE_METATYPE(cuvil::workbench::RunResult)
Q_DECLARE_METATYPE(cuvil::workbench::UserException)

#endif // CUVIL_WORKBENCH_WORKBENCHTYPES_H
