//===- Package.cpp - Writing and reading the package container -----------===//
//
// Layout (all integers little-endian; docs/irpkg.md is the specification):
//
//   0   "CUVILPKG"                 8 bytes
//   8   format major, minor        u16, u16
//   12  kind, flags (0)            u16, u16
//   16  file size                  u64
//   24  metadata offset, size      u64, u64
//   40  index offset, size         u64, u64
//   56  SHA-256(metadata ++ index) 32 bytes
//   88  zero                       40 bytes
//   128 entries, each at the next multiple of 64, zero padding between
//       then the metadata (JSON object), then the index (JSON array)
//
// The layout is canonical: a reader recomputes where every entry, the
// metadata and the index must start and refuses anything else, so a changed
// offset cannot point an entry into another one or outside the file.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Serialization/Package.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cuvil;
using json = nlohmann::json;

namespace {

constexpr char kMagic[8] = {'C', 'U', 'V', 'I', 'L', 'P', 'K', 'G'};
constexpr int kCompressionLevel = 3;

uint64_t alignUp(uint64_t value) {
  return (value + kPackageAlignment - 1) / kPackageAlignment *
         kPackageAlignment;
}

uint16_t readU16(const char *p) { return llvm::support::endian::read16le(p); }
uint64_t readU64(const char *p) { return llvm::support::endian::read64le(p); }

/// "a + b" unless it overflows.
bool addChecked(uint64_t a, uint64_t b, uint64_t &sum) {
  return !__builtin_add_overflow(a, b, &sum);
}

std::string digestOf(std::string_view first, std::string_view second = {}) {
  cuvil::Sha256 hash;
  hash.update(first);
  hash.update(second);
  return hash.hexFinal();
}

/// Whether digests are compared. The fuzzing build (tests/fuzz) skips them,
/// as fuzzers conventionally do with checksums, so that mutated inputs reach
/// the JSON, layout and decompression checks behind them.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kCheckDigests = false;
#else
constexpr bool kCheckDigests = true;
#endif

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

} // namespace

const char *cuvil::packageKindName(PackageKind kind) {
  switch (kind) {
  case PackageKind::IR:
    return "IR package (.irpkg)";
  case PackageKind::Executable:
    return "executable package (.cuvil)";
  }
  return "package of an unknown kind";
}

PackageLimits PackageLimits::fromEnvironment() {
  PackageLimits limits{};
  limits.maxEntryBytes = uint64_t(4096) << 20;
  if (const char *text = std::getenv("CUVIL_MAX_PACKAGE_ENTRY_MIB")) {
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0' && value > 0 && value < (1ull << 40))
      limits.maxEntryBytes = uint64_t(value) << 20;
  }
  return limits;
}

std::string cuvil::sha256Hex(std::string_view data) { return digestOf(data); }

cuvil::Sha256::Sha256() : context(EVP_MD_CTX_new()) {
  // Only allocation can fail here; SHA-256 is in every OpenSSL build.
  if (!context || EVP_DigestInit_ex(static_cast<EVP_MD_CTX *>(context),
                                    EVP_sha256(), nullptr) != 1)
    llvm::report_fatal_error("OpenSSL cannot start a SHA-256 digest");
}

cuvil::Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX *>(context));
}

void cuvil::Sha256::update(std::string_view data) {
  if (!data.empty())
    EVP_DigestUpdate(static_cast<EVP_MD_CTX *>(context), data.data(),
                     data.size());
}

std::array<uint8_t, 32> cuvil::Sha256::final() {
  std::array<uint8_t, 32> digest{};
  unsigned size = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX *>(context), digest.data(), &size);
  return digest;
}

std::string cuvil::Sha256::hexFinal() {
  return llvm::toHex(final(), /*LowerCase=*/true);
}

int cuvil::writeAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

bool cuvil::isValidEntryName(std::string_view name) {
  if (name.empty() || name.size() > 200)
    return false;
  bool componentStart = true;
  for (char c : name) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9') || c == '_';
    if (c == '/') {
      if (componentStart)
        return false; // empty component, leading '/', or "//"
      componentStart = true;
      continue;
    }
    if (componentStart && !word)
      return false; // ".", "..", ".hidden", "-x"
    if (!word && c != '.' && c != '-')
      return false;
    componentStart = false;
  }
  return !componentStart; // no trailing '/'
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

bool PackageWriter::add(const std::string &name, std::string_view data,
                        bool compress, std::string &error) {
  if (!isValidEntryName(name)) {
    error = "invalid package entry name '" + name +
            "': use '/'-separated components of letters, digits, '_', '.' "
            "and '-' that start with a letter, digit or '_'";
    return false;
  }
  for (const Stored &s : stored)
    if (s.entry.name == name) {
      error = "package entry '" + name + "' added twice";
      return false;
    }
  Stored s;
  s.entry.name = name;
  s.entry.rawSize = data.size();
  if (compress) {
    s.bytes.resize(ZSTD_compressBound(data.size()));
    size_t n = ZSTD_compress(s.bytes.data(), s.bytes.size(), data.data(),
                             data.size(), kCompressionLevel);
    if (ZSTD_isError(n)) {
      error = "compressing package entry '" + name +
              "' failed: " + ZSTD_getErrorName(n);
      return false;
    }
    s.bytes.resize(n);
    s.entry.codec = "zstd";
  } else {
    s.bytes.assign(data.data(), data.size());
    s.entry.codec = "none";
  }
  s.entry.size = s.bytes.size();
  // Of the stored bytes: equal digests mean equal frames, so a damaged
  // frame is refused before it is decompressed, even one that would still
  // decode to the same bytes.
  s.entry.sha256 = digestOf(s.bytes);
  stored.push_back(std::move(s));
  return true;
}

bool PackageWriter::setMetadata(const std::string &text, std::string &error) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    error = "package metadata must be a JSON object";
    return false;
  }
  metadata = parsed.dump();
  return true;
}

static void putU16(std::string &out, size_t at, uint16_t value) {
  llvm::support::endian::write16le(out.data() + at, value);
}
static void putU64(std::string &out, size_t at, uint64_t value) {
  llvm::support::endian::write64le(out.data() + at, value);
}

bool PackageWriter::write(const std::string &path, std::string &error) const {
  std::string file(kPackageHeaderBytes, '\0');
  json entries = json::array();
  for (const Stored &s : stored) {
    file.resize(alignUp(file.size()), '\0');
    entries.push_back({{"name", s.entry.name},
                       {"codec", s.entry.codec},
                       {"offset", file.size()},
                       {"size", s.entry.size},
                       {"raw_size", s.entry.rawSize},
                       {"sha256", s.entry.sha256}});
    file += s.bytes;
  }
  file.resize(alignUp(file.size()), '\0');
  std::string indexText = entries.dump();
  uint64_t metadataOffset = file.size();
  file += metadata;
  uint64_t indexOffset = file.size();
  file += indexText;

  std::memcpy(file.data(), kMagic, sizeof(kMagic));
  putU16(file, 8, kPackageFormat.major);
  putU16(file, 10, kPackageFormat.minor);
  putU16(file, 12, static_cast<uint16_t>(kind));
  putU16(file, 14, 0);
  putU64(file, 16, file.size());
  putU64(file, 24, metadataOffset);
  putU64(file, 32, metadata.size());
  putU64(file, 40, indexOffset);
  putU64(file, 48, indexText.size());
  Sha256 hash;
  hash.update(metadata);
  hash.update(indexText);
  std::array<uint8_t, 32> digest = hash.final();
  std::memcpy(file.data() + 56, digest.data(), digest.size());

  // Write beside the target, then rename: readers see the old package or
  // the new one, never a part.
  llvm::SmallString<256> temp;
  int fd = -1;
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp)) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  if (int code = writeAll(fd, file)) {
    error = "cannot write " + path + ": " + std::strerror(code);
    ::close(fd);
    llvm::sys::fs::remove(temp);
    return false;
  }
  if (::close(fd) != 0) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    llvm::sys::fs::remove(temp);
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    error = "cannot write " + path + ": " + ec.message();
    llvm::sys::fs::remove(temp);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

std::string PackageReader::where(const std::string &field) const {
  return filePath + ": " + field + ": ";
}

PackageReader::~PackageReader() {
  if (base)
    ::munmap(const_cast<char *>(base), fileSize);
}

std::unique_ptr<PackageReader>
PackageReader::open(const std::string &path,
                    std::optional<PackageKind> expected, std::string &error,
                    const PackageLimits &limits) {
  std::unique_ptr<PackageReader> r(new PackageReader());
  r->filePath = path;
  r->limits = limits;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    error = path + ": not a regular file (a package is read from a file)";
    return nullptr;
  }
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size < kPackageHeaderBytes) {
    ::close(fd);
    error = r->where("header") + "truncated: the file has " +
            std::to_string(size) + " bytes, a package's header alone has " +
            std::to_string(kPackageHeaderBytes);
    return nullptr;
  }
  void *mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) {
    error = "cannot map " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  r->base = static_cast<const char *>(mapped);
  r->fileSize = size;
  const char *h = r->base;
  if (std::memcmp(h, kMagic, sizeof(kMagic)) != 0) {
    error = r->where("magic") +
            "not a Cuvil package (it does not start with \"CUVILPKG\")";
    return nullptr;
  }
  r->formatVersion = {readU16(h + 8), readU16(h + 10)};
  auto [major, minor] = r->formatVersion;
  if (major != kPackageFormat.major || minor > kPackageFormat.minor) {
    error = r->where("version") + "package written by a newer Cuvil (format " +
            std::to_string(major) + "." + std::to_string(minor) +
            "); this Cuvil reads up to (" +
            std::to_string(kPackageFormat.major) + "." +
            std::to_string(kPackageFormat.minor) +
            "); fix: load it with a newer Cuvil, or save it again from the "
            "model with this one";
    return nullptr;
  }
  uint16_t kind = readU16(h + 12);
  bool known = kind == static_cast<uint16_t>(PackageKind::IR) ||
               kind == static_cast<uint16_t>(PackageKind::Executable);
  if (!known || (expected && kind != static_cast<uint16_t>(*expected))) {
    error =
        r->where("kind") + "this is " +
        (known ? std::string(packageKindName(static_cast<PackageKind>(kind)))
               : "a package of unknown kind " + std::to_string(kind)) +
        (expected ? std::string(", not an ") + packageKindName(*expected)
                  : std::string());
    return nullptr;
  }
  r->packageKind = static_cast<PackageKind>(kind);
  if (readU16(h + 14) != 0 ||
      std::any_of(h + 88, h + kPackageHeaderBytes, [](char c) { return c; })) {
    error = r->where("header") +
            "flags or reserved bytes are set (a damaged file, or a format "
            "feature this Cuvil does not know)";
    return nullptr;
  }
  uint64_t declared = readU64(h + 16);
  if (declared != size) {
    error = r->where("file size") + "the header says " +
            std::to_string(declared) + " bytes but the file has " +
            std::to_string(size) +
            (declared > size ? " (truncated)" : " (data appended)");
    return nullptr;
  }
  uint64_t metaOffset = readU64(h + 24), metaSize = readU64(h + 32);
  uint64_t indexOffset = readU64(h + 40), indexSize = readU64(h + 48);
  uint64_t metaEnd, indexEnd;
  if (metaSize > limits.maxMetadataBytes ||
      indexSize > limits.maxMetadataBytes) {
    error = r->where("metadata") + "metadata or index larger than " +
            mib(limits.maxMetadataBytes);
    return nullptr;
  }
  if (metaOffset < kPackageHeaderBytes ||
      !addChecked(metaOffset, metaSize, metaEnd) || indexOffset != metaEnd ||
      !addChecked(indexOffset, indexSize, indexEnd) || indexEnd != size) {
    error = r->where("metadata offset") +
            "the metadata and index must end the file, one after the other "
            "(offsets " +
            std::to_string(metaOffset) + "+" + std::to_string(metaSize) + ", " +
            std::to_string(indexOffset) + "+" + std::to_string(indexSize) +
            " in " + std::to_string(size) + " bytes)";
    return nullptr;
  }
  std::string_view metaBytes(h + metaOffset, metaSize);
  std::string_view indexBytes(h + indexOffset, indexSize);
  std::string digest = digestOf(metaBytes, indexBytes);
  if (kCheckDigests &&
      digest != llvm::toHex(llvm::ArrayRef<uint8_t>(
                                reinterpret_cast<const uint8_t *>(h + 56), 32),
                            /*LowerCase=*/true)) {
    error = r->where("header checksum") +
            "the metadata or index does not match the header's SHA-256 (a "
            "damaged or edited file)";
    return nullptr;
  }
  json meta = json::parse(metaBytes, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object()) {
    error = r->where("metadata") + "not a JSON object";
    return nullptr;
  }
  r->metadataText = std::string(metaBytes);
  if (!r->parseIndex(std::string(indexBytes), error))
    return nullptr;
  // Entries must lie where a writer puts them, padding zero, up to the
  // metadata.
  uint64_t expectedOffset = kPackageHeaderBytes;
  for (const PackageEntry &e : r->index) {
    uint64_t start = alignUp(expectedOffset), end;
    if (e.offset != start || !addChecked(e.offset, e.size, end) ||
        end > metaOffset) {
      error = r->where("entry '" + e.name + "' offset") +
              "it must start at byte " + std::to_string(start) +
              " and end before the metadata (byte " +
              std::to_string(metaOffset) + "), but spans " +
              std::to_string(e.offset) + "+" + std::to_string(e.size);
      return nullptr;
    }
    if (std::any_of(h + expectedOffset, h + start, [](char c) { return c; })) {
      error = r->where("padding before entry '" + e.name + "'") +
              "not zero (a damaged file)";
      return nullptr;
    }
    expectedOffset = end;
  }
  if (alignUp(expectedOffset) != metaOffset ||
      std::any_of(h + expectedOffset, h + metaOffset,
                  [](char c) { return c; })) {
    error = r->where("metadata offset") +
            "the metadata must follow the last entry at byte " +
            std::to_string(alignUp(expectedOffset)) + ", not " +
            std::to_string(metaOffset);
    return nullptr;
  }
  return r;
}

bool PackageReader::parseIndex(const std::string &text, std::string &error) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) {
    error = where("index") + "not a JSON array";
    return false;
  }
  if (parsed.size() > 100000) {
    error = where("index") + "more than 100000 entries";
    return false;
  }
  for (size_t i = 0; i < parsed.size(); ++i) {
    const json &item = parsed[i];
    std::string field = "index[" + std::to_string(i) + "]";
    auto number = [&](const char *key, uint64_t &out) {
      auto it = item.find(key);
      if (it == item.end() || !it->is_number_unsigned())
        return false;
      out = it->get<uint64_t>();
      return true;
    };
    auto text = [&](const char *key, std::string &out) {
      auto it = item.find(key);
      if (it == item.end() || !it->is_string())
        return false;
      out = it->get<std::string>();
      return true;
    };
    PackageEntry e;
    if (!item.is_object() || !text("name", e.name) || !text("codec", e.codec) ||
        !text("sha256", e.sha256) || !number("offset", e.offset) ||
        !number("size", e.size) || !number("raw_size", e.rawSize)) {
      error = where(field) +
              "needs name, codec and sha256 strings and offset, size and "
              "raw_size non-negative integers";
      return false;
    }
    if (!isValidEntryName(e.name)) {
      error = where(field + ".name") + "'" +
              llvm::StringRef(e.name).take_front(80).str() +
              "' is not a valid entry name (components of [A-Za-z0-9_.-], "
              "none starting with '.' or '-', no leading '/')";
      return false;
    }
    field = "entry '" + e.name + "'";
    if (e.codec != "none" && e.codec != "zstd") {
      error = where(field + " codec") + "'" +
              llvm::StringRef(e.codec).take_front(40).str() +
              "' is not a codec this Cuvil reads (none, zstd)";
      return false;
    }
    if (e.rawSize > limits.maxEntryBytes) {
      error = where(field + " raw_size") + "declares " +
              std::to_string(e.rawSize) + " bytes, more than the limit of " +
              mib(limits.maxEntryBytes) +
              " (CUVIL_MAX_PACKAGE_ENTRY_MIB raises it for a package you "
              "trust)";
      return false;
    }
    if (e.codec == "none" && e.rawSize != e.size) {
      error = where(field + " size") +
              "a raw entry's size and raw_size must be equal";
      return false;
    }
    if (e.sha256.size() != 64 ||
        !std::all_of(e.sha256.begin(), e.sha256.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        })) {
      error = where(field + " sha256") + "not 64 lowercase hex digits";
      return false;
    }
    for (const PackageEntry &other : index)
      if (other.name == e.name) {
        error = where(field) + "appears twice in the index";
        return false;
      }
    index.push_back(std::move(e));
  }
  return true;
}

const PackageEntry *PackageReader::find(const std::string &name) const {
  for (const PackageEntry &e : index)
    if (e.name == name)
      return &e;
  return nullptr;
}

/// Decompresses one zstd frame of at most `rawSize` bytes into `out`,
/// growing the buffer only as output appears (a frame that lies about its
/// size fails before its claim is allocated).
static bool decompressFrame(std::string_view in, uint64_t rawSize,
                            unsigned maxWindowLog, std::string &out,
                            std::string &why) {
  unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) {
    why = "not a zstd frame";
    return false;
  }
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != rawSize) {
    why = "the zstd frame declares " + std::to_string(declared) +
          " bytes, the index " + std::to_string(rawSize);
    return false;
  }
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx *)> ctx(ZSTD_createDCtx(),
                                                          ZSTD_freeDCtx);
  if (!ctx) {
    why = "out of memory for the zstd decoder";
    return false;
  }
  ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, (int)maxWindowLog);
  ZSTD_inBuffer input = {in.data(), in.size(), 0};
  out.clear();
  uint64_t produced = 0;
  constexpr uint64_t kChunk = 4 << 20;
  for (;;) {
    uint64_t room = std::min<uint64_t>(kChunk, rawSize - produced + 1);
    out.resize(produced + room);
    ZSTD_outBuffer output = {out.data() + produced, room, 0};
    size_t rc = ZSTD_decompressStream(ctx.get(), &output, &input);
    if (ZSTD_isError(rc)) {
      why = std::string("zstd: ") + ZSTD_getErrorName(rc);
      if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge)
        why += " (the frame asks for a window beyond 2^" +
               std::to_string(maxWindowLog) + " bytes)";
      return false;
    }
    produced += output.pos;
    if (produced > rawSize) {
      why = "decompresses to more than its declared " +
            std::to_string(rawSize) + " bytes";
      return false;
    }
    if (rc == 0) {
      if (input.pos != input.size) {
        why = "data after the end of the zstd frame";
        return false;
      }
      break;
    }
    if (input.pos == input.size && output.pos < room) {
      why = "the zstd frame is truncated";
      return false;
    }
  }
  out.resize(produced);
  if (produced != rawSize) {
    why = "decompresses to " + std::to_string(produced) +
          " bytes, the index says " + std::to_string(rawSize);
    return false;
  }
  return true;
}

bool PackageReader::read(const std::string &name, std::string &out,
                         std::string &error) const {
  const PackageEntry *e = find(name);
  if (!e) {
    error = where("entry '" + name + "'") + "not in the package";
    return false;
  }
  std::string_view stored(base + e->offset, e->size);
  if (kCheckDigests && digestOf(stored) != e->sha256) {
    error = where("entry '" + name + "'") +
            "its bytes do not match their SHA-256 (a damaged or edited file)";
    return false;
  }
  std::string why;
  if (e->codec == "none") {
    out.assign(stored.data(), stored.size());
  } else if (!decompressFrame(stored, e->rawSize, limits.maxWindowLog, out,
                              why)) {
    error = where("entry '" + name + "'") + why;
    out.clear();
    return false;
  }
  return true;
}
