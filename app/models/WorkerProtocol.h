//===- WorkerProtocol.h - Decoding cuvil-worker's JSON lines ----*- C++ -*-===//
//
// cuvil-worker replies with one JSON object per line; decoding a compilation
// (its IR after every pass, megabytes) runs on a parser thread, so the GUI
// thread only ever sees finished value types.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_WORKERPROTOCOL_H
#define CUVIL_WORKBENCH_WORKERPROTOCOL_H

#include "WorkbenchTypes.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>

namespace cuvil::workbench {

/// The version of the protocol this client speaks. cuvil-worker sends its
/// own in `ready` (PROTOCOL_VERSION in embedded_python/cuvil/_worker.py);
/// bump both together with every change a client must know about.
/// 1: unversioned; 2: `protocol` in `ready`, `target` in requests.
constexpr int kWorkerProtocolVersion = 2;

/// Empty when the `ready` reply `fields` of the worker at `workerPath`
/// speaks kWorkerProtocolVersion; else what is wrong and how to fix it, for
/// the user.
QString workerProtocolMismatch(const QJsonObject &ready,
                               const QString &workerPath);

/// One decoded reply. `type` is the worker's message type ("ready",
/// "started", "compilation", "finished", "exception", "interrupted",
/// "executed", "exported", "ir", "error", "fatal"); the typed member that
/// matches it is filled, `fields` holds the rest.
struct WorkerMessage {
  QString type;
  QJsonObject fields;
  CompilationRecord compilation;
  RunResult run;
  UserException exception;
};

/// Decodes one line; false with `error` set for a line that is not a reply.
bool decodeWorkerMessage(const QByteArray &line, WorkerMessage &message,
                         QString &error);

/// Decodes lines in order on whatever thread it lives in. `generation`
/// names the worker process a line came from; the end of a process's
/// stream passes through in order after its last line.
class WorkerMessageDecoder : public QObject {
  Q_OBJECT
public slots:
  void decode(quint64 generation, const QByteArray &line);
  void finish(quint64 generation, int exitCode, int exitStatus);
signals:
  void decoded(quint64 generation,
               const cuvil::workbench::WorkerMessage &message);
  void malformed(quint64 generation, const QString &error);
  void finished(quint64 generation, int exitCode, int exitStatus);
};

} // namespace cuvil::workbench

Q_DECLARE_METATYPE(cuvil::workbench::WorkerMessage)

#endif // CUVIL_WORKBENCH_WORKERPROTOCOL_H
