//===- WorkerProtocol.cpp - Decoding cuvil-worker's JSON lines ------------===//

#include "WorkerProtocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

namespace cuvil::workbench {
namespace {

QVector<TensorInfo> tensors(const QJsonArray &array) {
  QVector<TensorInfo> out;
  for (const QJsonValue &value : array) {
    QJsonObject o = value.toObject();
    TensorInfo t;
    t.dtype = o.value("dtype").toString();
    // A size that is not an integer qint64 holds (null for a dynamic size,
    // 1e300 from a broken worker) is -1; casting the double was undefined.
    for (const QJsonValue &d : o.value("shape").toArray())
      t.shape << d.toInteger(-1);
    out << t;
  }
  return out;
}

CompilationRecord compilation(const QJsonObject &o) {
  CompilationRecord c;
  c.index = o.value("index").toInt();
  c.function = o.value("function").toString();
  c.source = o.value("source").toString();
  c.target = o.value("target").toString();
  for (const QJsonValue &kind : o.value("artifacts").toArray())
    c.artifacts << kind.toString();
  c.fusion = o.value("fusion").toBool(true);
  c.compileMs = o.value("compile_ms").toDouble();
  c.fingerprint = o.value("fingerprint").toString();
  c.inputs = tensors(o.value("inputs").toArray());
  c.outputs = tensors(o.value("outputs").toArray());
  PassStep input;
  input.name = "input";
  input.stage = "trace";
  input.changed = true;
  input.ir = o.value("input_ir").toString();
  c.steps << input;
  for (const QJsonValue &value : o.value("snapshots").toArray()) {
    QJsonObject s = value.toObject();
    PassStep step;
    step.name = s.value("name").toString();
    step.stage = s.value("stage").toString();
    step.ms = s.value("ms").toDouble();
    step.changed = s.value("changed").toBool();
    step.ir = s.value("ir").toString();
    c.steps << step;
  }
  return c;
}

} // namespace

QString workerProtocolMismatch(const QJsonObject &ready,
                               const QString &workerPath) {
  QJsonValue version = ready.value("protocol");
  if (version.isDouble() && version.toInt() == kWorkerProtocolVersion)
    return {};
  QString theirs =
      version.isDouble()
          ? QString("worker protocol %1").arg(version.toInt())
          : QString("an unversioned worker protocol (older than 2)");
  QString package = ready.value("package").toString();
  return QString("The worker %1%2 speaks %3, but this Workbench speaks "
                 "worker protocol %4: they come from different builds. "
                 "Rebuild both (`make`, or `ninja -C build cuvil-workbench "
                 "cuvil-worker`), or set CUVIL_WORKER to the cuvil-worker "
                 "built with this Workbench (and CUVIL_SOURCE_DIR to its "
                 "source tree).")
      .arg(workerPath,
           package.isEmpty() ? QString()
                             : QString(" (cuvil package %1)").arg(package),
           theirs)
      .arg(kWorkerProtocolVersion);
}

bool decodeWorkerMessage(const QByteArray &line, WorkerMessage &message,
                         QString &error) {
  QJsonParseError parseError;
  QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
  if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
    error =
        QString("cuvil-worker sent a line that is not a JSON object (%1): "
                "%2")
            .arg(parseError.errorString(), QString::fromUtf8(line.left(120)));
    return false;
  }
  QJsonObject o = doc.object();
  message = WorkerMessage();
  message.type = o.value("type").toString();
  if (message.type.isEmpty()) {
    error = "cuvil-worker sent a reply without a \"type\": " +
            QString::fromUtf8(line.left(120));
    return false;
  }
  if (message.type == "compilation") {
    message.compilation = compilation(o);
    o.remove("snapshots");
    o.remove("input_ir");
  } else if (message.type == "executed") {
    RunResult &r = message.run;
    r.index = o.value("index").toInt();
    r.latencyMs = o.value("latency_ms").toDouble();
    r.minMs = o.value("min_ms").toDouble();
    r.referenceMs = o.value("reference_ms").toDouble();
    r.maxError = o.value("max_error").toDouble();
    r.reference = o.value("reference").toString(r.reference);
    r.runs = o.value("runs").toInt();
    r.tracePath = o.value("trace").toString();
    r.copies = o.value("copies").toString();
  } else if (message.type == "exception") {
    UserException &e = message.exception;
    e.type = o.value("exc_type").toString();
    e.message = o.value("message").toString();
    e.traceback = o.value("traceback").toString();
    e.file = o.value("file").toString();
    e.line = o.value("line").toInt();
  }
  message.fields = o;
  return true;
}

void WorkerMessageDecoder::decode(quint64 generation, const QByteArray &line) {
  WorkerMessage message;
  QString error;
  if (decodeWorkerMessage(line, message, error))
    emit decoded(generation, message);
  else
    emit malformed(generation, error);
}

void WorkerMessageDecoder::finish(quint64 generation, int exitCode,
                                  int exitStatus) {
  emit finished(generation, exitCode, exitStatus);
}

} // namespace cuvil::workbench
