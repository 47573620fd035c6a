//===- WorkerProtocolTest.cpp - The worker protocol with a real worker ----===//
//
// Every case starts a real cuvil-worker: a normal run with compilation,
// execution and export; an exception with the user's file:line; an endless
// loop stopped within a second (also when it ignores SIGINT and SIGTERM);
// Stop also ends the processes the user's file started; a segfault and
// os._exit, each followed by a working fresh worker; a
// Python that cannot start and a missing worker binary. A worker of another
// protocol version (a fake one) is refused with both versions named.
//
//===----------------------------------------------------------------------===//

#include "TestData.h"
#include "WorkerClient.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace cuvil::workbench;
using namespace cuvil::workbench::test;

class WorkerProtocolTest : public QObject {
  Q_OBJECT

private:
  /// Console text collected from a client.
  /// Connected for the console's life only: a client that outlives it (and
  /// reports its worker's last output while it ends) must not reach it.
  struct Console {
    QString out, err;
    QObject context;
    void attach(WorkerClient &client) {
      QObject::connect(&client, &WorkerClient::consoleOutput, &context,
                       [this](const QString &text, bool isError) {
                         (isError ? err : out) += text;
                       });
    }
  };

private slots:
  void normalRunReportsCompilationsExecutesAndExports();
  void cTargetShowsItsCodeAndExportsIt();
  void wasmTargetShowsItsTextAndExportsIt();
  void runForCudaShowsPtxAndExportsFatBinaries();
  void exceptionNamesTheUsersLine();
  void endlessLoopStopsWithinASecond();
  void loopIgnoringSignalsIsKilledWithinASecond();
  void stopEndsProcessesTheUsersFileStarted();
  void segfaultIsReportedAndNextRunGetsAFreshWorker();
  void osExitIsReported();
  void brokenPythonIsReported();
  void missingWorkerIsReported();
  void otherProtocolVersionIsRefused_data();
  void otherProtocolVersionIsRefused();
  void endlessProtocolLineStopsTheWorker();
};

void WorkerProtocolTest::normalRunReportsCompilationsExecutesAndExports() {
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy ready(&client, &WorkerClient::ready);
  QSignalSpy compiled(&client, &WorkerClient::compilationReported);
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/tiny_model.py"));
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().at(0).toBool(), true);
  // The Python worker speaks the protocol version this client does.
  QCOMPARE(ready.size(), 1);
  QCOMPARE(ready.first().at(1).toInt(), kWorkerProtocolVersion);
  QCOMPARE(client.state(), WorkerClient::State::Idle);
  QCOMPARE(compiled.size(), 1);
  auto record = compiled.first().at(0).value<CompilationRecord>();
  QCOMPARE(record.function, QString("scale_shift"));
  QCOMPARE(record.target, QString("cpu"));
  // The target says what its code can be exported as (the export menu).
  QCOMPARE(record.artifacts,
           QStringList({"mlir", "llvm", "asm", "obj", "so", "cuvil", "irpkg"}));
  QCOMPARE(record.inputSummary(),
           QString("float32[8, 16], float32[16, 4], float32[4]"));
  QVERIFY2(record.source.endsWith("tiny_model.py:8"),
           qPrintable(record.source));
  QVERIFY(record.steps.size() > 10);
  QCOMPARE(record.steps.first().name, QString("input"));
  QVERIFY(record.steps.first().ir.contains("cuvil.matmul"));
  bool fused = false;
  for (const PassStep &s : record.steps)
    fused |= s.name == "cuvil-fuse-elementwise" && s.changed;
  QVERIFY(fused);
  QVERIFY2(console.out.contains("result [16. 18. 20. 22.]"),
           qPrintable(console.out));

  QSignalSpy executed(&client, &WorkerClient::executed);
  QVERIFY(client.execute(0, record.target));
  QVERIFY(executed.wait(30000));
  auto run = executed.first().at(0).value<RunResult>();
  QVERIFY(run.latencyMs > 0);
  QVERIFY(run.runs >= 3);
  QVERIFY2(run.maxError < 1e-5, qPrintable(QString::number(run.maxError)));

  QTemporaryDir dir;
  QSignalSpy exported(&client, &WorkerClient::exported);
  QVERIFY(client.exportArtifact(0, record.target, "obj", dir.filePath("f.o")));
  QVERIFY(exported.wait(30000));
  QFile object(dir.filePath("f.o"));
  QVERIFY(object.open(QIODevice::ReadOnly));
  QCOMPARE(object.read(4), QByteArray("\x7f"
                                      "ELF"));

  QSignalSpy ir(&client, &WorkerClient::irReady);
  QVERIFY(client.requestIr(0, record.target, "llvm"));
  QVERIFY(ir.wait(30000));
  QCOMPARE(ir.first().at(1).toString(), QString("llvm"));
  QVERIFY(ir.first().at(2).toString().contains("define"));

  QSignalSpy failed(&client, &WorkerClient::requestFailed);
  QVERIFY(client.execute(5, record.target));
  QVERIFY(failed.wait(10000));
  QVERIFY(failed.first().at(1).toString().contains("no compilation #5"));

  // The target travels with the request: one that is not the compilation's
  // is refused, naming both.
  failed.clear();
  QVERIFY(client.exportArtifact(0, "wasm", "obj", dir.filePath("g.o")));
  QVERIFY(failed.wait(10000));
  QCOMPARE(failed.first().at(0).toString(), QString("export"));
  QString message = failed.first().at(1).toString();
  QVERIFY2(message.contains("compiled for target 'cpu', not 'wasm'"),
           qPrintable(message));
  QVERIFY(!QFileInfo::exists(dir.filePath("g.o")));
  QCOMPARE(client.state(), WorkerClient::State::Idle);
}

void WorkerProtocolTest::cTargetShowsItsCodeAndExportsIt() {
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy compiled(&client, &WorkerClient::compilationReported);
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/tiny_c_model.py"));
  QVERIFY(finished.wait(60000));
  QVERIFY2(finished.first().at(0).toBool(), qPrintable(console.err));
  QVERIFY2(console.out.contains("result [16. 18. 20. 22.]"),
           qPrintable(console.out));
  QCOMPARE(compiled.size(), 1);
  auto record = compiled.first().at(0).value<CompilationRecord>();
  QCOMPARE(record.target, QString("c"));
  QCOMPARE(record.artifacts, QStringList({"mlir", "c", "h", "irpkg"}));

  QSignalSpy ir(&client, &WorkerClient::irReady);
  QVERIFY(client.requestIr(0, record.target, "c"));
  QVERIFY(ir.wait(30000));
  QVERIFY(ir.first().at(2).toString().contains(
      "int scale_shift(const float *in0, const float *in1, const float *in2, "
      "float *out0)"));

  QTemporaryDir dir;
  QSignalSpy exported(&client, &WorkerClient::exported);
  for (const QString kind : {"c", "h"}) {
    exported.clear();
    QString path = dir.filePath("scale_shift." + kind);
    QVERIFY(client.exportArtifact(0, record.target, kind, path));
    QVERIFY(exported.wait(30000));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("#define SCALE_SHIFT_IN0_SIZE 128"));
  }
}

void WorkerProtocolTest::wasmTargetShowsItsTextAndExportsIt() {
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy compiled(&client, &WorkerClient::compilationReported);
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/tiny_wasm_model.py"));
  QVERIFY(finished.wait(60000));
  QVERIFY2(finished.first().at(0).toBool(), qPrintable(console.err));
  // Computed by the module in Node.
  QVERIFY2(console.out.contains("result [16. 18. 20. 22.]"),
           qPrintable(console.out));
  auto record = compiled.first().at(0).value<CompilationRecord>();
  QCOMPARE(record.target, QString("wasm"));
  QCOMPARE(record.artifacts,
           QStringList({"mlir", "wasm", "mjs", "wat", "llvm", "irpkg"}));

  // The module's text (wasm2wat: wabt, from make test's set-up).
  QSignalSpy ir(&client, &WorkerClient::irReady);
  QVERIFY(client.requestIr(0, record.target, "wat"));
  QVERIFY(ir.wait(30000));
  QString text = ir.first().at(2).toString();
  QVERIFY2(text.contains("(export \"cuvil_scale_shift\""), qPrintable(text));
  QVERIFY(!text.contains("(import"));

  QTemporaryDir dir;
  QSignalSpy exported(&client, &WorkerClient::exported);
  QHash<QString, QByteArray> expected = {
      {"wasm", QByteArray("\0asm", 4)},
      {"mjs", "export async function load(source)"}};
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    exported.clear();
    QString path = dir.filePath("scale_shift." + it.key());
    QVERIFY(client.exportArtifact(0, record.target, it.key(), path));
    QVERIFY(exported.wait(30000));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY2(file.readAll().contains(it.value()), qPrintable(it.key()));
  }
}

void WorkerProtocolTest::runForCudaShowsPtxAndExportsFatBinaries() {
  // The file says cpu; the run's target (the Workbench's target box) wins.
  // Without a GPU the call runs as Python and says why; the PTX is there.
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy targets(&client, &WorkerClient::targetsReported);
  QSignalSpy compiled(&client, &WorkerClient::compilationReported);
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/tiny_model.py"), "cuda");
  QVERIFY(finished.wait(60000));
  QVERIFY2(finished.first().at(0).toBool(), qPrintable(console.err));
  QVERIFY(console.out.contains("result [16. 18. 20. 22.]"));
  QVERIFY(!targets.isEmpty());
  QVERIFY(targets.first().at(0).toStringList().contains("cuda"));
  auto record = compiled.first().at(0).value<CompilationRecord>();
  QCOMPARE(record.target, QString("cuda"));
  for (const char *kind : {"ptx", "cubin", "fatbin"})
    QVERIFY2(record.artifacts.contains(kind), kind);

  QSignalSpy ir(&client, &WorkerClient::irReady);
  QVERIFY(client.requestIr(0, record.target, "ptx"));
  QVERIFY(ir.wait(30000));
  QString text = ir.first().at(2).toString();
  QVERIFY2(text.contains(".target sm_90") && text.contains(".entry "),
           qPrintable(text.left(400)));
  QVERIFY(text.contains(".maxntid"));

  QTemporaryDir dir;
  QSignalSpy exported(&client, &WorkerClient::exported);
  QString path = dir.filePath("scale_shift.fatbin");
  QVERIFY(client.exportArtifact(0, record.target, "fatbin", path));
  QVERIFY(exported.wait(30000));
  QFile file(path);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QCOMPARE(file.read(4), QByteArray("\x50\xed\x55\xba", 4));
}

void WorkerProtocolTest::exceptionNamesTheUsersLine() {
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy raised(&client, &WorkerClient::exceptionRaised);
  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/raises.py"));
  QVERIFY(finished.wait(30000));
  QCOMPARE(finished.first().at(0).toBool(), false);
  QCOMPARE(raised.size(), 1);
  auto e = raised.first().at(0).value<UserException>();
  QCOMPARE(e.type, QString("ZeroDivisionError"));
  QCOMPARE(e.line, 7);
  QVERIFY(e.file.endsWith("raises.py"));
  QCOMPARE(e.summary(),
           QString("ZeroDivisionError: division by zero (raises.py:7)"));
  // The worker survives a user exception and stays usable.
  QCOMPARE(client.state(), WorkerClient::State::Idle);
  QTRY_VERIFY(console.out.contains("about to divide"));
  QTRY_VERIFY(console.err.contains("a warning on stderr"));
  QTRY_VERIFY(console.err.contains("Traceback"));
}

void WorkerProtocolTest::endlessLoopStopsWithinASecond() {
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/hangs.py"));
  QTRY_VERIFY_WITH_TIMEOUT(console.out.contains("looping"), 30000);
  QElapsedTimer clock;
  clock.start();
  client.stop();
  QVERIFY(ended.wait(2000));
  qint64 ms = clock.elapsed();
  QVERIFY2(ms < 1000, qPrintable(QString("stop took %1 ms").arg(ms)));
  QCOMPARE(ended.first().at(1).toBool(), false); // on request
  QVERIFY(ended.first().at(0).toString().startsWith("Stopped hangs.py"));
  QCOMPARE(client.state(), WorkerClient::State::NotRunning);
}

void WorkerProtocolTest::loopIgnoringSignalsIsKilledWithinASecond() {
  qputenv("CUVIL_TEST_HANG_HARD", "1");
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/hangs.py"));
  QTRY_VERIFY_WITH_TIMEOUT(console.out.contains("looping"), 30000);
  qunsetenv("CUVIL_TEST_HANG_HARD");
  QElapsedTimer clock;
  clock.start();
  client.stop();
  QVERIFY(ended.wait(2000));
  qint64 ms = clock.elapsed();
  // SIGINT and SIGTERM were ignored: only the kill at 600 ms ended it.
  QVERIFY2(ms >= 590 && ms < 1000,
           qPrintable(QString("stop took %1 ms").arg(ms)));
}

/// True while `pid` runs (a zombie waiting for its reaper does not count).
static bool processRuns(qint64 pid) {
  QFile stat(QString("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly))
    return false;
  QByteArray text = stat.readAll();
  int close = text.lastIndexOf(')');
  return close > 0 && text.size() > close + 2 && text[close + 2] != 'Z';
}

void WorkerProtocolTest::stopEndsProcessesTheUsersFileStarted() {
  // The worker leads its own process group; Stop and the worker's end reach
  // what the user's file started, which used to keep running.
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/spawns.py"));
  QTRY_VERIFY_WITH_TIMEOUT(console.out.contains("child "), 30000);
  qint64 child =
      console.out.section("child ", 1).section('\n', 0, 0).toLongLong();
  QVERIFY(child > 0);
  QVERIFY(processRuns(child));
  client.stop();
  QVERIFY(ended.wait(10000));
  QVERIFY(ended.first().at(0).toString().startsWith("Stopped spawns.py"));
  QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 10000);
}

void WorkerProtocolTest::segfaultIsReportedAndNextRunGetsAFreshWorker() {
  WorkerClient client;
  Console console;
  console.attach(client);
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/segfault.py"));
  QVERIFY(ended.wait(30000));
  QCOMPARE(ended.first().at(1).toBool(), true);
  QString description = ended.first().at(0).toString();
  QVERIFY2(description.contains("crashed (SIGSEGV"), qPrintable(description));
  QVERIFY(description.contains("segfault.py"));
  // faulthandler shows where the user's code was.
  QTRY_VERIFY(console.err.contains("segfault.py\", line 5"));
  QCOMPARE(client.state(), WorkerClient::State::NotRunning);

  QSignalSpy finished(&client, &WorkerClient::runFinished);
  client.runFile(testData("fixtures/raises.py"));
  QVERIFY(finished.wait(30000));
  QVERIFY(client.workerPid() > 0);
  QCOMPARE(client.state(), WorkerClient::State::Idle);
}

void WorkerProtocolTest::osExitIsReported() {
  WorkerClient client;
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/exits.py"));
  QVERIFY(ended.wait(30000));
  QCOMPARE(ended.first().at(1).toBool(), true);
  QString description = ended.first().at(0).toString();
  QVERIFY2(description.contains("exited with code 7 while running exits.py"),
           qPrintable(description));
}

/// Runs the tiny model on `client` and returns how its worker ended when it
/// ended unexpectedly within 30 s; "" otherwise.
static QString unexpectedEnd(WorkerClient &client) {
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/tiny_model.py"));
  if (!ended.wait(30000) || !ended.first().at(1).toBool())
    return {};
  return ended.first().at(0).toString();
}

void WorkerProtocolTest::brokenPythonIsReported() {
  qputenv("PYTHONHOME", "/nonexistent-python-home");
  WorkerClient client;
  Console console;
  console.attach(client);
  QString description = unexpectedEnd(client);
  qunsetenv("PYTHONHOME");
  QVERIFY2(description.contains("could not start Python"),
           qPrintable(description));
  QTRY_VERIFY(console.err.contains("Python did not start"));
}

void WorkerProtocolTest::missingWorkerIsReported() {
  WorkerClient client;
  client.setWorkerPath("/nonexistent/cuvil-worker");
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/tiny_model.py"));
  QTRY_VERIFY(!ended.isEmpty());
  QString description = ended.first().at(0).toString();
  QVERIFY2(description.startsWith(
               "Cannot start the worker /nonexistent/cuvil-worker"),
           qPrintable(description));
  QVERIFY(description.contains("set CUVIL_WORKER"));
  QCOMPARE(client.state(), WorkerClient::State::NotRunning);
}

void WorkerProtocolTest::otherProtocolVersionIsRefused_data() {
  QTest::addColumn<QByteArray>("protocol");
  QTest::addColumn<QString>("theirs");
  QTest::newRow("older") << QByteArray("1") << QString("worker protocol 1");
  QTest::newRow("newer")
      << QByteArray::number(kWorkerProtocolVersion + 1)
      << QString("worker protocol %1").arg(kWorkerProtocolVersion + 1);
  QTest::newRow("unversioned")
      << QByteArray() << QString("an unversioned worker protocol");
}

void WorkerProtocolTest::otherProtocolVersionIsRefused() {
  QFETCH(QByteArray, protocol);
  QFETCH(QString, theirs);
  qputenv("CUVIL_TEST_WORKER_PROTOCOL", protocol);
  QString fake = testData("fixtures/other_protocol_worker.sh");
  WorkerClient client;
  client.setWorkerPath(fake);
  QSignalSpy ready(&client, &WorkerClient::ready);
  QSignalSpy started(&client, &WorkerClient::runStarted);
  QSignalSpy ended(&client, &WorkerClient::workerEnded);
  client.runFile(testData("fixtures/tiny_model.py"));
  QVERIFY(ended.wait(30000));
  qunsetenv("CUVIL_TEST_WORKER_PROTOCOL");
  QCOMPARE(ended.first().at(1).toBool(), true);
  QString description = ended.first().at(0).toString();
  QVERIFY2(description.startsWith("The worker " + fake),
           qPrintable(description));
  QVERIFY2(description.contains("(cuvil package /old/cuvil) speaks " + theirs),
           qPrintable(description));
  QVERIFY2(
      description.contains(QString("this Workbench speaks worker protocol %1")
                               .arg(kWorkerProtocolVersion)),
      qPrintable(description));
  QVERIFY(description.contains("Rebuild both"));
  QVERIFY(description.contains("set CUVIL_WORKER"));
  QCOMPARE(client.state(), WorkerClient::State::NotRunning);
  // Nothing it said after `ready` is believed.
  QTest::qWait(200);
  QVERIFY(ready.isEmpty());
  QVERIFY(started.isEmpty());
  QCOMPARE(ended.size(), 1);
}

void WorkerProtocolTest::endlessProtocolLineStopsTheWorker() {
  // A line without end is refused once it passes the limit (1 MiB here),
  // and the worker stopped, instead of growing the Workbench's memory.
  qputenv("CUVIL_TEST_WORKER_PROTOCOL",
          QByteArray::number(kWorkerProtocolVersion));
  WorkerClient client;
  client.setWorkerPath(testData("fixtures/endless_line_worker.sh"));
  client.setMaxLine(qsizetype(1) << 20);
  QString description = unexpectedEnd(client);
  qunsetenv("CUVIL_TEST_WORKER_PROTOCOL");
  QVERIFY2(description.contains("over 1 MiB on its protocol pipe without "
                                "ending the line"),
           qPrintable(description));
  QVERIFY(description.contains("file descriptor 3"));
  QCOMPARE(client.state(), WorkerClient::State::NotRunning);
}

QTEST_GUILESS_MAIN(WorkerProtocolTest)
#include "WorkerProtocolTest.moc"
