//===- Compiler.h - Compile Cuvil IR and call the result --------*- C++ -*-===//
//
// The narrow public interface the Python package, the CLI and the Workbench
// use: text in, a callable compiled function out, for any registered
// target. No MLIR headers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_COMPILER_H
#define CUVIL_DRIVER_COMPILER_H

#include "cuvil/Driver/IRView.h"
#include "cuvil/Pipelines/PassSnapshot.h"
#include "cuvil/Pipelines/Phases.h"
#include "cuvil/Runtime/Executable.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// One pass of a compilation pipeline: a built-in or plugin pass given as a
/// textual pipeline, or an external pass (e.g. a Python `cuvil.Pass`).
struct PipelineStep {
  std::string name;           ///< pass argument or the external pass's name
  Phase phase = Phase::Graph; ///< phase the pass runs in
  std::string pipeline;  ///< textual pipeline ("func.func(cse)"); empty for
                         ///< an external pass
  bool optional = false; ///< code generation works without it
  /// An external pass: runs on the module, sets `changed`; returning false
  /// (with `error`) stops the compilation.
  std::function<bool(OpRef module, bool &changed, std::string &error)> run;
};

/// BLAKE3 of `data`, 64 lowercase hex digits: names a traced text in the
/// disk cache's text index and large constants in a key text, several times
/// faster than SHA-256 on the megabytes a model's weights make (the key
/// material around it stays SHA-256).
std::string blake3Hex(std::string_view data);

/// The bytes of a constant the module's text names `dense_resource<name>`:
/// a front end hands a model's weights over as they are in memory instead of
/// formatting them as hex for the parser. The caller's memory, read only
/// while compile() runs; little-endian, laid out as MLIR's raw dense data.
struct ConstantBytes {
  std::string name;
  const char *data = nullptr;
  size_t size = 0;
};

struct CompileOptions {
  /// A registered target's name (see availableTargets()).
  std::string target = "cpu";
  /// Device index within the target ("cuda:1" -> 1).
  int device = 0;
  bool enableFusion = true;
  bool captureSnapshots = false;
  bool parallel = true;
  /// Directory of compiled shared libraries keyed by the IR's structural
  /// fingerprint, target and compiler version; empty disables the cache.
  std::string cacheDir;
  /// The passes to run; empty means defaultPipeline(*this). Phases must
  /// keep their order; with external passes nothing is cached on disk.
  std::vector<PipelineStep> steps;
  /// What the disk cache's text index keys this compilation by, when not
  /// the module's own text: a front end's key text that names large
  /// constants by digests (see loadIndexed).
  std::string indexText;
  /// Constants the text refers to by name (see ConstantBytes). The text is
  /// then not the whole module: the compiled function gives its input IR
  /// once the caller sets a source provider with the whole text.
  std::vector<ConstantBytes> constants;
};

/// A registered target backend.
struct TargetInfo {
  std::string name;        ///< what `target=` takes, e.g. "cpu"
  std::string description; ///< one line
  int deviceCount = 1;
};

/// The registered targets, sorted by name.
std::vector<TargetInfo> availableTargets();

/// Splits a device string ("cpu", "cuda:1") into a registered target and a
/// device index. False with a message listing the registered targets (or
/// the target's devices) when it names none.
bool parseDevice(const std::string &device, std::string &target, int &index,
                 std::string &error);

/// Why code compiled for `target` device `index` cannot run in this process
/// (no GPU driver, no device), or "" when it can.
std::string targetUnavailableReason(const std::string &target, int index);

/// Loads a target plugin: a shared library exporting
/// `cuvilRegisterTargetPlugin` (see cuvil/Target/TargetPlugin.h) whose
/// backends then compile like built-in ones. Loading a path twice is a
/// no-op. False with a message naming the file on failure.
bool loadTargetPlugin(const std::string &path, std::string &error);

/// The pipeline of `options.target` for `options` (its `steps` ignored), one
/// step per pass. False with `error` for an unknown target.
bool defaultPipeline(const CompileOptions &options,
                     std::vector<PipelineStep> &steps, std::string &error);

/// Loads an MLIR pass plugin so its passes can be named in steps.
bool loadPassPlugin(const std::string &path, std::string &error);

/// Checks that a textual pipeline parses (passes exist, options are valid).
bool checkPassPipeline(const std::string &pipeline, std::string &error);

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
  /// The memory host calls keep from one call to the next for their
  /// intermediates: what it holds, the most one call took, how many calls
  /// used it and how many times it grew to fit one.
  struct CallMemory {
    uint64_t heldBytes = 0, peakBytes = 0, calls = 0, grows = 0;
  };
  CallMemory callMemory() const;
  /// Gives that memory back to the system (the next call takes it again);
  /// the bytes released.
  uint64_t releaseCallMemory();

  /// The target it was compiled for and the device index.
  const std::string &target() const;
  int device() const;

  /// IR stages this function can show: input and optimized, then the
  /// target's own (see irStages() in Phases.h for their names).
  std::vector<IRStage> stages() const;
  /// IR at `stage`. False with `error` when the target has no such stage.
  bool ir(IRStage stage, std::string &out, std::string &error);

  /// Artifacts this function can write: the input IR, then the target's.
  std::vector<ArtifactKind> artifacts() const;
  /// Writes artifact `kind` to `path`. False with `error` when the target
  /// cannot write it or writing fails.
  bool emit(ArtifactKind kind, const std::string &path, std::string &error);

  /// True when the code calls kernel hooks (cuvil-instrument-kernels ran).
  bool instrumented() const;
  /// Calls with device pointers (Executable::callOnDevice); false where the
  /// target has no device memory.
  bool callOnDevice(void *const *inputs, void *const *outputs,
                    const KernelHooks *hooks) const;
  /// The loaded code's counters (a GPU's copies; Executable::counters).
  std::vector<std::pair<std::string, uint64_t>> counters() const;
  /// The kernels in hook numbering; lowers on demand after a cache load
  /// (empty when not instrumented or when that fails).
  const std::vector<KernelInfo> &kernels();
  /// Opaque data a client keeps with the function (the profiler's interned
  /// kernel names), released with it.
  std::shared_ptr<void> &clientData();
  /// For a function loadIndexed() found: what gives the module's text when
  /// an IR stage or artifact needs it (called on any thread, until it gives a
  /// text).
  void setSourceProvider(std::function<std::string()> provider);

  /// Calls the function. `inputs` and `outputs` are data pointers of
  /// C-contiguous buffers matching inputs()/outputs(); the caller checks.
  /// With `hooks`, instrumented code reports every kernel to them.
  /// `shapes` (inputs then outputs) are the actual shapes, needed when a
  /// signature has dynamic sizes (-1).
  void call(void *const *inputs, void *const *outputs,
            const KernelHooks *hooks = nullptr,
            const Shapes *shapes = nullptr) const;

private:
  friend std::unique_ptr<CompiledFunction> compile(std::string,
                                                   const std::string &,
                                                   const CompileOptions &,
                                                   std::string &);
  friend std::unique_ptr<CompiledFunction> loadIndexed(const std::string &,
                                                       const std::string &,
                                                       const CompileOptions &,
                                                       std::string &);
  static std::unique_ptr<CompiledFunction>
  compileAndLoad(std::string, const std::string &, const CompileOptions &,
                 std::string &);
  struct Impl;
  explicit CompiledFunction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Parses, verifies and compiles function `funcName` of the module in
/// `mlirText` for `options.target`. On failure returns null and sets
/// `error` to the diagnostics ("file:line:col: error: ..."). The compiled
/// function keeps `mlirText` (moved in: a model's weights make it tens of
/// megabytes) to rebuild its IR stages from.
std::unique_ptr<CompiledFunction> compile(std::string mlirText,
                                          const std::string &funcName,
                                          const CompileOptions &options,
                                          std::string &error);

/// The function the disk cache's text index holds for `indexText` (a key
/// text, see CompileOptions::indexText) and `options`, loaded without its
/// module: null when there is none (`error` says why only for an invalid
/// target or pipeline). Its IR stages need setSourceProvider().
std::unique_ptr<CompiledFunction> loadIndexed(const std::string &indexText,
                                              const std::string &funcName,
                                              const CompileOptions &options,
                                              std::string &error);

/// Parses and verifies; false with diagnostics in `error` when invalid.
bool verify(const std::string &mlirText, std::string &error);

/// Hex SHA-256 over the normalized IR (no locations, SSA names by position).
/// Empty with `error` set when the text does not parse.
std::string fingerprint(const std::string &mlirText, std::string &error);

/// What each dynamic dimension of function `funcName`'s results is, per
/// result, as an expression of the arguments' symbol names ("N", "h * w",
/// "N * 2"; "?" where unknown), from cuvil-propagate-symbols. False with
/// `error` set when the text does not parse or two symbols clash.
bool resultSymbols(const std::string &mlirText, const std::string &funcName,
                   std::vector<std::vector<std::string>> &out,
                   std::string &error);

/// Runs the textual pass `pipeline` ("func.func(cuvil-fold-constants)") on
/// the module in `mlirText`: `out` is the result (with locations) and
/// `report` the remarks the passes made, one per line. False with `error`
/// set when the text or the pipeline does not parse or a pass fails.
bool transformIR(const std::string &mlirText, const std::string &pipeline,
                 std::string &out, std::string &report, std::string &error);

/// Writes the module in `mlirText` as an IR package (.irpkg) at `path` with
/// the metadata object `metadataJson` (see cuvil/Serialization/IRPackage.h).
bool saveIRPackage(const std::string &mlirText, const std::string &metadataJson,
                   const std::string &path, std::string &error);

/// Reads an IR package: its module as text (with locations), its metadata
/// and which form was read ("bytecode" or "text"). False with `error` naming
/// the file and the field when the package is damaged or its fingerprint
/// does not match.
bool loadIRPackage(const std::string &path, std::string &mlirText,
                   std::string &metadataJson, std::string &form,
                   std::string &error);

/// The compiler version, part of every cache key.
const char *version();

/// The disk cache's name for this build's `purpose` file in `cacheDir`:
/// "<BLAKE3 of the purpose, version and build>.<extension>", so a rebuilt
/// Cuvil starts its own and the cache's size limit and clearing cover it.
std::string buildScopedCacheFile(const std::string &cacheDir,
                                 const std::string &purpose,
                                 const std::string &extension);

/// The disk cache's size limit in bytes (CUVIL_CACHE_MAX_MB, default 2048;
/// 0: no limit). After a compilation adds entries, the least recently used
/// ones are removed until the folder's entries fit.
uint64_t diskCacheLimitBytes();

} // namespace cuvil

#endif // CUVIL_DRIVER_COMPILER_H
