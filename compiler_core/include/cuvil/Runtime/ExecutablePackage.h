//===- ExecutablePackage.h - Compiled functions loaded from a .cuvil -*- C++
//-*-===//
//
// An executable package (.cuvil, docs/irpkg.md) carries compiled code per
// target with each function's signature, the host it was compiled for and
// the fingerprint of its IR. This loads one without the compiler: the
// Python runtime (cuvil.runtime) and the C runtime (cuvil_runtime.h) both
// go through it. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_EXECUTABLEPACKAGE_H
#define CUVIL_RUNTIME_EXECUTABLEPACKAGE_H

#include "cuvil/Runtime/Executable.h"

#include <memory>
#include <string>
#include <vector>

namespace cuvil {

class PackageReader;

/// One function of an executable package.
struct PackagedFunction {
  std::string name;                 ///< "main" for an exported model
  std::vector<std::string> aliases; ///< the model's own name, ...
  std::string symbol;               ///< the compiled symbol
  std::string target;               ///< "cpu"
  std::string codeEntry;            ///< the package entry holding its code
  bool instrumented = false;
  std::vector<std::string> inputNames;
  /// What the code takes and returns; -1 for a symbolic size.
  std::vector<TensorSignature> inputs, outputs;
  /// Per input and output dim: "" when static, else the symbol (inputs) or
  /// the size expression over input symbols (outputs, "N * 2").
  std::vector<std::vector<std::string>> inputDims, outputDims;
  /// Sizes a symbol may take, where the model bounds it (highest -1: none).
  struct SymbolRange {
    std::string symbol;
    int64_t lowest = 1, highest = -1;
  };
  std::vector<SymbolRange> symbolRanges;

  bool isSymbolic() const;
  /// "main(x: float32[64, 256]) -> (float32[64, 128])".
  std::string signatureText() const;
};

/// The host CPU as the CPU target compiles for it: LLVM's CPU name and its
/// enabled features ("avx512f", ...), sorted.
struct HostCpu {
  std::string name;
  std::vector<std::string> features;
};
HostCpu hostCpu();

/// An opened .cuvil: metadata and signatures read and checked; code loaded
/// per function on first use.
class ExecutablePackage {
public:
  /// Null with `error` (file, field, what was wrong) for a package that is
  /// damaged, of another kind, from a newer Cuvil, or whose functions do not
  /// describe themselves completely.
  ///
  /// With `mappedCodeDirectory`, each function's code (with the constant
  /// weights compiled into it) is loaded from a file in that directory named
  /// by its digest, mapped read-only and shared by every process that loads
  /// the same package (`use_mmap`); without it, from memory.
  static std::unique_ptr<ExecutablePackage>
  open(const std::string &path, std::string &error,
       const std::string &mappedCodeDirectory = "");
  ~ExecutablePackage();

  const std::string &path() const;
  /// The metadata object as JSON text.
  const std::string &metadata() const;
  /// Structural fingerprint of the IR the code was compiled from.
  const std::string &fingerprint() const;
  const std::vector<PackagedFunction> &functions() const;
  /// The function called `name` (or with that alias); null with `error`
  /// listing the names it has.
  const PackagedFunction *find(const std::string &name,
                               std::string &error) const;

  /// The GPU that functions compiled for cuda run on (default 0); set
  /// before their first load.
  void setDevice(int device);

  /// The function's code, loaded once (it must be for a target this
  /// runtime runs: cpu, or cuda through the CUDA driver; and for a CPU with
  /// the features this one has). Null with `error` otherwise.
  std::shared_ptr<Executable> load(const PackagedFunction &function,
                                   std::string &error);

private:
  ExecutablePackage();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Sets the thread count compiled code's parallel regions use on this
/// thread for the object's life (0: leave it), restoring the previous one
/// after (Cuvil's thread pool, cuvil/Runtime/ThreadPool.h).
class ScopedThreadCount {
public:
  explicit ScopedThreadCount(int threads);
  ~ScopedThreadCount();
  ScopedThreadCount(const ScopedThreadCount &) = delete;
  ScopedThreadCount &operator=(const ScopedThreadCount &) = delete;

private:
  int previous = 0;
  void (*restore)(int) = nullptr; ///< threads::setCallerThreads, when set
};

/// Evaluates an output size expression ("N * 2", "((h + -1) // 2) + 1":
/// integers, symbols, + - * // % and parentheses) for `bindings`. False
/// with `error` for an unbound symbol or a malformed expression.
bool evaluateSizeExpression(
    const std::string &expression,
    const std::vector<std::pair<std::string, int64_t>> &bindings,
    int64_t &value, std::string &error);

/// Binds the symbols of `function`'s inputs to the sizes in `inputShapes`
/// and computes its output shapes. False with `error` naming the input and
/// dim when a size disagrees with the signature, or a symbol's size is
/// outside the range the model allows.
bool outputShapes(const PackagedFunction &function,
                  const std::vector<std::vector<int64_t>> &inputShapes,
                  std::vector<std::vector<int64_t>> &out, std::string &error);

} // namespace cuvil

#endif // CUVIL_RUNTIME_EXECUTABLEPACKAGE_H
