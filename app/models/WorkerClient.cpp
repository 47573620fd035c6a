//===- WorkerClient.cpp - Runs user code in a cuvil-worker process --------===//

#include "WorkerClient.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSocketNotifier>
#include <QTimer>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace cuvil::workbench {
namespace {

constexpr int kProtocolFd = 3;
constexpr int kTerminateAfterMs = 300;
constexpr int kKillAfterMs = 600;

QString signalName(int sig) {
  const char *description = strsignal(sig);
  QString name;
  switch (sig) {
  case SIGSEGV:
    name = "SIGSEGV";
    break;
  case SIGABRT:
    name = "SIGABRT";
    break;
  case SIGBUS:
    name = "SIGBUS";
    break;
  case SIGFPE:
    name = "SIGFPE";
    break;
  case SIGILL:
    name = "SIGILL";
    break;
  case SIGKILL:
    name = "SIGKILL";
    break;
  case SIGTERM:
    name = "SIGTERM";
    break;
  default:
    name = QString("signal %1").arg(sig);
  }
  return description ? QString("%1, %2").arg(name, description) : name;
}

} // namespace

WorkerClient::WorkerClient(QObject *parent) : QObject(parent) {
  qRegisterMetaType<WorkerMessage>();
  qRegisterMetaType<CompilationRecord>();
  qRegisterMetaType<RunResult>();
  qRegisterMetaType<UserException>();
  workerPath = defaultWorkerPath();

  auto *decoder = new WorkerMessageDecoder;
  decoder->moveToThread(&decoderThread);
  connect(&decoderThread, &QThread::finished, decoder, &QObject::deleteLater);
  connect(this, &WorkerClient::lineReceived, decoder,
          &WorkerMessageDecoder::decode, Qt::QueuedConnection);
  connect(this, &WorkerClient::streamEnded, decoder,
          &WorkerMessageDecoder::finish, Qt::QueuedConnection);
  connect(decoder, &WorkerMessageDecoder::decoded, this,
          &WorkerClient::handleMessage, Qt::QueuedConnection);
  connect(decoder, &WorkerMessageDecoder::finished, this,
          &WorkerClient::handleEnd, Qt::QueuedConnection);
  connect(
      decoder, &WorkerMessageDecoder::malformed, this,
      [this](quint64, const QString &error) {
        emit consoleOutput(error + "\n", true);
      },
      Qt::QueuedConnection);
  decoderThread.setObjectName("cuvil-worker-decoder");
  decoderThread.start();

  terminateTimer = new QTimer(this);
  terminateTimer->setSingleShot(true);
  terminateTimer->setTimerType(Qt::PreciseTimer);
  connect(terminateTimer, &QTimer::timeout, this,
          [this] { signalWorkerGroup(SIGTERM); });
  killTimer = new QTimer(this);
  killTimer->setSingleShot(true);
  killTimer->setTimerType(Qt::PreciseTimer);
  connect(killTimer, &QTimer::timeout, this,
          [this] { signalWorkerGroup(SIGKILL); });
}

WorkerClient::~WorkerClient() {
  shutdown(1000);
  decoderThread.quit();
  decoderThread.wait();
}

QString WorkerClient::defaultWorkerPath() {
  QString fromEnv = qEnvironmentVariable("CUVIL_WORKER");
  if (!fromEnv.isEmpty())
    return fromEnv;
  QString beside = QCoreApplication::applicationDirPath() + "/cuvil-worker";
  if (QFileInfo(beside).isExecutable())
    return beside;
#ifdef CUVIL_BUILD_WORKER_PATH
  return QStringLiteral(CUVIL_BUILD_WORKER_PATH);
#else
  return beside;
#endif
}

qint64 WorkerClient::workerPid() const {
  return process ? process->processId() : 0;
}

void WorkerClient::setState(State state) {
  if (state == currentState)
    return;
  currentState = state;
  emit stateChanged(state);
}

bool WorkerClient::startWorker() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    emit workerEnded(QString("Cannot create the pipe to cuvil-worker: %1.")
                         .arg(strerror(errno)),
                     true);
    return false;
  }
  ++generation;
  quitRequested = false;
  stopRequested = false;
  sawReady = false;
  pending.clear();
  lineStart = 0;
  readFd = fds[0];
  int writeFd = fds[1];
  fcntl(readFd, F_SETFL, fcntl(readFd, F_GETFL) | O_NONBLOCK);

  process = new QProcess(this);
  process->setProgram(workerPath);
  // The worker ends itself and its process group when this process is gone
  // (even SIGKILLed), instead of running the user's loop with no parent.
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert("CUVIL_WORKBENCH_PID",
                     QString::number(QCoreApplication::applicationPid()));
  process->setProcessEnvironment(environment);
  process->setChildProcessModifier([writeFd] {
    // In the child, between fork and exec: the pipe's write end becomes
    // fd 3 (dup2 clears close-on-exec).
    if (writeFd == kProtocolFd)
      fcntl(kProtocolFd, F_SETFD, 0);
    else
      dup2(writeFd, kProtocolFd);
    // Its own process group: Stop and the end of the worker reach the
    // processes the user's file started too.
    setpgid(0, 0);
  });
  QProcess *p = process;
  workerGroup = 0;
  connect(p, &QProcess::started, this, [this, p] {
    if (p == process)
      workerGroup = p->processId();
  });
  // Stateful decoders: a chunk may end inside a UTF-8 sequence.
  stdoutDecoder = QStringDecoder(QStringDecoder::Utf8);
  stderrDecoder = QStringDecoder(QStringDecoder::Utf8);
  connect(p, &QProcess::readyReadStandardOutput, this, [this, p] {
    emit consoleOutput(stdoutDecoder(p->readAllStandardOutput()), false);
  });
  connect(p, &QProcess::readyReadStandardError, this, [this, p] {
    emit consoleOutput(stderrDecoder(p->readAllStandardError()), true);
  });
  connect(p, &QProcess::finished, this,
          [this, p](int exitCode, QProcess::ExitStatus status) {
            if (p == process)
              processFinished(exitCode, status);
          });
  connect(p, &QProcess::errorOccurred, this,
          [this, p](QProcess::ProcessError error) {
            if (error != QProcess::FailedToStart || p != process)
              return;
            emit workerEnded(
                QString("Cannot start the worker %1: %2. Build it with `ninja "
                        "cuvil-worker` or set CUVIL_WORKER to its path.")
                    .arg(workerPath, p->errorString()),
                true);
            retireWorker();
            setState(State::NotRunning);
          });

  notifier = new QSocketNotifier(readFd, QSocketNotifier::Read, this);
  connect(notifier, &QSocketNotifier::activated, this,
          &WorkerClient::readProtocol);
  setState(State::Starting);
  process->start();
  close(writeFd);
  return process != nullptr;
}

void WorkerClient::readProtocol() {
  if (readFd < 0)
    return;
  char buffer[65536];
  for (;;) {
    ssize_t n = read(readFd, buffer, sizeof buffer);
    if (n > 0) {
      if (const void *last = memrchr(buffer, '\n', static_cast<size_t>(n)))
        lineStart =
            pending.size() + (static_cast<const char *>(last) - buffer) + 1;
      pending.append(buffer, static_cast<int>(n));
      // A line longer than maxLine is refused as it arrives, not held.
      if (pending.size() - lineStart > maxLine)
        return refuseLongLine();
      continue;
    }
    if (n == 0 && notifier) // end of stream: the worker is gone
      notifier->setEnabled(false);
    break;
  }
  qsizetype start = 0;
  for (;;) {
    qsizetype nl = pending.indexOf('\n', start);
    if (nl < 0)
      break;
    if (nl > start)
      emit lineReceived(generation, pending.mid(start, nl - start));
    start = nl + 1;
  }
  pending.remove(0, start);
  lineStart = 0; // what is left is the start of an unfinished line
}

void WorkerClient::refuseLongLine() {
  pending.clear();
  lineStart = 0;
  if (notifier)
    notifier->setEnabled(false);
  refuseWorker(
      QString("cuvil-worker sent over %1 MiB on its protocol pipe without "
              "ending the line, so it was stopped. Something in the script "
              "may be writing to file descriptor 3 (the Workbench's pipe); "
              "write to stdout or a file instead")
          .arg(maxLine >> 20));
}

void WorkerClient::signalWorkerGroup(int signal) {
  if (workerGroup > 0)
    ::kill(-static_cast<pid_t>(workerGroup), signal);
}

void WorkerClient::processFinished(int exitCode, QProcess::ExitStatus status) {
  // What the user's file started must not outlive its worker.
  signalWorkerGroup(SIGKILL);
  workerGroup = 0;
  readProtocol(); // replies written just before the end
  emit consoleOutput(stdoutDecoder(process->readAllStandardOutput()), false);
  emit consoleOutput(stderrDecoder(process->readAllStandardError()), true);
  emit streamEnded(generation, exitCode, static_cast<int>(status));
}

void WorkerClient::handleEnd(quint64 gen, int exitCode, int exitStatus) {
  if (gen != generation)
    return;
  terminateTimer->stop();
  killTimer->stop();
  QString file = QFileInfo(runningFile).fileName();
  QString description;
  bool unexpected = false;
  if (stopRequested) {
    description = QString("Stopped %1 after %2 ms on request; the next run "
                          "starts a fresh worker.")
                      .arg(file)
                      .arg(stopClock.elapsed());
  } else if (exitStatus == QProcess::CrashExit) {
    unexpected = true;
    description = QString("The worker crashed (%1) while running %2. The "
                          "Workbench is fine; the next run starts a fresh "
                          "worker. The console shows the Python stack at the "
                          "crash.")
                      .arg(signalName(exitCode), file);
  } else if (!quitRequested && !sawReady) {
    unexpected = true;
    description = QString("The worker %1 could not start Python (exit code "
                          "%2); the console shows why.")
                      .arg(workerPath)
                      .arg(exitCode);
  } else if (!quitRequested) {
    unexpected = true;
    description = QString("The worker exited with code %1 while running %2 "
                          "(os._exit() or a fatal error in native code). The "
                          "next run starts a fresh worker.")
                      .arg(exitCode)
                      .arg(file);
  }
  retireWorker();
  setState(State::NotRunning);
  if (!description.isEmpty() || unexpected)
    emit workerEnded(description, unexpected);
}

void WorkerClient::retireWorker() {
  if (notifier) {
    notifier->setEnabled(false);
    notifier->deleteLater();
    notifier = nullptr;
  }
  if (readFd >= 0) {
    close(readFd);
    readFd = -1;
  }
  if (process) {
    QProcess *p = process;
    process = nullptr;
    p->disconnect(this);
    auto group = static_cast<pid_t>(workerGroup);
    workerGroup = 0;
    auto endGroup = [group] {
      if (group > 0)
        ::kill(-group, SIGKILL);
    };
    if (p->state() != QProcess::NotRunning) {
      // An idle worker from an earlier run: ask it to quit, then make sure.
      p->write("{\"cmd\": \"quit\"}\n");
      p->closeWriteChannel();
      connect(p, &QProcess::finished, p, endGroup);
      connect(p, &QProcess::finished, p, &QObject::deleteLater);
      QTimer::singleShot(2000, p, endGroup);
    } else {
      endGroup();
      p->deleteLater();
    }
  }
}

void WorkerClient::refuseWorker(const QString &description) {
  ++generation; // whatever else it sent is not understood either
  quitRequested = true;
  if (process)
    process->kill();
  retireWorker();
  setState(State::NotRunning);
  emit workerEnded(description, true);
}

void WorkerClient::handleMessage(quint64 gen, const WorkerMessage &message) {
  if (gen != generation)
    return;
  const QString &type = message.type;
  if (type == "ready") {
    QString mismatch = workerProtocolMismatch(message.fields, workerPath);
    if (!mismatch.isEmpty())
      return refuseWorker(mismatch);
    sawReady = true;
    if (currentState == State::Starting)
      setState(State::Busy);
    emit ready(message.fields.value("python").toString(),
               message.fields.value("protocol").toInt());
    QStringList targets;
    for (const QJsonValue &target : message.fields.value("targets").toArray())
      targets << target.toString();
    if (!targets.isEmpty())
      emit targetsReported(targets);
  } else if (type == "started") {
    emit runStarted(message.fields.value("file").toString());
  } else if (type == "compilation") {
    emit compilationReported(message.compilation);
  } else if (type == "exception") {
    emit exceptionRaised(message.exception);
  } else if (type == "interrupted") {
    emit interrupted();
    if (stopRequested && process) { // let it exit cleanly
      quitRequested = true;
      process->closeWriteChannel();
    }
  } else if (type == "finished") {
    if (currentState != State::Stopping)
      setState(State::Idle);
    emit runFinished(message.fields.value("ok").toBool(),
                     message.fields.value("seconds").toDouble());
  } else if (type == "executed") {
    setState(State::Idle);
    emit executed(message.run);
  } else if (type == "exported") {
    setState(State::Idle);
    emit exported(
        message.fields.value("kind").toString(),
        message.fields.value("path").toString(),
        static_cast<qint64>(message.fields.value("bytes").toDouble()));
  } else if (type == "ir") {
    setState(State::Idle);
    emit irReady(message.fields.value("index").toInt(),
                 message.fields.value("stage").toString(),
                 message.fields.value("text").toString());
  } else if (type == "error") {
    setState(State::Idle);
    emit requestFailed(message.fields.value("request").toString(),
                       message.fields.value("message").toString());
  } else if (type == "fatal") {
    emit consoleOutput(message.fields.value("message").toString() + "\n", true);
  }
}

void WorkerClient::runFile(const QString &file, const QString &target) {
  if (process) {
    quitRequested = true;
    retireWorker();
  }
  runningFile = QFileInfo(file).absoluteFilePath();
  if (!startWorker())
    return;
  QJsonObject request{{"cmd", "run"}, {"file", runningFile}};
  if (!target.isEmpty())
    request["target"] = target;
  send(QJsonDocument(request).toJson(QJsonDocument::Compact), "run");
}

bool WorkerClient::send(const QByteArray &json, const QString &request) {
  if (!process) {
    emit requestFailed(request, "there is no worker (the last run ended); "
                                "run the model file again first");
    return false;
  }
  // Buffered until the process has started; a worker that died meanwhile
  // is reported by handleEnd().
  process->write(json + "\n");
  return true;
}

bool WorkerClient::execute(int index, const QString &target) {
  if (currentState != State::Idle) {
    emit requestFailed("execute", currentState == State::NotRunning
                                      ? "there is no worker (the last run "
                                        "ended); run the model file again"
                                      : "the worker is busy; wait for it or "
                                        "stop it");
    return false;
  }
  setState(State::Busy);
  return send(
      QJsonDocument(
          QJsonObject{{"cmd", "execute"}, {"index", index}, {"target", target}})
          .toJson(QJsonDocument::Compact),
      "execute");
}

bool WorkerClient::exportArtifact(int index, const QString &target,
                                  const QString &kind, const QString &path) {
  if (currentState != State::Idle) {
    emit requestFailed("export", "the worker is not ready; run the model "
                                 "file and wait for it to finish");
    return false;
  }
  setState(State::Busy);
  return send(QJsonDocument(QJsonObject{{"cmd", "export"},
                                        {"index", index},
                                        {"target", target},
                                        {"kind", kind},
                                        {"path", path}})
                  .toJson(QJsonDocument::Compact),
              "export");
}

bool WorkerClient::requestIr(int index, const QString &target,
                             const QString &stage) {
  if (currentState != State::Idle) {
    emit requestFailed("ir", "the worker is not ready; run the model file "
                             "and wait for it to finish");
    return false;
  }
  setState(State::Busy);
  return send(QJsonDocument(QJsonObject{{"cmd", "ir"},
                                        {"index", index},
                                        {"target", target},
                                        {"stage", stage}})
                  .toJson(QJsonDocument::Compact),
              "ir");
}

void WorkerClient::stop() {
  if (!process || process->state() == QProcess::NotRunning)
    return;
  stopRequested = true;
  stopClock.start();
  setState(State::Stopping);
  signalWorkerGroup(SIGINT); // not yet started: the timers end it
  terminateTimer->start(kTerminateAfterMs);
  killTimer->start(kKillAfterMs);
}

void WorkerClient::shutdown(int msecs) {
  if (!process)
    return;
  quitRequested = true;
  QProcess *p = process;
  p->disconnect(this);
  process = nullptr;
  if (p->state() != QProcess::NotRunning) {
    p->write("{\"cmd\": \"quit\"}\n");
    p->closeWriteChannel();
    if (!p->waitForFinished(msecs)) {
      signalWorkerGroup(SIGKILL);
      p->waitForFinished(1000);
    }
  }
  signalWorkerGroup(SIGKILL); // the user's processes, if any are left
  workerGroup = 0;
  delete p;
  if (notifier) {
    delete notifier;
    notifier = nullptr;
  }
  if (readFd >= 0) {
    close(readFd);
    readFd = -1;
  }
  setState(State::NotRunning);
}

} // namespace cuvil::workbench
