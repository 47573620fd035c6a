//===- WorkerEnduranceTest.cpp - Many cycles of hostile user code ---------===//
//
// Cycles (CUVIL_ENDURANCE_CYCLES, default 2 in CTest; `make endurance` runs
// 100) of user code that raises, hangs until Stop, segfaults, calls
// os._exit, allocates until the worker's memory limit (CUVIL_WORKER_MEMORY_MB
// = 2048 here), prints 8 MB, and compiles, runs and profiles a model (a
// trace in the worker's profile folder). Afterwards: no worker or other
// child process left, as many open files and at most two more threads than
// before, no trace folder of an ended worker, and the event loop never held
// up for more than a second (its worst delay is printed as a figure).
//
//===----------------------------------------------------------------------===//

#include "TestData.h"
#include "WorkerClient.h"

#include <QDir>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>

using namespace cuvil::workbench;
using namespace cuvil::workbench::test;

namespace {

int countEntries(const QString &dir) {
  return QDir(dir).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).size();
}

/// Processes (not zombies) whose parent is this one.
QStringList childProcesses() {
  QStringList children;
  QString self = QString::number(QCoreApplication::applicationPid());
  for (const QString &pid : QDir("/proc").entryList(QDir::Dirs)) {
    QFile status("/proc/" + pid + "/status");
    if (!status.open(QIODevice::ReadOnly))
      continue;
    QString text = QString::fromUtf8(status.readAll());
    if (text.contains("\nPPid:\t" + self + "\n") &&
        !text.contains("\nState:\tZ"))
      children << pid;
  }
  return children;
}

/// Trace folders of workers that no longer run.
QStringList staleTraceFolders() {
  QStringList stale;
  QDir tmp(QDir::tempPath());
  for (const QString &name :
       tmp.entryList({"cuvil-worker-traces-*"}, QDir::Dirs)) {
    QString pid = name.section('-', 3, 3);
    if (!QFile::exists("/proc/" + pid))
      stale << name;
  }
  return stale;
}

/// The longest the event loop was late for a 10 ms timer.
class LoopLatency : public QObject {
public:
  LoopLatency() {
    clock.start();
    timer.setInterval(10);
    QObject::connect(&timer, &QTimer::timeout, this, [this] {
      qint64 now = clock.elapsed();
      worst = std::max(worst, now - last - 10);
      last = now;
    });
    timer.start();
  }
  qint64 worst = 0;

private:
  QElapsedTimer clock;
  QTimer timer;
  qint64 last = 0;
};

} // namespace

class WorkerEnduranceTest : public QObject {
  Q_OBJECT

private slots:
  void cyclesLeaveNothingBehind();

private:
  void runToEnd(WorkerClient &client, const QString &fixture, bool expectCrash);
  void hangThenStop(WorkerClient &client);
  void modelRunAndProfile(WorkerClient &client);
};

void WorkerEnduranceTest::runToEnd(WorkerClient &client, const QString &fixture,
                                   bool expectCrash) {
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/" + fixture));
  QVERIFY2(QTest::qWaitFor(
               [&] { return !finished.isEmpty() || !ended.isEmpty(); }, 60000),
           qPrintable(fixture + " did not finish"));
  if (expectCrash) {
    QVERIFY2(!ended.isEmpty() && ended.first().at(1).toBool(),
             qPrintable(fixture + " should have ended its worker"));
    return;
  }
  QVERIFY2(ended.isEmpty(),
           qPrintable(fixture + ": " + ended.value(0).value(0).toString()));
}

void WorkerEnduranceTest::hangThenStop(WorkerClient &client) {
  QString out;
  // The connection ends with `context`, however this function returns (a
  // failed QVERIFY returns early; output arriving later must not reach `out`).
  QObject context;
  connect(&client, &WorkerClient::consoleOutput, &context,
          [&](const QString &text, bool) { out += text; });
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/hangs.py"));
  QVERIFY(QTest::qWaitFor([&] { return out.contains("looping"); }, 60000));
  client.stop();
  QVERIFY(ended.wait(5000));
}

void WorkerEnduranceTest::modelRunAndProfile(WorkerClient &client) {
  QSignalSpy compiled(&client, &WorkerClient::compilationReported);
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/tiny_model.py"));
  QVERIFY(finished.wait(60000));
  QVERIFY(finished.first().at(0).toBool());
  QCOMPARE(compiled.size(), 1);
  auto record = compiled.first().at(0).value<CompilationRecord>();
  QSignalSpy executed(&client, &WorkerClient::executed);
  QVERIFY(client.execute(record.index, record.target));
  QVERIFY(executed.wait(60000));
  QVERIFY(!executed.first().at(0).value<RunResult>().tracePath.isEmpty());
}

void WorkerEnduranceTest::cyclesLeaveNothingBehind() {
  qputenv("CUVIL_WORKER_MEMORY_MB", "2048");
  int cycles = qEnvironmentVariableIsSet("CUVIL_ENDURANCE_CYCLES")
                   ? qEnvironmentVariableIntValue("CUVIL_ENDURANCE_CYCLES")
                   : 2;
  int filesBefore = countEntries("/proc/self/fd");
  int threadsBefore = countEntries("/proc/self/task");
  LoopLatency latency;
  QElapsedTimer clock;
  clock.start();
  {
    WorkerClient client;
    QString exceptions;
    connect(&client, &WorkerClient::exceptionRaised,
            [&](const UserException &e) {
              exceptions += e.type + ": " + e.message + "\n";
            });
    for (int cycle = 0; cycle < cycles; ++cycle) {
      exceptions.clear();
      runToEnd(client, "raises.py", false);
      hangThenStop(client);
      runToEnd(client, "segfault.py", true);
      runToEnd(client, "exits.py", true);
#if !defined(__SANITIZE_ADDRESS__) // a sanitized worker has no memory cap
      runToEnd(client, "allocates.py", false);
      QVERIFY2(exceptions.contains("MemoryError: out of memory") &&
                   exceptions.contains("2048 MiB"),
               qPrintable(exceptions));
#endif
      runToEnd(client, "prints.py", false);
      modelRunAndProfile(client);
      if (QTest::currentTestFailed())
        return;
    }
    client.shutdown(5000);
  }
  QCoreApplication::processEvents();
  QTRY_VERIFY_WITH_TIMEOUT(childProcesses().isEmpty(), 10000);
  QTRY_COMPARE_WITH_TIMEOUT(countEntries("/proc/self/fd"), filesBefore, 5000);
  int threads = countEntries("/proc/self/task");
  QVERIFY2(
      threads <= threadsBefore + 2,
      qPrintable(QString("threads %1 -> %2").arg(threadsBefore).arg(threads)));
  QVERIFY2(staleTraceFolders().isEmpty(),
           qPrintable(staleTraceFolders().join(", ")));
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  qInfo("%d cycles in %.1f s: event loop at most %lld ms late; peak RSS of "
        "this process %ld MiB; threads %d -> %d",
        cycles, clock.elapsed() / 1000.0, static_cast<long long>(latency.worst),
        usage.ru_maxrss / 1024, threadsBefore, threads);
  QVERIFY2(latency.worst < 1000,
           qPrintable(QString("event loop held up %1 ms").arg(latency.worst)));
}

QTEST_GUILESS_MAIN(WorkerEnduranceTest)
#include "WorkerEnduranceTest.moc"
