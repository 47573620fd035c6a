//===- DiskCache.h - Keeping the disk cache of compiled code bounded -*- C++
//-*-===//
//
// Entries are files named by their 64-hex-digit key (compiled code with the
// target's extension, text indexes with ".index"), written through unique
// ".tmp" names. Loading an entry marks it used (its modification time), and
// after a compilation adds entries the folder is trimmed, least recently
// used first, to the limit CUVIL_CACHE_MAX_MB sets (default 2048; 0: no
// limit). Nothing else in the folder is touched: other files and folders
// (the model frameworks' under ~/.cache/cuvil) stay.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_DRIVER_DISKCACHE_H
#define CUVIL_LIB_DRIVER_DISKCACHE_H

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::detail {

/// The size limit of the disk cache in bytes, from CUVIL_CACHE_MAX_MB
/// (fractions allowed); 0 for no limit. An unreadable value is ignored.
uint64_t diskCacheLimitBytes();

/// Marks the entry at `path` as just used.
void touchCacheEntry(const std::string &path);

/// Removes least recently used entries of `dir` until they take at most
/// 80% of `limitBytes` (when they exceed it), never one of `keep`, and
/// ".tmp" files older than an hour (left by a killed process). Best effort:
/// files that vanish or resist removal are skipped. The folder is listed at
/// most once a minute per process while what it holds (as last listed, plus
/// `keep` of every call since) stays under the limit.
void trimDiskCache(const std::string &dir, uint64_t limitBytes,
                   const std::vector<std::string> &keep);

} // namespace cuvil::detail

#endif // CUVIL_LIB_DRIVER_DISKCACHE_H
