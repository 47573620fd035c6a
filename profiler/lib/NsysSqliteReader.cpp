//===- NsysSqliteReader.cpp - Nsight Systems SQLite export importer -------===//
//
// Reads `nsys export --type sqlite` files. The schema varies between nsys
// versions, so tables come from sqlite_master and columns from
// PRAGMA table_info: NVTX_EVENTS (text or textId), CUPTI_ACTIVITY_KIND_
// RUNTIME / KERNEL / MEMCPY / MEMSET, StringIds, ThreadNames, PROCESSES.
// Kernels join their runtime launch by correlationId; the NVTX ranges
// enclosing the launch on its thread become the kernel's stack.
//
//===----------------------------------------------------------------------===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Formats.h"

#include <sqlite3.h>

#include <set>
#include <unordered_map>

namespace cuvil::profiler {
namespace {

class Database {
public:
  explicit Database(const std::string &path) : path(path) {}
  ~Database() {
    if (db)
      sqlite3_close(db);
  }

  bool open(std::string &error) {
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK) {
      error = db ? sqlite3_errmsg(db) : "cannot open";
      return false;
    }
    return true;
  }

  /// Runs `sql`, calling `row` per result row; false with `error` set.
  template <typename F>
  bool query(const std::string &sql, std::string &error, F &&row) {
    sqlite3_stmt *stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      error = std::string(sqlite3_errmsg(db)) + " (in: " + sql + ")";
      return false;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
      row(stmt);
    if (rc != SQLITE_DONE)
      error = std::string(sqlite3_errmsg(db)) + " (in: " + sql + ")";
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE;
  }

  std::set<std::string> columns(const std::string &table, std::string &error) {
    std::set<std::string> out;
    query("PRAGMA table_info(" + table + ")", error, [&](sqlite3_stmt *s) {
      out.insert(reinterpret_cast<const char *>(sqlite3_column_text(s, 1)));
    });
    return out;
  }

  std::string path;
  sqlite3 *db = nullptr;
};

std::string text(sqlite3_stmt *s, int column) {
  const unsigned char *t = sqlite3_column_text(s, column);
  return t ? reinterpret_cast<const char *>(t) : "";
}

bool isNull(sqlite3_stmt *s, int column) {
  return sqlite3_column_type(s, column) == SQLITE_NULL;
}

// globalTid/globalPid pack the process and thread ids: pid in bits 24-47,
// tid in bits 0-23.
int64_t pidOf(int64_t globalId) { return (globalId >> 24) & 0xFFFFFF; }
int64_t tidOf(int64_t globalId) { return globalId & 0xFFFFFF; }

const char *copyKindName(int64_t kind) {
  switch (kind) {
  case 1:
    return "Memcpy HtoD";
  case 2:
    return "Memcpy DtoH";
  case 3:
    return "Memcpy HtoA";
  case 4:
    return "Memcpy AtoH";
  case 8:
    return "Memcpy DtoD";
  case 10:
    return "Memcpy PtoP";
  default:
    return "Memcpy";
  }
}

constexpr int kNvtxMark = 34;
constexpr int kNvtxPushPopRange = 59;
constexpr int kNvtxStartEndRange = 60;
constexpr int kNvtxDomainCreate = 75;

} // namespace

Expected<Trace> readNsysSqlite(const std::string &path) {
  auto fail = [&](const std::string &message) {
    TraceError error;
    error.path = path;
    error.message = detail::escapeInvalidUtf8(message); // quotes the file
    return error;
  };
  Database db(path);
  std::string error;
  if (!db.open(error))
    return fail("cannot open as SQLite: " + error);

  std::set<std::string> tables;
  if (!db.query("SELECT name FROM sqlite_master WHERE type='table'", error,
                [&](sqlite3_stmt *s) { tables.insert(text(s, 0)); }))
    return fail("not a readable SQLite database (" + error +
                "); expected an `nsys export --type sqlite` file");
  static const char *const known[] = {
      "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL",
      "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
      "CUPTI_ACTIVITY_KIND_MEMSET"};
  bool any = false;
  for (const char *t : known)
    any |= tables.count(t) > 0;
  if (!any)
    return fail("no NVTX_EVENTS or CUPTI_ACTIVITY_KIND_* table: this SQLite "
                "file is not an Nsight Systems export (create one with "
                "`nsys export --type sqlite report.nsys-rep`)");

  Trace trace;
  std::unordered_map<int64_t, StringId> stringIds;
  if (tables.count("StringIds") &&
      !db.query("SELECT id, value FROM StringIds", error, [&](sqlite3_stmt *s) {
        stringIds[sqlite3_column_int64(s, 0)] = trace.intern(text(s, 1));
      }))
    return fail(error);
  auto stringOf = [&](sqlite3_stmt *s, int column) -> StringId {
    if (isNull(s, column))
      return 0;
    auto found = stringIds.find(sqlite3_column_int64(s, column));
    return found == stringIds.end() ? 0 : found->second;
  };

  auto hostThread = [&](int64_t globalTid) {
    return trace.thread(pidOf(globalTid), tidOf(globalTid));
  };
  // Device work goes on one track per stream, in a process per GPU (the
  // layout PyTorch's traces use), ids above any real pid.
  auto streamThread = [&](int64_t globalPid, int64_t device, int64_t stream) {
    (void)globalPid;
    uint32_t t = trace.thread(kGpuProcessBase + device, stream);
    if (!trace.threads[t].name) {
      trace.threads[t].name = trace.intern("stream " + std::to_string(stream));
      trace.threads[t].processName =
          trace.intern("GPU " + std::to_string(device));
    }
    return t;
  };

  // NVTX: domains first, so that payloads of the "cuvil" domain become op ids.
  if (tables.count("NVTX_EVENTS")) {
    auto cols = db.columns("NVTX_EVENTS", error);
    for (const char *required : {"start", "end", "globalTid"})
      if (!cols.count(required))
        return fail(std::string("NVTX_EVENTS has no \"") + required +
                    "\" column; unsupported nsys export version");
    bool hasText = cols.count("text"), hasTextId = cols.count("textId");
    bool hasType = cols.count("eventType"), hasDomain = cols.count("domainId");
    bool hasPayload = cols.count("int64Value") > 0;
    std::string sql = "SELECT start, end, globalTid, ";
    sql += hasText ? "text, " : "NULL, ";
    sql += hasTextId ? "textId, " : "NULL, ";
    sql += hasType ? "eventType, " : "NULL, ";
    sql += hasDomain ? "domainId, " : "NULL, ";
    sql += hasPayload ? "int64Value " : "NULL ";
    sql += "FROM NVTX_EVENTS ORDER BY start";
    std::set<int64_t> cuvilDomains;
    std::vector<Event> pending;
    std::vector<int64_t> domains;
    StringId category = trace.intern("nvtx");
    if (!db.query(sql, error, [&](sqlite3_stmt *s) {
          int64_t type = hasType && !isNull(s, 5) ? sqlite3_column_int64(s, 5)
                                                  : kNvtxPushPopRange;
          StringId name =
              !isNull(s, 3) ? trace.intern(text(s, 3)) : stringOf(s, 4);
          if (type == kNvtxDomainCreate) {
            if (trace.str(name) == "cuvil" && !isNull(s, 6))
              cuvilDomains.insert(sqlite3_column_int64(s, 6));
            return;
          }
          if (type != kNvtxPushPopRange && type != kNvtxStartEndRange &&
              type != kNvtxMark)
            return;
          if (isNull(s, 2))
            return;
          Event e;
          e.startNs = sqlite3_column_int64(s, 0);
          e.durationNs =
              isNull(s, 1) ? 0 : sqlite3_column_int64(s, 1) - e.startNs;
          if (e.durationNs < 0)
            return;
          e.name = name;
          e.kind = EventKind::Nvtx;
          e.category = category;
          e.thread = hostThread(sqlite3_column_int64(s, 2));
          if (!isNull(s, 7))
            e.opId = sqlite3_column_int64(s, 7);
          pending.push_back(e);
          domains.push_back(isNull(s, 6) ? 0 : sqlite3_column_int64(s, 6));
        }))
      return fail(error);
    for (size_t i = 0; i < pending.size(); ++i) {
      if (!cuvilDomains.count(domains[i]))
        pending[i].opId = kNoOp; // payloads of other tools are not op ids
      trace.events.push_back(pending[i]);
    }
  }

  if (tables.count("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    auto cols = db.columns("CUPTI_ACTIVITY_KIND_RUNTIME", error);
    for (const char *required : {"start", "end", "globalTid", "correlationId"})
      if (!cols.count(required))
        return fail(std::string("CUPTI_ACTIVITY_KIND_RUNTIME has no \"") +
                    required + "\" column; unsupported nsys export version");
    std::string sql = "SELECT start, end, globalTid, correlationId, ";
    sql += cols.count("nameId") ? "nameId " : "NULL ";
    sql += "FROM CUPTI_ACTIVITY_KIND_RUNTIME";
    StringId category = trace.intern("cuda_runtime");
    StringId unnamed = trace.intern("cuda runtime call");
    if (!db.query(sql, error, [&](sqlite3_stmt *s) {
          Event e;
          e.startNs = sqlite3_column_int64(s, 0);
          e.durationNs = sqlite3_column_int64(s, 1) - e.startNs;
          e.thread = hostThread(sqlite3_column_int64(s, 2));
          e.correlation = static_cast<uint64_t>(sqlite3_column_int64(s, 3));
          e.name = stringOf(s, 4) ? stringOf(s, 4) : unnamed;
          e.kind = EventKind::RuntimeApi;
          e.category = category;
          trace.events.push_back(e);
        }))
      return fail(error);
  }

  auto readDeviceTable = [&](const char *table, EventKind kind) -> bool {
    if (!tables.count(table))
      return true;
    auto cols = db.columns(table, error);
    for (const char *required :
         {"start", "end", "deviceId", "streamId", "correlationId"})
      if (!cols.count(required)) {
        error = std::string(table) + " has no \"" + required +
                "\" column; unsupported nsys export version";
        return false;
      }
    std::string nameColumn = "NULL";
    for (const char *candidate :
         {"demangledName", "shortName", "name", "copyKind"})
      if (cols.count(candidate)) {
        nameColumn = candidate;
        break;
      }
    std::string sql = "SELECT start, end, deviceId, streamId, correlationId, ";
    sql += cols.count("globalPid") ? "globalPid, " : "0, ";
    sql += nameColumn + ", ";
    sql += cols.count("bytes") ? "bytes " : "NULL ";
    sql += std::string("FROM ") + table;
    StringId category =
        trace.intern(kind == EventKind::GpuKernel ? "kernel" : "gpu_memcpy");
    bool isMemset = std::string(table) == "CUPTI_ACTIVITY_KIND_MEMSET";
    return db.query(sql, error, [&](sqlite3_stmt *s) {
      Event e;
      e.startNs = sqlite3_column_int64(s, 0);
      e.durationNs = sqlite3_column_int64(s, 1) - e.startNs;
      e.thread =
          streamThread(sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 2),
                       sqlite3_column_int64(s, 3));
      e.correlation = static_cast<uint64_t>(sqlite3_column_int64(s, 4));
      e.kind = kind;
      e.category = category;
      if (kind == EventKind::GpuKernel)
        e.name = stringOf(s, 6) ? stringOf(s, 6) : trace.intern("kernel");
      else if (isMemset)
        e.name = trace.intern("Memset");
      else
        e.name = trace.intern(copyKindName(sqlite3_column_int64(s, 6)));
      if (!isNull(s, 7))
        e.args = trace.addArgs(
            {{trace.intern("bytes"),
              trace.intern(std::to_string(sqlite3_column_int64(s, 7)))}});
      trace.events.push_back(e);
    });
  };
  if (!readDeviceTable("CUPTI_ACTIVITY_KIND_KERNEL", EventKind::GpuKernel) ||
      !readDeviceTable("CUPTI_ACTIVITY_KIND_MEMCPY", EventKind::Memcpy) ||
      !readDeviceTable("CUPTI_ACTIVITY_KIND_MEMSET", EventKind::Memcpy))
    return fail(error);

  // Thread and process names where the export has them.
  if (tables.count("ThreadNames")) {
    auto cols = db.columns("ThreadNames", error);
    if (cols.count("nameId") && cols.count("globalTid"))
      db.query("SELECT nameId, globalTid FROM ThreadNames", error,
               [&](sqlite3_stmt *s) {
                 uint32_t t = hostThread(sqlite3_column_int64(s, 1));
                 trace.threads[t].name = stringOf(s, 0);
               });
  }
  if (tables.count("PROCESSES")) {
    auto cols = db.columns("PROCESSES", error);
    if (cols.count("pid") && cols.count("name"))
      db.query("SELECT pid, name FROM PROCESSES", error, [&](sqlite3_stmt *s) {
        StringId name = trace.intern(text(s, 1));
        for (ThreadInfo &t : trace.threads)
          if (t.pid == sqlite3_column_int64(s, 0) && !t.processName)
            t.processName = name;
      });
  }

  trace.sortEvents();
  trace.linkLaunches();
  return trace;
}

} // namespace cuvil::profiler
