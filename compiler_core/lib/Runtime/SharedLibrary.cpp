//===- SharedLibrary.cpp - Compiled code loaded as a private library -----===//

#include "cuvil/Runtime/SharedLibrary.h"
#include "cuvil/Runtime/CudaRuntimeAbi.h"
#include "cuvil/Runtime/MemoryPool.h"
#include "cuvil/Runtime/ThreadPool.h"
#include "cuvil/Serialization/Package.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CUVIL_LLVM_LIB_DIR
#define CUVIL_LLVM_LIB_DIR "/usr/lib/llvm-19/lib"
#endif

std::vector<std::string> cuvil::codeRuntimeLibraries() {
  std::string dir = CUVIL_LLVM_LIB_DIR;
  auto first = [&](std::initializer_list<const char *> names) {
    for (const char *name : names)
      if (::access((dir + "/" + name).c_str(), F_OK) == 0)
        return dir + "/" + name;
    return dir + "/" + *(names.end() - 1);
  };
  return {
      first({"libmlir_c_runner_utils.so.19.1", "libmlir_c_runner_utils.so"})};
}

using namespace cuvil;

namespace {

/// dlerror() text, or a fallback when the loader gave none.
std::string loaderError(const char *fallback) {
  const char *text = ::dlerror();
  return text ? text : fallback;
}

/// Held while a library is opened, closed or has its handler slots set. The
/// dynamic loader serializes itself, but with a lock of its own that thread
/// checkers cannot see; holding this one makes "unloaded here, loaded again
/// at the same address there" an ordering they see (RuntimeThreadsTest).
std::mutex &loaderMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Loads each runtime library once per process, privately and never
/// unloaded, so compiled libraries that do not find them on their own
/// search path find them already present.
bool pinRuntime(const std::vector<std::string> &libraries, std::string &error) {
  static std::mutex mutex;
  static std::vector<std::string> pinned;
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string &library : libraries) {
    if (std::find(pinned.begin(), pinned.end(), library) != pinned.end())
      continue;
    int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
    if (!::dlopen(library.c_str(), flags)) {
      error = "cannot load the runtime library " + library + ": " +
              loaderError("unknown error");
      return false;
    }
    pinned.push_back(library);
  }
  return true;
}

} // namespace

std::shared_ptr<SharedLibrary>
SharedLibrary::open(const std::string &path,
                    const std::vector<std::string> &runtimeLibraries,
                    std::string &error) {
  std::lock_guard<std::mutex> lock(loaderMutex());
  // Most code calls no runtime library (its NEEDED entries name only the C
  // library), and code that does finds them through its own search path:
  // the runtime libraries are loaded (0.6 ms) only for code that cannot load
  // without them, such as code compiled where they lived elsewhere.
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle && !runtimeLibraries.empty()) {
    std::string first = loaderError("unknown error");
    if (!pinRuntime(runtimeLibraries, error)) {
      error = "cannot load " + path + ": " + first + " (and " + error + ")";
      return nullptr;
    }
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle) {
    error = "cannot load " + path + ": " + loaderError("unknown error");
    return nullptr;
  }
  return std::shared_ptr<SharedLibrary>(new SharedLibrary(handle, path));
}

SharedLibrary::~SharedLibrary() {
  std::lock_guard<std::mutex> lock(loaderMutex());
  ::dlclose(handle);
}

void *SharedLibrary::symbol(const std::string &name) const {
  return ::dlsym(handle, name.c_str());
}

std::unique_ptr<Executable>
LibraryExecutable::load(const std::string &path, const std::string &symbol,
                        const std::vector<std::string> &runtimeLibraries,
                        const std::vector<TensorSignature> &inputs,
                        const std::vector<TensorSignature> &outputs,
                        bool instrumented, std::string &error) {
  std::shared_ptr<SharedLibrary> library =
      SharedLibrary::open(path, runtimeLibraries, error);
  if (!library)
    return nullptr;
  std::string entryName = packedEntryName(symbol);
  void *entry = library->symbol(entryName);
  if (!entry) {
    error = "symbol " + entryName + " missing in " + path;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(loaderMutex());
  if (void *handler = library->symbol(kAllocationFailureHandlerSymbol))
    *static_cast<void **>(handler) =
        reinterpret_cast<void *>(&cuvilAllocationFailed);
  if (void *hook = library->symbol(kPoolAllocateSymbol))
    *static_cast<void **>(hook) = reinterpret_cast<void *>(&cuvilPoolAllocate);
  if (void *hook = library->symbol(kPoolReleaseSymbol))
    *static_cast<void **>(hook) = reinterpret_cast<void *>(&cuvilPoolRelease);
  if (void *handler = library->symbol(kSizeMismatchHandlerSymbol))
    *static_cast<void **>(handler) =
        reinterpret_cast<void *>(&cuvilResultSizeMismatch);
  // CUDA host code calls the runtime through slots, as parallel regions
  // call the thread pool (RuntimeSlots.h).
  for (const auto *functions :
       {&cuda::runtimeFunctions(), &threads::runtimeFunctions()})
    for (const RuntimeFunction &function : *functions)
      if (void *slot = library->symbol(slotName(function.name)))
        *static_cast<void **>(slot) = function.address;
  return std::make_unique<LibraryExecutable>(
      std::move(library), reinterpret_cast<PackedEntry>(entry), inputs, outputs,
      instrumented);
}

namespace {
/// Code loaded from a memfd, which stays open as long as the library.
class MemfdExecutable : public Executable {
public:
  MemfdExecutable(std::unique_ptr<Executable> code, int fd)
      : code(std::move(code)), fd(fd) {}
  ~MemfdExecutable() override {
    code.reset();
    ::close(fd);
  }
  void call(void *const *inputs, void *const *outputs, const KernelHooks *hooks,
            const Shapes *shapes) const override {
    code->call(inputs, outputs, hooks, shapes);
  }

private:
  std::unique_ptr<Executable> code;
  int fd;
};
} // namespace

std::unique_ptr<Executable> LibraryExecutable::loadFromMemory(
    std::string_view code, const std::string &name, const std::string &symbol,
    const std::vector<std::string> &runtimeLibraries,
    const std::vector<TensorSignature> &inputs,
    const std::vector<TensorSignature> &outputs, bool instrumented,
    std::string &error) {
  return loadCodeFromMemory(
      code, name,
      [&](const std::string &path, std::string &message) {
        return load(path, symbol, runtimeLibraries, inputs, outputs,
                    instrumented, message);
      },
      error);
}

std::unique_ptr<Executable> cuvil::loadCodeFromMemory(
    std::string_view code, const std::string &name,
    const std::function<std::unique_ptr<Executable>(const std::string &,
                                                    std::string &)> &make,
    std::string &error) {
  int fd = ::memfd_create(name.substr(0, 200).c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    error = std::string("cannot create an in-memory file for the code: ") +
            std::strerror(errno);
    return nullptr;
  }
  if (int failure = writeAll(fd, code)) {
    error = std::string("cannot write the code to memory: ") +
            std::strerror(failure);
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<Executable> executable =
      make("/proc/self/fd/" + std::to_string(fd), error);
  if (!executable) {
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<MemfdExecutable>(std::move(executable), fd);
}

std::unique_ptr<Executable> PackedCExecutable::load(const std::string &path,
                                                    const std::string &symbol,
                                                    std::string &error) {
  std::shared_ptr<SharedLibrary> library = SharedLibrary::open(path, {}, error);
  if (!library)
    return nullptr;
  void *entry = library->symbol(symbol);
  if (!entry) {
    error = "no function " + symbol + " in " + path;
    return nullptr;
  }
  return std::unique_ptr<Executable>(new PackedCExecutable(
      std::move(library), reinterpret_cast<Entry>(entry)));
}

void PackedCExecutable::call(void *const *inputs, void *const *outputs,
                             const KernelHooks *, const Shapes *) const {
  entry(inputs, outputs);
}

namespace {
/// Whether the file at `path` holds exactly `code`.
bool holds(const std::string &path, std::string_view code) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat info;
  bool same = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
              (uint64_t)info.st_size == code.size();
  std::string chunk(1 << 20, '\0');
  for (size_t at = 0; same && at < code.size();) {
    ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0 || at + (size_t)got > code.size() ||
        std::memcmp(chunk.data(), code.data() + at, (size_t)got) != 0)
      same = false;
    at += got > 0 ? (size_t)got : 0;
  }
  ::close(fd);
  return same;
}

/// `directory` and its missing parents, private to the user.
bool makeDirectories(const std::string &directory, std::string &error) {
  for (size_t at = 1; at <= directory.size(); ++at) {
    if (at != directory.size() && directory[at] != '/')
      continue;
    std::string prefix = directory.substr(0, at);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      error = "cannot create " + prefix + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

/// Puts `code` at `path` by writing a fresh file next to it and renaming it
/// over: readers see the old file or the whole new one.
bool place(const std::string &path, std::string_view code, std::string &error) {
  static std::atomic<unsigned> counter{0};
  std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(counter++);
  int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create " + temporary + ": " + std::strerror(errno);
    return false;
  }
  int failure = cuvil::writeAll(fd, code);
  if (::close(fd) != 0 && !failure)
    failure = errno;
  // Processes placing the same code at once must end up mapping one file:
  // the first link(2) wins and the others use its file; a file with other
  // bytes is replaced, as is everything where the file system has no hard
  // links.
  if (!failure && ::link(temporary.c_str(), path.c_str()) != 0 &&
      (errno != EEXIST || !holds(path, code)) &&
      ::rename(temporary.c_str(), path.c_str()) != 0)
    failure = errno;
  ::unlink(temporary.c_str());
  if (failure) {
    error = "cannot write " + path + ": " + std::strerror(failure);
    return false;
  }
  return true;
}
} // namespace

std::unique_ptr<Executable> LibraryExecutable::loadMapped(
    std::string_view code, const std::string &directory, const std::string &key,
    const std::string &symbol, const std::vector<std::string> &runtimeLibraries,
    const std::vector<TensorSignature> &inputs,
    const std::vector<TensorSignature> &outputs, bool instrumented,
    std::string &error) {
  if (key.empty() ||
      key.find_first_not_of("0123456789abcdef") != std::string::npos) {
    error = "internal error: the mapped code's key '" + key +
            "' is not a hex digest";
    return nullptr;
  }
  if (!makeDirectories(directory, error))
    return nullptr;
  std::string path = directory + "/" + key + ".so";
  // A file there with other bytes (damaged, or changed by someone) is
  // replaced: the name promises these bytes.
  if (!holds(path, code) && !place(path, code, error))
    return nullptr;
  return load(path, symbol, runtimeLibraries, inputs, outputs, instrumented,
              error);
}
