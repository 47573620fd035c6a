//===- SharedLibrary.h - Compiled code loaded as a private library -*- C++
//-*-===//
//
// Compiled functions live in shared libraries that are opened privately
// (RTLD_LOCAL): neither their symbols nor those of their dependencies (the
// MLIR runner utilities pull in LLVM) enter the process's global scope,
// where they would capture the symbols of other LLVM copies loaded later
// (Triton, jaxlib, TensorFlow). A library is closed when its last user goes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_SHAREDLIBRARY_H
#define CUVIL_RUNTIME_SHAREDLIBRARY_H

#include "cuvil/Runtime/MemRefCall.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// The libraries compiled CPU code calls into (MLIR's C runner utilities),
/// to pin before loading it: the runtime package's soname (libmlir-19)
/// where it is installed, else the development symlink. The one list the
/// CPU target and executable packages use. (Parallel regions call Cuvil's
/// thread pool through slots, not a library: ThreadPool.h.)
std::vector<std::string> codeRuntimeLibraries();

/// One dlopen'ed library; dlclose'd on destruction.
class SharedLibrary {
public:
  /// Opens `path` privately, after pinning `runtimeLibraries` (loaded once
  /// per process, never unloaded: OpenMP's worker threads outlive every
  /// library that started them). Returns null and sets `error` on failure.
  static std::shared_ptr<SharedLibrary>
  open(const std::string &path,
       const std::vector<std::string> &runtimeLibraries, std::string &error);

  ~SharedLibrary();
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;

  /// The address of `name`, or null.
  void *symbol(const std::string &name) const;
  const std::string &path() const { return libraryPath; }

private:
  SharedLibrary(void *handle, std::string path)
      : handle(handle), libraryPath(std::move(path)) {}
  void *handle;
  std::string libraryPath;
};

/// A MemRefCallExecutable whose entry point lives in a SharedLibrary it
/// keeps open.
class LibraryExecutable : public MemRefCallExecutable {
public:
  LibraryExecutable(std::shared_ptr<SharedLibrary> library, PackedEntry entry,
                    const std::vector<TensorSignature> &inputs,
                    const std::vector<TensorSignature> &outputs,
                    bool instrumented)
      : MemRefCallExecutable(entry, inputs, outputs, instrumented),
        library(std::move(library)) {}

  /// Loads the packed entry point of `symbol` from the library at `path`.
  static std::unique_ptr<Executable>
  load(const std::string &path, const std::string &symbol,
       const std::vector<std::string> &runtimeLibraries,
       const std::vector<TensorSignature> &inputs,
       const std::vector<TensorSignature> &outputs, bool instrumented,
       std::string &error);

  /// The same from a library given as bytes (`name` labels it in /proc):
  /// written to an anonymous in-memory file that stays open while the
  /// library is loaded. The loader knows a library by its path, so a path
  /// must not name another library while one is loaded from it; a memfd's
  /// /proc/self/fd/N cannot, where a removed temporary file's name can be
  /// reused and then silently resolve to the older library.
  static std::unique_ptr<Executable>
  loadFromMemory(std::string_view code, const std::string &name,
                 const std::string &symbol,
                 const std::vector<std::string> &runtimeLibraries,
                 const std::vector<TensorSignature> &inputs,
                 const std::vector<TensorSignature> &outputs, bool instrumented,
                 std::string &error);

  /// The same from a file named by the code's digest in `directory`
  /// (`<key>.so`, created when missing or when it holds other bytes, by an
  /// atomic rename): the loader maps it read-only, so every process loading
  /// the same code shares its pages (code and constant weights) through the
  /// page cache. `key` must determine `code` (a SHA-256 of it), so the name
  /// never resolves to another library.
  static std::unique_ptr<Executable>
  loadMapped(std::string_view code, const std::string &directory,
             const std::string &key, const std::string &symbol,
             const std::vector<std::string> &runtimeLibraries,
             const std::vector<TensorSignature> &inputs,
             const std::vector<TensorSignature> &outputs, bool instrumented,
             std::string &error);

private:
  std::shared_ptr<SharedLibrary> library;
};

/// Compiled code given as bytes, loaded through an anonymous in-memory file
/// (see LibraryExecutable::loadFromMemory) that stays open as long as the
/// executable `make` builds from the file's path.
std::unique_ptr<Executable> loadCodeFromMemory(
    std::string_view code, const std::string &name,
    const std::function<std::unique_ptr<Executable>(const std::string &path,
                                                    std::string &error)> &make,
    std::string &error);

/// A function with a plain C entry point, `int entry(void *const *inputs,
/// void *const *outputs)` (data pointers of C-contiguous buffers, the C
/// target's packed entry), in a library it keeps open. It has no kernel
/// hooks and static shapes only.
class PackedCExecutable : public Executable {
public:
  static std::unique_ptr<Executable>
  load(const std::string &path, const std::string &symbol, std::string &error);
  void call(void *const *inputs, void *const *outputs, const KernelHooks *hooks,
            const Shapes *shapes) const override;

private:
  using Entry = int (*)(void *const *, void *const *);
  PackedCExecutable(std::shared_ptr<SharedLibrary> library, Entry entry)
      : library(std::move(library)), entry(entry) {}
  std::shared_ptr<SharedLibrary> library;
  Entry entry;
};

} // namespace cuvil

#endif // CUVIL_RUNTIME_SHAREDLIBRARY_H
