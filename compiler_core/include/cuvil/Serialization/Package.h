//===- Package.h - The container of .irpkg and .cuvil packages --*- C++ -*-===//
//
// Both package kinds share one container (specified in docs/irpkg.md): a
// fixed header, named entries each stored raw or as its own zstd frame (so
// one function or weight is read without decompressing the rest), a JSON
// metadata object and a JSON index, the latter two covered by a SHA-256 in
// the header and every entry by its own SHA-256. The reader maps the file
// read-only and treats every byte as hostile: each offset, length, count
// and decompressed size is checked before use, and each refusal names the
// file, the field and what was wrong. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SERIALIZATION_PACKAGE_H
#define CUVIL_SERIALIZATION_PACKAGE_H

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// What a package holds: portable IR or compiled executables.
enum class PackageKind : uint16_t { IR = 1, Executable = 2 };

/// "IR package (.irpkg)" / "executable package (.cuvil)".
const char *packageKindName(PackageKind kind);

/// The container format this Cuvil writes and the newest it reads: same
/// major, minor up to this one.
struct PackageFormatVersion {
  uint16_t major;
  uint16_t minor;
};
constexpr PackageFormatVersion kPackageFormat = {1, 0};

/// Bytes of the fixed header; entries start here, each aligned to
/// kPackageAlignment.
constexpr uint64_t kPackageHeaderBytes = 128;
constexpr uint64_t kPackageAlignment = 64;

/// One entry as the index describes it.
struct PackageEntry {
  std::string name;  ///< "ir/module.mlir", "code/cpu.so", "weights/w0"
  std::string codec; ///< "none" or "zstd"
  uint64_t offset = 0;
  uint64_t size = 0;    ///< bytes stored in the file
  uint64_t rawSize = 0; ///< bytes after decompression
  std::string sha256;   ///< hex digest of the stored bytes
};

/// Limits a reader applies (defaults from CUVIL_MAX_PACKAGE_ENTRY_MIB).
struct PackageLimits {
  uint64_t maxEntryBytes;               ///< decompressed size of one entry
  uint64_t maxMetadataBytes = 16 << 20; ///< metadata and index, each
  unsigned maxWindowLog = 27;           ///< zstd window: 128 MiB
  static PackageLimits fromEnvironment();
};

/// Builds a package in memory and writes it atomically (a temporary file
/// renamed over the target, so a failed write never leaves half a package).
class PackageWriter {
public:
  explicit PackageWriter(PackageKind kind) : kind(kind) {}

  /// Adds an entry; false with `error` for an invalid or repeated name.
  /// `compress` stores it as a zstd frame (level 3), else raw.
  bool add(const std::string &name, std::string_view data, bool compress,
           std::string &error);
  /// `json` must be a JSON object.
  bool setMetadata(const std::string &json, std::string &error);
  bool write(const std::string &path, std::string &error) const;

private:
  struct Stored {
    PackageEntry entry;
    std::string bytes;
  };
  PackageKind kind;
  std::vector<Stored> stored;
  std::string metadata = "{}";
};

/// A package mapped read-only. Entries are checked against their digests
/// when read; the header, metadata and index when opened.
class PackageReader {
public:
  /// Opens and checks `path`; null with `error` (naming the file and the
  /// field) when it is not a well-formed package of kind `expected` (of
  /// either kind when none is expected).
  static std::unique_ptr<PackageReader>
  open(const std::string &path, std::optional<PackageKind> expected,
       std::string &error,
       const PackageLimits &limits = PackageLimits::fromEnvironment());
  ~PackageReader();
  PackageReader(const PackageReader &) = delete;
  PackageReader &operator=(const PackageReader &) = delete;

  const std::string &path() const { return filePath; }
  PackageKind kind() const { return packageKind; }
  PackageFormatVersion version() const { return formatVersion; }
  /// The metadata object as JSON text.
  const std::string &metadata() const { return metadataText; }
  const std::vector<PackageEntry> &entries() const { return index; }
  const PackageEntry *find(const std::string &name) const;

  /// The raw bytes of entry `name`, decompressed and checked against its
  /// digest. False with `error` naming the entry when that fails.
  bool read(const std::string &name, std::string &out,
            std::string &error) const;

private:
  PackageReader() = default;
  bool parseIndex(const std::string &json, std::string &error);
  std::string where(const std::string &field) const;

  std::string filePath;
  const char *base = nullptr;
  uint64_t fileSize = 0;
  PackageLimits limits{};
  PackageFormatVersion formatVersion{};
  PackageKind packageKind = PackageKind::IR;
  std::string metadataText;
  std::vector<PackageEntry> index;
};

/// True when `name` is a valid entry name: '/'-separated components of
/// [A-Za-z0-9_.-] that start with a letter, digit or '_', at most 200
/// characters; such a name never leaves a directory it is joined to.
bool isValidEntryName(std::string_view name);

/// Writes all of `data` to file descriptor `fd` (retrying short writes and
/// EINTR); 0, or the errno that stopped it.
int writeAll(int fd, std::string_view data);

/// Hex SHA-256 of `data`.
std::string sha256Hex(std::string_view data);

/// SHA-256 of data given in parts (OpenSSL's, which uses the CPU's SHA
/// instructions: the printed form of a module with weights is tens of
/// megabytes).
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;
  void update(std::string_view data);
  /// The digest of everything given so far; the hasher is spent after it.
  std::array<uint8_t, 32> final();
  std::string hexFinal();

private:
  void *context; // EVP_MD_CTX
};

} // namespace cuvil

#endif // CUVIL_SERIALIZATION_PACKAGE_H
