//===- DiskCache.cpp - Keeping the disk cache of compiled code bounded ----===//

#include "DiskCache.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sys/time.h>

using namespace cuvil;

namespace {

constexpr uint64_t kDefaultLimitMB = 2048;

/// "<64 hex digits>.<extension>", and those files' ".tmp" siblings.
bool isCacheFile(llvm::StringRef name) {
  return name.size() > 65 && name[64] == '.' &&
         name.take_front(64).find_first_not_of("0123456789abcdef") ==
             llvm::StringRef::npos;
}

struct Entry {
  std::string path;
  uint64_t size;
  llvm::sys::TimePoint<> used;
};

} // namespace

uint64_t detail::diskCacheLimitBytes() {
  const char *value = std::getenv("CUVIL_CACHE_MAX_MB");
  if (!value || !*value)
    return kDefaultLimitMB << 20;
  char *end = nullptr;
  double mb = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(mb >= 0) || mb > 1e9)
    return kDefaultLimitMB << 20;
  return static_cast<uint64_t>(mb * (1 << 20));
}

void detail::touchCacheEntry(const std::string &path) {
  ::utimes(path.c_str(), nullptr);
}

namespace {
/// What this process knows of a folder: its entries' bytes at the last scan
/// plus what its own compilations added since, and when it scanned.
struct FolderEstimate {
  uint64_t bytes = 0;
  std::chrono::system_clock::time_point scanned;
};
std::mutex estimatesMutex;
llvm::StringMap<FolderEstimate> estimates;
/// How long an estimate stands in for a scan: other processes' additions go
/// unseen that long at most.
constexpr auto kRescanAfter = std::chrono::minutes(1);

uint64_t bytesOf(const std::vector<std::string> &paths) {
  uint64_t total = 0;
  for (const std::string &path : paths) {
    uint64_t size = 0;
    if (!llvm::sys::fs::file_size(path, size))
      total += size;
  }
  return total;
}

/// The entries of `dir` other than `keep`, and their bytes; removes ".tmp"
/// files older than an hour on the way.
uint64_t scanFolder(const std::string &dir,
                    const std::vector<std::string> &keep,
                    std::vector<Entry> &entries) {
  auto now = std::chrono::system_clock::now();
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    llvm::sys::fs::file_status status;
    if (!isCacheFile(name) ||
        llvm::sys::fs::status(it->path(), status, /*Follow=*/false) ||
        status.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    if (name.ends_with(".tmp")) {
      if (now - status.getLastModificationTime() > std::chrono::hours(1))
        llvm::sys::fs::remove(it->path());
      continue;
    }
    if (llvm::is_contained(keep, it->path()))
      continue;
    entries.push_back(
        {it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  return total;
}
} // namespace

void detail::trimDiskCache(const std::string &dir, uint64_t limitBytes,
                           const std::vector<std::string> &keep) {
  if (limitBytes == 0)
    return;
  auto now = std::chrono::system_clock::now();
  uint64_t added = bytesOf(keep);
  // A folder scanned lately and still under its limit with what this
  // process added since is not listed again: a compilation in a folder of
  // thousands of entries would otherwise stat them all.
  {
    std::lock_guard<std::mutex> lock(estimatesMutex);
    auto known = estimates.find(dir);
    if (known != estimates.end() &&
        now - known->second.scanned < kRescanAfter &&
        known->second.bytes + added <= limitBytes) {
      known->second.bytes += added;
      return;
    }
  }
  std::vector<Entry> entries;
  uint64_t total = scanFolder(dir, keep, entries) + added;
  if (total > limitBytes) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) { return a.used < b.used; });
    uint64_t target = limitBytes / 10 * 8;
    for (const Entry &entry : entries) {
      if (total <= target)
        break;
      if (!llvm::sys::fs::remove(entry.path))
        total -= std::min(total, entry.size);
    }
  }
  std::lock_guard<std::mutex> lock(estimatesMutex);
  estimates[dir] = {total, now};
}
