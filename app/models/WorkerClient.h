//===- WorkerClient.h - Runs user code in a cuvil-worker process -*- C++
//-*-===//
//
// The Workbench never runs user code itself: each run starts a fresh
// cuvil-worker, sends it requests on stdin and reads replies from a pipe on
// the worker's fd 3, while the worker's stdout/stderr become console text.
// An exception, a hang (stop() interrupts, then terminates, then kills,
// within a second), a segfault or os._exit end at most the worker; the
// client reports what happened and the next run gets a new worker.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_WORKERCLIENT_H
#define CUVIL_WORKBENCH_WORKERCLIENT_H

#include "WorkerProtocol.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringDecoder>
#include <QThread>

class QSocketNotifier;
class QTimer;

namespace cuvil::workbench {

class WorkerClient : public QObject {
  Q_OBJECT
public:
  enum class State { NotRunning, Starting, Idle, Busy, Stopping };
  Q_ENUM(State)

  explicit WorkerClient(QObject *parent = nullptr);
  ~WorkerClient() override;

  /// $CUVIL_WORKER, else cuvil-worker next to the application, else the one
  /// this build made.
  static QString defaultWorkerPath();
  void setWorkerPath(const QString &path) { workerPath = path; }

  /// The longest protocol line held while waiting for its end (default
  /// 256 MiB: IR text and traces travel as files); a worker that sends more
  /// without a newline (a script writing to the protocol pipe) is stopped.
  static constexpr qsizetype kDefaultMaxLine = qsizetype(256) << 20;
  void setMaxLine(qsizetype bytes) { maxLine = bytes; }

  State state() const { return currentState; }
  qint64 workerPid() const;
  QString currentFile() const { return runningFile; }

  /// Starts a fresh worker (ending any previous one) and runs `file` in it.
  /// With `target` ("cuda", "wasm"...), every function the file compiles is
  /// compiled for it, whatever its decorators say (`cuvil compile --target`);
  /// empty: each for its own.
  void runFile(const QString &file, const QString &target = QString());
  /// Requests on the current worker's compilations; false (and
  /// requestFailed) when there is no worker or it is busy. `target` is the
  /// compilation record's, passed through unchanged (the worker refuses a
  /// request for another target than the compilation's).
  bool execute(int index, const QString &target);
  bool exportArtifact(int index, const QString &target, const QString &kind,
                      const QString &path);
  bool requestIr(int index, const QString &target, const QString &stage);
  /// Ends the current run: SIGINT, then SIGTERM after 300 ms, then SIGKILL
  /// after 600 ms.
  void stop();
  /// Asks an idle worker to quit and waits for it (at most `msecs`).
  void shutdown(int msecs = 2000);

signals:
  void stateChanged(cuvil::workbench::WorkerClient::State state);
  /// The worker's Python started and speaks kWorkerProtocolVersion (a
  /// worker of another protocol ends with workerEnded instead).
  void ready(const QString &python, int protocol);
  /// The targets the worker's Cuvil can compile for ("c", "cpu", "cuda"...).
  void targetsReported(const QStringList &targets);
  void runStarted(const QString &file);
  void compilationReported(const cuvil::workbench::CompilationRecord &record);
  void runFinished(bool ok, double seconds);
  void exceptionRaised(const cuvil::workbench::UserException &exception);
  void interrupted();
  void executed(const cuvil::workbench::RunResult &result);
  void exported(const QString &kind, const QString &path, qint64 bytes);
  void irReady(int index, const QString &stage, const QString &text);
  void requestFailed(const QString &request, const QString &message);
  void consoleOutput(const QString &text, bool isError);
  /// The worker process ended. `unexpected` is true for a crash or an exit
  /// nobody asked for; `description` says what happened, for the user.
  void workerEnded(const QString &description, bool unexpected);

  // Internal: lines to the decoder thread, and the end-of-stream marker.
  void lineReceived(quint64 generation, const QByteArray &line);
  void streamEnded(quint64 generation, int exitCode, int exitStatus);

private:
  void setState(State state);
  bool startWorker();
  void retireWorker();
  /// Ends a worker that cannot be talked to (another protocol version).
  void refuseWorker(const QString &description);
  bool send(const QByteArray &json, const QString &request);
  void readProtocol();
  void refuseLongLine();
  void handleMessage(quint64 generation, const WorkerMessage &message);
  void handleEnd(quint64 generation, int exitCode, int exitStatus);
  void processFinished(int exitCode, QProcess::ExitStatus status);
  /// Sends `signal` to the worker's process group: the worker and what the
  /// user's file started (the worker leads its own group).
  void signalWorkerGroup(int signal);

  QString workerPath;
  QProcess *process = nullptr;
  qint64 workerGroup = 0; ///< the worker's pid, which is its process group
  QSocketNotifier *notifier = nullptr;
  int readFd = -1;
  QByteArray pending;
  qsizetype maxLine = kDefaultMaxLine;
  qsizetype lineStart = 0; // in `pending`, where the unfinished line begins
  QStringDecoder stdoutDecoder, stderrDecoder;
  quint64 generation = 0;
  State currentState = State::NotRunning;
  QString runningFile;
  bool quitRequested = false;
  bool sawReady = false; ///< the worker's Python started
  bool stopRequested = false;
  QElapsedTimer stopClock;
  QTimer *terminateTimer = nullptr;
  QTimer *killTimer = nullptr;
  QThread decoderThread;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_WORKERCLIENT_H
