//===- NsysSqliteTest.cpp - Nsight Systems SQLite exports, made by hand ---===//
//
// The databases follow the schema `nsys export --type sqlite` writes (tables
// StringIds, NVTX_EVENTS, CUPTI_ACTIVITY_KIND_RUNTIME / KERNEL / MEMCPY,
// ThreadNames), in two versions: NVTX text inline with demangledName kernels
// (2023+) and NVTX textId with shortName-only kernels (older exports).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <unistd.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

namespace {

// globalTid = pid << 24 | tid (the hardware/VM bits stay 0 here).
constexpr int64_t kPid = 4321, kTid = 4322;
constexpr int64_t kGlobalTid = (kPid << 24) | kTid;
constexpr int64_t kGlobalPid = kPid << 24;

std::string tempPath(const char *name) {
  return "/tmp/cuvil-nsys-" + std::to_string(getpid()) + "-" + name + ".sqlite";
}

void exec(sqlite3 *db, const std::string &sql) {
  char *error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "") << "\n"
      << sql;
}

std::string makeDatabase(const char *name, bool modern) {
  std::string path = tempPath(name);
  std::remove(path.c_str());
  sqlite3 *db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value "
           "TEXT NOT NULL)");
  exec(db,
       "INSERT INTO StringIds VALUES (1,'cudaLaunchKernel_v7000'),"
       "(2,'void gemm_kernel<float>(float*, float const*)'),(3,'gemm_kernel'),"
       "(4,'cudaMemcpyAsync_v3020'),(5,'cuvil'),(6,'forward'),(7,'cuvil.matmul'"
       "),"
       "(8,'python3 main thread')");
  if (modern) {
    exec(db,
         "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, "
         "eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color "
         "INTEGER, "
         "text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, "
         "domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, "
         "doubleValue REAL)");
    exec(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, "
             "domainId, "
             "int64Value) VALUES "
             "(50, NULL, 75, 'cuvil', " +
                 std::to_string(kGlobalTid) +
                 ", 1, NULL),"
                 "(100, 1000, 59, 'forward', " +
                 std::to_string(kGlobalTid) +
                 ", 0, 99),"
                 "(200, 600, 59, 'cuvil.matmul', " +
                 std::to_string(kGlobalTid) +
                 ", 1, 12),"
                 "(700, NULL, 34, 'checkpoint', " +
                 std::to_string(kGlobalTid) + ", 0, NULL)");
  } else {
    exec(db, "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, "
             "eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, "
             "color INTEGER, "
             "textId INTEGER, globalTid INTEGER, domainId INTEGER)");
    exec(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, "
             "globalTid, domainId) "
             "VALUES (100, 1000, 59, 6, " +
                 std::to_string(kGlobalTid) +
                 ", 0),"
                 "(200, 600, 59, 7, " +
                 std::to_string(kGlobalTid) + ", 0)");
  }
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "
       "end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, "
       "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER "
       "NOT NULL, "
       "callchainId INTEGER)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
           "(300, 350, 1, " +
               std::to_string(kGlobalTid) +
               ", 77, 1, 0, NULL),"
               "(800, 900, 1, " +
               std::to_string(kGlobalTid) + ", 78, 4, 0, NULL)");
  std::string kernelName =
      modern ? "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL"
             : "shortName INTEGER NOT NULL";
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "
       "end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT "
       "NULL, "
       "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, " +
           kernelName + ", gridX INTEGER, blockX INTEGER)");
  exec(db, std::string("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (400, "
                       "550, 0, 1, 7, 77, ") +
               std::to_string(kGlobalPid) + (modern ? ", 2, 3" : ", 3") +
               ", 4, 128)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, "
       "end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT "
       "NULL, "
       "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
       "bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL)");
  exec(
      db,
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (820, 880, 0, 1, 7, 78, " +
          std::to_string(kGlobalPid) + ", 4096, 2)");
  exec(db,
       "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, "
       "globalTid INTEGER)");
  exec(db, "INSERT INTO ThreadNames VALUES (8, 0, " +
               std::to_string(kGlobalTid) + ")");
  sqlite3_close(db);
  return path;
}

const Event *find(const Trace &trace, std::string_view name) {
  for (const Event &e : trace.events)
    if (trace.str(e.name) == name)
      return &e;
  return nullptr;
}

std::string stackText(const Trace &trace, const Event &e) {
  std::string text;
  for (FrameId f : trace.stackFrames(e.stack))
    text += std::string(trace.str(trace.frames[f].name)) + ";";
  return text;
}

} // namespace

TEST(NsysSqlite, ModernSchemaJoinsKernelsToLaunchesAndRanges) {
  std::string path = makeDatabase("modern", true);
  auto trace = readTraceFile(path); // detected by the SQLite magic
  std::remove(path.c_str());
  ASSERT_TRUE(trace) << trace.error().text();

  const Event *kernel =
      find(*trace, "void gemm_kernel<float>(float*, float const*)");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->kind, EventKind::GpuKernel);
  EXPECT_EQ(kernel->startNs, 400);
  EXPECT_EQ(kernel->durationNs, 150);
  EXPECT_EQ(kernel->correlation, 77u);
  EXPECT_EQ(stackText(*trace, *kernel),
            "forward;cuvil.matmul;cudaLaunchKernel_v7000;");
  // The payload of a range in the "cuvil" domain is the IR op id; other
  // domains' payloads are not.
  EXPECT_EQ(kernel->opId, 12);
  EXPECT_EQ(find(*trace, "forward")->opId, kNoOp);
  const ThreadInfo &stream = trace->threads[kernel->thread];
  EXPECT_EQ(trace->str(stream.name), "stream 7");
  EXPECT_EQ(trace->str(stream.processName), "GPU 0");
  EXPECT_EQ(stream.pid, kGpuProcessBase); // device 0, beyond any real pid
  EXPECT_EQ(stream.tid, 7);

  const Event *copy = find(*trace, "Memcpy DtoH");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->kind, EventKind::Memcpy);
  EXPECT_EQ(trace->arg(*copy, "bytes"), "4096");
  EXPECT_EQ(stackText(*trace, *copy), "forward;cudaMemcpyAsync_v3020;");

  const Event *launch = find(*trace, "cudaLaunchKernel_v7000");
  ASSERT_NE(launch, nullptr);
  const ThreadInfo &host = trace->threads[launch->thread];
  EXPECT_EQ(host.pid, kPid);
  EXPECT_EQ(host.tid, kTid);
  EXPECT_EQ(trace->str(host.name), "python3 main thread");
  EXPECT_NE(find(*trace, "checkpoint"), nullptr); // a mark: an instant
  EXPECT_EQ(trace->flows.size(), 2u);

  // Per-kernel summary through the op table, GPU only.
  Selection gpu;
  gpu.kindMask = Selection::bit(EventKind::GpuKernel);
  auto rows = opTable(*trace, gpu);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].totalNs, 150);
}

TEST(NsysSqlite, OlderSchemaWithTextIdsAndShortNames) {
  std::string path = makeDatabase("older", false);
  auto trace = readNsysSqlite(path);
  std::remove(path.c_str());
  ASSERT_TRUE(trace) << trace.error().text();
  const Event *kernel = find(*trace, "gemm_kernel");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(stackText(*trace, *kernel),
            "forward;cuvil.matmul;cudaLaunchKernel_v7000;");
  EXPECT_EQ(kernel->opId, kNoOp); // no cuvil domain in this capture
}

TEST(NsysSqlite, ClearErrors) {
  auto missing = readNsysSqlite("/nonexistent/report.sqlite");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().text().find("/nonexistent/report.sqlite"),
            std::string::npos);

  std::string path = tempPath("other");
  std::remove(path.c_str());
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE customers (id INTEGER)");
  sqlite3_close(db);
  auto other = readNsysSqlite(path);
  std::remove(path.c_str());
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("nsys export"), std::string::npos);

  std::string text = tempPath("text");
  {
    std::ofstream(text) << "this is not a database, just text\n";
  }
  auto notDb = readNsysSqlite(text);
  std::remove(text.c_str());
  ASSERT_FALSE(notDb);
  EXPECT_NE(notDb.error().message.find("SQLite"), std::string::npos);
}

TEST(NsysSqlite, TruncatedDatabaseGivesAnError) {
  std::string path = makeDatabase("full", true);
  std::string bytes = readText(path);
  std::remove(path.c_str());
  // Cut at several points, past the header: never a crash, and either an
  // error or (when the cut only removed free pages) a trace.
  for (size_t cut :
       {size_t(100), bytes.size() / 3, bytes.size() / 2, bytes.size() - 100}) {
    std::string cutPath = tempPath("cut");
    {
      std::ofstream out(cutPath, std::ios::binary);
      out.write(bytes.data(), std::streamsize(cut));
    }
    auto trace = readNsysSqlite(cutPath);
    std::remove(cutPath.c_str());
    if (!trace) {
      EXPECT_FALSE(trace.error().message.empty()) << cut;
    }
  }
}
