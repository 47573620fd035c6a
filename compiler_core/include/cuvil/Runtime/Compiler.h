//===- Compiler.h - Compile Cuvil IR and call the result --------*- C++ -*-===//
//
// The narrow public interface the Python package, the CLI and the Workbench
// use: text in, a callable compiled function out. No MLIR headers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_COMPILER_H
#define CUVIL_RUNTIME_COMPILER_H

#include "cuvil/Pipelines/PassSnapshot.h"
#include "cuvil/Runtime/IRView.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cuvil {

/// Element type and static shape of one argument or result.
struct TensorSignature {
  std::string dtype; ///< "float32", "float64", "float16", "int8", "int32",
                     ///< "int64", "bool"
  std::vector<int64_t> shape;
};

/// One pass of a compilation pipeline: a built-in or plugin pass given as a
/// textual pipeline, or an external pass (e.g. a Python `cuvil.Pass`).
struct PipelineStep {
  std::string name;      ///< pass argument or the external pass's name
  std::string stage;     ///< "cuvil", "linalg", "fusion", "schedule",
                         ///< "bufferize" or "llvm"
  std::string pipeline;  ///< textual pipeline ("func.func(cse)"); empty for
                         ///< an external pass
  bool optional = false; ///< code generation works without it
  /// An external pass: runs on the module, sets `changed`; returning false
  /// (with `error`) stops the compilation.
  std::function<bool(OpRef module, bool &changed, std::string &error)> run;
};

struct CompileOptions {
  bool enableFusion = true;
  bool captureSnapshots = false;
  bool parallel = true;
  /// Directory of compiled shared libraries keyed by the IR's structural
  /// fingerprint, target and compiler version; empty disables the cache.
  std::string cacheDir;
  /// The passes to run; empty means defaultPipeline(*this). Stage names
  /// must keep their order; with external passes nothing is cached on disk.
  std::vector<PipelineStep> steps;
};

/// The CPU pipeline for `options` (its `steps` ignored), one step per pass.
std::vector<PipelineStep> defaultPipeline(const CompileOptions &options);

/// Loads an MLIR pass plugin so its passes can be named in steps.
bool loadPassPlugin(const std::string &path, std::string &error);

/// Checks that a textual pipeline parses (passes exist, options are valid).
bool checkPassPipeline(const std::string &pipeline, std::string &error);

/// One kernel (loop nest, fused region, copy) of a compiled function.
struct KernelInfo {
  std::string name;     ///< what it computes, e.g. "linalg.matmul"
  std::string location; ///< the user's "file:line:col", or ""
};

/// What instrumented code calls at the start (phase 0) and end (phase 1) of
/// kernel number `kernel`; the layout is the one cuvil-instrument-kernels
/// generates code for.
struct KernelHooks {
  void (*hook)(void *context, int32_t kernel, int32_t phase);
  void *context;
};

class CompiledFunction {
public:
  ~CompiledFunction();

  /// The compiled function's name in the IR.
  const std::string &name() const;
  const std::vector<TensorSignature> &inputs() const;
  const std::vector<TensorSignature> &outputs() const;
  const std::vector<PassSnapshot> &snapshots() const;
  const std::string &fingerprint() const;
  double compileMs() const;
  /// Bytes of intermediate buffers after memory planning (their arena) and
  /// before it (the sum of the buffers); lowers on demand when loaded from
  /// the cache; -1 when that fails.
  int64_t plannedPeakBytes();
  int64_t unplannedBytes();
  bool fromCache() const;

  /// IR at a stage: "input", "optimized" (after graph-level passes and
  /// fusion, on linalg), "llvm-dialect", "llvm" (LLVM IR), "asm".
  /// Returns false and sets `error` for an unknown stage.
  bool ir(const std::string &stage, std::string &out, std::string &error);

  /// Writes an artifact: "mlir", "llvm", "asm", "obj", "so".
  bool emit(const std::string &kind, const std::string &path,
            std::string &error);

  /// True when the code calls kernel hooks (cuvil-instrument-kernels ran).
  bool instrumented() const;
  /// The kernels in hook numbering; lowers on demand after a cache load
  /// (empty when not instrumented or when that fails).
  const std::vector<KernelInfo> &kernels();
  /// Opaque data a client keeps with the function (the profiler's interned
  /// kernel names), released with it.
  std::shared_ptr<void> &clientData();

  /// Calls the function. `inputs` and `outputs` are data pointers of
  /// C-contiguous buffers matching inputs()/outputs(); the caller checks.
  /// With `hooks`, instrumented code reports every kernel to them.
  void call(void *const *inputs, void *const *outputs,
            const KernelHooks *hooks = nullptr) const;

private:
  friend std::unique_ptr<CompiledFunction> compile(const std::string &,
                                                   const std::string &,
                                                   const CompileOptions &,
                                                   std::string &);
  static std::unique_ptr<CompiledFunction>
  compileAndLoad(const std::string &, const std::string &,
                 const CompileOptions &, std::string &);
  struct Impl;
  explicit CompiledFunction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Parses, verifies and compiles function `funcName` of the module in
/// `mlirText` for the host CPU. On failure returns null and sets `error` to
/// the diagnostics ("file:line:col: error: ...").
std::unique_ptr<CompiledFunction> compile(const std::string &mlirText,
                                          const std::string &funcName,
                                          const CompileOptions &options,
                                          std::string &error);

/// Parses and verifies; false with diagnostics in `error` when invalid.
bool verify(const std::string &mlirText, std::string &error);

/// Hex SHA-256 over the normalized IR (no locations, SSA names by position).
/// Empty with `error` set when the text does not parse.
std::string fingerprint(const std::string &mlirText, std::string &error);

/// The compiler version, part of every cache key.
const char *version();

} // namespace cuvil

#endif // CUVIL_RUNTIME_COMPILER_H
