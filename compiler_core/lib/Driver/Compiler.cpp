//===- Compiler.cpp - The target-agnostic compile driver ------------------===//
//
// Parses and verifies the text a front end produced, looks the target up in
// the registry, runs the target-neutral phases and then the target's own
// (with snapshots), caches, and hands the lowered module to the target to
// load, print or emit. A disk cache keyed by the IR fingerprint, the target
// and its key material lets a new process skip compilation, and its text
// index (TextIndex.h) lets it skip building MLIR too. This file names no
// target.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Driver/Compiler.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "DiskCache.h"
#include "DriverSupport.h"
#include "IRSession.h"
#include "TextIndex.h"

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Runtime/MemoryPool.h"
#include "cuvil/Serialization/IRPackage.h"
#include "cuvil/Serialization/Package.h"
#include "cuvil/Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"

#include <chrono>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cuvil::detail;
using mlir::failed;
using mlir::failure;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::Operation;
using mlir::OwningOpRef;
using mlir::succeeded;
using mlir::success;
using mlir::cuvil::LoadRequest;
using mlir::cuvil::TargetBackend;
using mlir::cuvil::TargetOptions;
namespace func = mlir::func;
using llvm::cast;

#ifndef CUVIL_VERSION
#define CUVIL_VERSION "0.0.0"
#endif

const char *cuvil::version() { return CUVIL_VERSION; }

uint64_t cuvil::diskCacheLimitBytes() { return detail::diskCacheLimitBytes(); }

//===----------------------------------------------------------------------===//
// CompiledFunction
//===----------------------------------------------------------------------===//

struct cuvil::CompiledFunction::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> input;   // verified cuvil IR
  OwningOpRef<ModuleOp> lowered; // after every phase (null from the cache)
  /// What left the target-neutral phases, printed into optimizedText when
  /// asked for (a model's weights make the text tens of megabytes).
  OwningOpRef<ModuleOp> optimized;
  const TargetBackend *target = nullptr;
  std::string funcName;
  CompileOptions options;
  /// The text the module was compiled from, and the module as MLIR prints
  /// it (the "input" stage), printed when first asked for: a model's weights
  /// make both tens of megabytes.
  std::string sourceText, inputText, optimizedText;
  /// Gives sourceText when it is empty (a function loadIndexed() found).
  std::function<std::string()> sourceProvider;
  LoadRequest request;
  std::vector<PassSnapshot> snapshots;
  std::string fingerprint;
  double compileMs = 0;
  bool fromCache = false;
  int64_t plannedPeakBytes = 0, unplannedBytes = 0;
  bool planKnown = false; // set once lowered (the IR may be released later)
  std::vector<KernelInfo> kernels;
  std::shared_ptr<void> clientData;
  std::unique_ptr<Executable> executable;
  /// The intermediates of host calls: kept from one call to the next, so a
  /// call in a loop allocates nothing (a large buffer freed at the end of
  /// every call went back to the system and came back as page faults).
  /// Calls made while another holds it use malloc.
  MemoryPool pool{0, MemoryPool::Growth::Grow};

  LogicalResult lower(std::string &error);
  /// Runs one step; the module is verified after it when `verifyAfter`
  /// (an external pass's result always is).
  LogicalResult runStep(const PipelineStep &step, bool verifyAfter,
                        std::vector<PassSnapshot> &recorded);
  void readCodegenAttributes();
  /// The disk cache key of a module identified by `identity` (its
  /// structural fingerprint, or the hash of its text for the text index).
  std::string keyFor(const std::string &identity) const;
  std::string cacheKey() const { return keyFor(fingerprint); }
  /// Where compiled code is cached: the folder's name for `key`, or "" when
  /// this compilation is not cached.
  std::string cacheFile(const std::string &key,
                        const std::string &extension) const;
  /// Loads the code the text index records for `indexPath`; false (nothing
  /// changed) when there is no usable entry.
  bool loadFromTextIndex(const std::string &indexPath);
  /// What compileAndLoad and loadIndexed share: the target, the passes
  /// (stepsDefaulted: the default list, not yet checked) and the text
  /// index's path for `indexText` ("" when not cached). Null with `error`
  /// for an unknown target or pipeline.
  static std::unique_ptr<Impl> create(const std::string &funcName,
                                      const CompileOptions &options,
                                      const std::string &indexText,
                                      std::string &indexPath,
                                      std::string &error);
  /// `impl` as a compiled function, its compile time counted from `start`.
  static std::unique_ptr<CompiledFunction>
  finished(std::unique_ptr<Impl> impl,
           std::chrono::steady_clock::time_point start);
  /// Fills sourceText from the provider if it is empty.
  void ensureSource() {
    if (sourceText.empty() && sourceProvider)
      sourceText = sourceProvider();
  }
  /// The module as MLIR prints it (parsed again from the source text when
  /// the IR was released); null with `error` when there is no text or it
  /// does not parse.
  const std::string *printedInput(std::string &error);
  /// Builds the cache entry at `path` and loads the executable from it:
  /// one compilation serves both. Null (with `error`) on failure.
  std::unique_ptr<::cuvil::Executable> compileIntoCache(const std::string &path,
                                                        std::string &error);
  TargetOptions targetOptions() const {
    TargetOptions o;
    o.enableFusion = options.enableFusion;
    o.parallel = options.parallel;
    o.device = options.device;
    return o;
  }
  /// The steps are the target's default list (not the caller's): checked
  /// before a compilation, verified where each phase ends.
  bool stepsDefaulted = false;
  /// Passes outside the compiler (Python) ran: no disk cache, and the IR is
  /// kept rather than rebuilt by running them again.
  bool hasExternalPasses() const {
    return llvm::any_of(
        options.steps, [](const PipelineStep &step) { return bool(step.run); });
  }
  void releaseIR() {
    optimized = nullptr;
    lowered = nullptr;
    input = nullptr;
    context.reset();
  }
};

LogicalResult cuvil::CompiledFunction::Impl::lower(std::string &error) {
  if (lowered)
    return success();
  if (!input) {
    // The IR was released after compilation; rebuild it from the text.
    ensureSource();
    if (sourceText.empty()) {
      error = "the IR of @" + funcName +
              " is not available: its code came from the disk cache and its "
              "text could not be produced";
      return failure();
    }
    context = createContext();
    DiagnosticCollector parseDiagnostics(context.get());
    input = parseModule(sourceText, context.get());
    if (!input) {
      error = parseDiagnostics.take("the IR does not parse");
      return failure();
    }
  }
  DiagnosticCollector diagnostics(context.get());
  lowered = input->clone();
  // Marks the entry functions: cuvil-instrument-kernels instruments these,
  // and convert-func-to-llvm gives them the packed C interface the runtime
  // calls.
  lowered->walk([&](func::FuncOp func) {
    func->setAttr("llvm.emit_c_interface", mlir::UnitAttr::get(context.get()));
  });
  std::vector<PassSnapshot> recorded;
  bool optimizedTaken = false, prepared = false;
  auto prepare = [&] {
    readCodegenAttributes();
    target->prepareForLowering(*lowered);
    prepared = true;
  };
  // The default passes are verified where a phase ends: after every one of
  // them, the verifier took a tenth of a transformer block's compilation.
  // Someone else's list, and snapshots (which show the IR after each pass),
  // are verified after every pass.
  bool verifyEach = !stepsDefaulted || options.captureSnapshots;
  // The pass and phase, then what MLIR diagnosed (the op and its place).
  auto fail = [&](const std::string &what) {
    std::string why = diagnostics.take("");
    error = what + (why.empty() ? "" : ": " + why);
    lowered = nullptr;
    return failure();
  };
  const std::vector<PipelineStep> &steps = options.steps;
  for (auto [index, step] : llvm::enumerate(steps)) {
    // The "optimized" IR is what leaves the target-neutral phases.
    if (!optimizedTaken && step.phase > kLastOptimizedPhase) {
      optimized = lowered->clone();
      optimizedTaken = true;
    }
    if (!prepared && step.phase == Phase::Lower)
      prepare();
    bool phaseEnds =
        index + 1 == steps.size() || steps[index + 1].phase != step.phase;
    if (failed(runStep(step, verifyEach, recorded)))
      return fail("compilation failed in pass '" + step.name + "' (phase '" +
                  phaseName(step.phase) + "')");
    if (!verifyEach && phaseEnds && failed(mlir::verify(*lowered)))
      return fail(std::string("the IR after the '") + phaseName(step.phase) +
                  "' phase (its last pass '" + step.name +
                  "') does not verify; set CUVIL_CAPTURE_SNAPSHOTS=1 to "
                  "verify after every pass and find the one that broke it");
  }
  if (!optimizedTaken)
    optimized = lowered->clone();
  if (!prepared)
    prepare();
  if (snapshots.empty())
    snapshots = std::move(recorded);
  return success();
}

/// Reads what code generation passes recorded on functions (the memory plan,
/// the kernel table) before the last phase drops function attributes.
void cuvil::CompiledFunction::Impl::readCodegenAttributes() {
  plannedPeakBytes = unplannedBytes = 0;
  planKnown = true;
  lowered->walk([&](func::FuncOp func) {
    if (auto peak = func->getAttrOfType<mlir::IntegerAttr>(
            mlir::cuvil::CuvilDialect::PlannedPeakBytesAttrHelper::
                getNameStr()))
      plannedPeakBytes += peak.getInt();
    if (auto total = func->getAttrOfType<mlir::IntegerAttr>(
            mlir::cuvil::CuvilDialect::UnplannedBytesAttrHelper::getNameStr()))
      unplannedBytes += total.getInt();
    if (auto table = func->getAttrOfType<mlir::ArrayAttr>(
            mlir::cuvil::CuvilDialect::KernelsAttrHelper::getNameStr())) {
      kernels.clear();
      for (mlir::Attribute entry : table) {
        auto pair = cast<mlir::ArrayAttr>(entry);
        auto loc = cast<mlir::LocationAttr>(pair[1]);
        SourceLocation source = structuredLocation(loc);
        kernels.push_back({cast<mlir::StringAttr>(pair[0]).str(),
                           source.fileLineCol(), source});
      }
    }
  });
}

LogicalResult
cuvil::CompiledFunction::Impl::runStep(const PipelineStep &step,
                                       bool verifyAfter,
                                       std::vector<PassSnapshot> &recorded) {
  if (!step.run)
    return mlir::cuvil::PipelineBuilder::runStep(
        *lowered, step.phase, step.pipeline, options.captureSnapshots,
        verifyAfter, recorded);
  // An external pass: timed and snapshotted like the built-in ones, and
  // the module must still verify afterwards.
  Operation *root = lowered->getOperation();
  mlir::OperationFingerPrint before(root);
  auto session = std::make_shared<IRSession>(root, step.name);
  bool changed = false;
  std::string passError;
  auto start = std::chrono::steady_clock::now();
  bool ok = step.run(makeOpRef(session, root), changed, passError);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  session->active = false;
  if (!ok)
    return lowered->emitError("pass '")
           << step.name << "' failed: " << passError;
  if (failed(mlir::verify(root)))
    return lowered->emitError("pass '")
           << step.name
           << "' left invalid IR (see the errors above); fix its rewrite";
  PassSnapshot snapshot{step.name,
                        step.phase,
                        ms,
                        !(mlir::OperationFingerPrint(root) == before),
                        /*changeKnown=*/true,
                        ""};
  if (options.captureSnapshots)
    snapshot.ir = printOp(root);
  recorded.push_back(std::move(snapshot));
  return success();
}

/// Identifies the build of the compiler this code is linked into: the size
/// and modification time of the binary holding it. A rebuilt Cuvil whose
/// passes changed (with the same version and pipeline text) must not load
/// code an earlier build cached.
static const std::string &buildIdentity() {
  static const std::string identity = [] {
    Dl_info info;
    struct stat status;
    if (!::dladdr(reinterpret_cast<void *>(&buildIdentity), &info) ||
        !info.dli_fname || ::stat(info.dli_fname, &status) != 0)
      return std::string("unknown-build");
    return std::to_string(status.st_size) + "@" +
           std::to_string(status.st_mtim.tv_sec) + "." +
           std::to_string(status.st_mtim.tv_nsec);
  }();
  return identity;
}

std::string cuvil::buildScopedCacheFile(const std::string &cacheDir,
                                        const std::string &purpose,
                                        const std::string &extension) {
  return cacheDir + "/" +
         blake3Hex(purpose + "|" + version() + "|" + buildIdentity()) + "." +
         extension;
}

std::string cuvil::blake3Hex(std::string_view data) {
  llvm::BLAKE3 hash;
  hash.update(llvm::StringRef(data.data(), data.size()));
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

std::string
cuvil::CompiledFunction::Impl::keyFor(const std::string &identity) const {
  std::string material = identity + "|" + funcName + "|" + version() + "|" +
                         buildIdentity() + "|" + options.target + ":" +
                         std::to_string(options.device) + "|" +
                         target->cacheKeyMaterial(targetOptions());
  // The passes themselves: a cache written by another pipeline (an older
  // build, a custom one) must not be reused.
  for (const PipelineStep &step : options.steps)
    material += "|" + step.pipeline;
  return sha256Hex(material);
}

std::string
cuvil::CompiledFunction::Impl::cacheFile(const std::string &key,
                                         const std::string &extension) const {
  if (options.cacheDir.empty() || target->cacheExtension().empty() ||
      hasExternalPasses())
    return "";
  return options.cacheDir + "/" + key + extension;
}

const std::string *
cuvil::CompiledFunction::Impl::printedInput(std::string &error) {
  if (inputText.empty() && input)
    inputText = printOp(*input);
  if (inputText.empty()) {
    // Released or loaded through the text index: a context of its own, so
    // the compiled function's IR stays released. (An empty text would parse
    // into an empty module.)
    ensureSource();
    std::unique_ptr<MLIRContext> scratch = createContext();
    DiagnosticCollector diagnostics(scratch.get());
    OwningOpRef<ModuleOp> parsed;
    if (!sourceText.empty())
      parsed = parseModule(sourceText, scratch.get());
    if (parsed)
      inputText = printOp(*parsed);
  }
  if (inputText.empty()) {
    error = "the input IR of @" + funcName +
            " is not available (its text could not be produced or parsed)";
    return nullptr;
  }
  return &inputText;
}

bool cuvil::CompiledFunction::Impl::loadFromTextIndex(
    const std::string &indexPath) {
  TextIndexEntry entry;
  if (!readTextIndex(indexPath, entry))
    return false;
  // The entry must be this compilation's: its key follows from its
  // fingerprint and this build, target and pipeline.
  std::string path = cacheFile(entry.cacheKey, target->cacheExtension());
  if (entry.cacheKey != keyFor(entry.fingerprint) ||
      !llvm::sys::fs::exists(path))
    return false;
  LoadRequest indexed = request;
  indexed.inputs = entry.inputs;
  indexed.outputs = entry.outputs;
  std::string error;
  auto loaded = target->loadFromCache(path, indexed, error);
  if (failed(loaded))
    return false;
  touchCacheEntry(path);
  touchCacheEntry(indexPath);
  request = std::move(indexed);
  executable = std::move(*loaded);
  fromCache = true;
  fingerprint = std::move(entry.fingerprint);
  return true;
}

std::unique_ptr<::cuvil::Executable>
cuvil::CompiledFunction::Impl::compileIntoCache(const std::string &path,
                                                std::string &error) {
  // Write under a name unique to this compilation (threads of one process
  // compile the same function too), load that, then rename it into place:
  // readers never see a half-written entry, and the loaded file is the one
  // cached.
  if (std::error_code ec =
          llvm::sys::fs::create_directories(options.cacheDir)) {
    error = "cannot create the cache folder " + options.cacheDir + ": " +
            ec.message();
    return nullptr;
  }
  llvm::SmallString<256> unique;
  llvm::sys::fs::createUniquePath(path + ".%%%%%%%%.tmp", unique,
                                  /*MakeAbsolute=*/false);
  std::string file = unique.str().str();
  std::unique_ptr<::cuvil::Executable> executable;
  if (succeeded(target->storeInCache(*lowered, request, file, error))) {
    auto loaded = target->loadFromCache(file, request, error);
    if (succeeded(loaded))
      executable = std::move(*loaded);
  }
  if (!executable || llvm::sys::fs::rename(file, path))
    llvm::sys::fs::remove(file);
  return executable;
}

cuvil::CompiledFunction::CompiledFunction(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
cuvil::CompiledFunction::~CompiledFunction() = default;

const std::string &cuvil::CompiledFunction::name() const {
  return impl->funcName;
}
const std::vector<cuvil::TensorSignature> &
cuvil::CompiledFunction::inputs() const {
  return impl->request.inputs;
}
const std::vector<cuvil::TensorSignature> &
cuvil::CompiledFunction::outputs() const {
  return impl->request.outputs;
}
const std::vector<cuvil::PassSnapshot> &
cuvil::CompiledFunction::snapshots() const {
  return impl->snapshots;
}
const std::string &cuvil::CompiledFunction::fingerprint() const {
  return impl->fingerprint;
}
const std::string &cuvil::CompiledFunction::target() const {
  return impl->options.target;
}
int cuvil::CompiledFunction::device() const { return impl->options.device; }
double cuvil::CompiledFunction::compileMs() const { return impl->compileMs; }
int64_t cuvil::CompiledFunction::plannedPeakBytes() {
  std::string error;
  if (!impl->planKnown && failed(impl->lower(error)))
    return -1;
  return impl->plannedPeakBytes;
}
int64_t cuvil::CompiledFunction::unplannedBytes() {
  std::string error;
  if (!impl->planKnown && failed(impl->lower(error)))
    return -1;
  return impl->unplannedBytes;
}
bool cuvil::CompiledFunction::fromCache() const { return impl->fromCache; }
bool cuvil::CompiledFunction::instrumented() const {
  return impl->request.instrumented;
}
const std::vector<cuvil::KernelInfo> &cuvil::CompiledFunction::kernels() {
  std::string error;
  if (impl->request.instrumented && !impl->planKnown &&
      failed(impl->lower(error)))
    impl->kernels.clear();
  return impl->kernels;
}
std::shared_ptr<void> &cuvil::CompiledFunction::clientData() {
  return impl->clientData;
}

std::vector<cuvil::IRStage> cuvil::CompiledFunction::stages() const {
  std::vector<IRStage> result = {IRStage::Input, IRStage::Optimized};
  for (IRStage stage : impl->target->irStages())
    result.push_back(stage);
  return result;
}

bool cuvil::CompiledFunction::ir(IRStage stage, std::string &out,
                                 std::string &error) {
  if (stage == IRStage::Input) {
    const std::string *text = impl->printedInput(error);
    if (text)
      out = *text;
    return text != nullptr;
  }
  if (!llvm::is_contained(stages(), stage)) {
    std::vector<std::string> names;
    for (IRStage s : stages())
      names.push_back(irStageName(s));
    error = "the " + impl->options.target + " target has no IR stage '" +
            irStageName(stage) + "'; expected " + joinNames(names);
    return false;
  }
  if (failed(impl->lower(error)))
    return false;
  if (stage == IRStage::Optimized) {
    if (impl->optimizedText.empty())
      impl->optimizedText = printOp(*impl->optimized);
    out = impl->optimizedText;
    return true;
  }
  if (stage == IRStage::Lowered) {
    out = printOp(*impl->lowered);
    return true;
  }
  return succeeded(impl->target->printStage(*impl->lowered, stage,
                                            impl->request, out, error));
}

std::vector<cuvil::ArtifactKind> cuvil::CompiledFunction::artifacts() const {
  std::vector<ArtifactKind> result = {ArtifactKind::MLIR};
  for (ArtifactKind kind : impl->target->artifacts())
    result.push_back(kind);
  return result;
}

bool cuvil::CompiledFunction::emit(ArtifactKind kind, const std::string &path,
                                   std::string &error) {
  if (kind == ArtifactKind::MLIR) {
    const std::string *text = impl->printedInput(error);
    if (!text)
      return false;
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      error = "cannot write " + path + ": " + ec.message();
      return false;
    }
    os << *text;
    return true;
  }
  if (llvm::is_contained(artifacts(), kind) && failed(impl->lower(error)))
    return false;
  return succeeded(
      impl->target->emit(*impl->lowered, kind, impl->request, path, error));
}

bool cuvil::CompiledFunction::callOnDevice(void *const *inputs,
                                           void *const *outputs,
                                           const KernelHooks *hooks) const {
  return impl->executable->callOnDevice(inputs, outputs, hooks);
}

std::vector<std::pair<std::string, uint64_t>>
cuvil::CompiledFunction::counters() const {
  return impl->executable ? impl->executable->counters()
                          : std::vector<std::pair<std::string, uint64_t>>{};
}

cuvil::CompiledFunction::CallMemory
cuvil::CompiledFunction::callMemory() const {
  MemoryPool::Usage usage = impl->pool.usage();
  return CallMemory{usage.capacity, usage.peakBytes, usage.calls, usage.grows};
}

uint64_t cuvil::CompiledFunction::releaseCallMemory() {
  return impl->pool.release();
}

void cuvil::CompiledFunction::call(void *const *inputs, void *const *outputs,
                                   const KernelHooks *hooks,
                                   const Shapes *shapes) const {
  MemoryPool::Scope scope(&impl->pool);
  impl->executable->call(inputs, outputs, hooks, shapes);
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

std::unique_ptr<cuvil::CompiledFunction>
cuvil::compile(std::string mlirText, const std::string &funcName,
               const CompileOptions &options, std::string &error) {
  std::unique_ptr<CompiledFunction> compiled = CompiledFunction::compileAndLoad(
      std::move(mlirText), funcName, options, error);
  // A compiled function keeps its machine code and texts, not the IR: a
  // process compiling thousands of graphs must not keep thousands of MLIR
  // contexts. IR stages are rebuilt on demand, except after external
  // passes, which are not rerun behind the caller's back.
  if (compiled && !compiled->impl->hasExternalPasses())
    compiled->impl->releaseIR();
  return compiled;
}

std::unique_ptr<cuvil::CompiledFunction::Impl>
cuvil::CompiledFunction::Impl::create(const std::string &funcName,
                                      const CompileOptions &options,
                                      const std::string &indexText,
                                      std::string &indexPath,
                                      std::string &error) {
  auto impl = std::make_unique<CompiledFunction::Impl>();
  impl->target = lookupTarget(options.target, options.device, error);
  if (!impl->target)
    return nullptr;
  impl->funcName = funcName;
  impl->options = options;
  LoadRequest &request = impl->request;
  request.symbol = funcName;
  request.device = options.device;
  // The passes to run, resolved once: lowering, the cache key and the
  // calling convention all follow this list. The default one is checked
  // (every step parses) unless the text index finds code it compiled.
  impl->stepsDefaulted = impl->options.steps.empty();
  if (impl->stepsDefaulted &&
      !defaultSteps(options, impl->options.steps, error))
    return nullptr;
  request.instrumented =
      impl->target->reportsKernels() ||
      llvm::any_of(impl->options.steps, [](const PipelineStep &step) {
        return step.name == "cuvil-instrument-kernels";
      });
  indexPath = options.captureSnapshots
                  ? ""
                  : impl->cacheFile(
                        impl->keyFor("text:" + blake3Hex(indexText)), ".index");
  return impl;
}

std::unique_ptr<cuvil::CompiledFunction>
cuvil::CompiledFunction::Impl::finished(
    std::unique_ptr<Impl> impl, std::chrono::steady_clock::time_point start) {
  impl->compileMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return std::unique_ptr<cuvil::CompiledFunction>(
      new cuvil::CompiledFunction(std::move(impl)));
}

std::unique_ptr<cuvil::CompiledFunction>
cuvil::loadIndexed(const std::string &indexText, const std::string &funcName,
                   const CompileOptions &options, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  std::string indexPath;
  auto impl = CompiledFunction::Impl::create(funcName, options, indexText,
                                             indexPath, error);
  if (!impl || indexPath.empty() || !impl->loadFromTextIndex(indexPath))
    return nullptr;
  return CompiledFunction::Impl::finished(std::move(impl), start);
}

void cuvil::CompiledFunction::setSourceProvider(
    std::function<std::string()> provider) {
  impl->sourceProvider = std::move(provider);
}

std::unique_ptr<cuvil::CompiledFunction>
cuvil::CompiledFunction::compileAndLoad(std::string mlirText,
                                        const std::string &funcName,
                                        const CompileOptions &options,
                                        std::string &error) {
  auto start = std::chrono::steady_clock::now();
  std::string indexPath;
  const std::string &indexText =
      options.indexText.empty() ? static_cast<const std::string &>(mlirText)
                                : options.indexText;
  auto impl = Impl::create(funcName, options, indexText, indexPath, error);
  if (!impl)
    return nullptr;
  LoadRequest &request = impl->request;
  auto finish = [&] { return Impl::finished(std::move(impl), start); };
  // Text that names constants by resource is not the whole module: the
  // caller gives that (setSourceProvider), and only a key text of its own
  // may index it.
  bool partialText = !options.constants.empty();
  if (partialText && options.indexText.empty())
    indexPath.clear();
  auto keepText = [&] {
    if (!partialText)
      impl->sourceText = std::move(mlirText);
    impl->options.constants.clear(); // the caller's memory, read by now
  };
  if (!indexPath.empty() && impl->loadFromTextIndex(indexPath)) {
    keepText();
    return finish();
  }
  if (impl->stepsDefaulted &&
      !verifySteps(options.target, impl->options.steps, error))
    return nullptr;
  impl->context = createContext();
  DiagnosticCollector diagnostics(impl->context.get());
  impl->input = parseModule(mlirText, impl->context.get());
  if (!impl->input) {
    error = diagnostics.take("the IR does not parse");
    return nullptr;
  }
  if (partialText &&
      failed(bindConstants(*impl->input, options.constants, error)))
    return nullptr;
  auto func = impl->input->lookupSymbol<func::FuncOp>(funcName);
  if (!func) {
    error = "no function @" + funcName + " in the module";
    return nullptr;
  }
  if (failed(signatureOf(func.getArgumentTypes(), func.getLoc(), "argument",
                         request.inputs)) ||
      failed(signatureOf(func.getResultTypes(), func.getLoc(), "result",
                         request.outputs))) {
    error = diagnostics.take("unsupported signature");
    return nullptr;
  }
  keepText();
  impl->fingerprint = structuralFingerprint(*impl->input);

  std::string cacheKey = impl->cacheKey();
  std::string cachePath =
      impl->cacheFile(cacheKey, impl->target->cacheExtension());
  if (!cachePath.empty() && !options.captureSnapshots &&
      llvm::sys::fs::exists(cachePath)) {
    std::string cacheError;
    auto loaded = impl->target->loadFromCache(cachePath, request, cacheError);
    if (succeeded(loaded)) {
      touchCacheEntry(cachePath);
      impl->executable = std::move(*loaded);
      impl->fromCache = true;
    }
  }
  bool cached = impl->fromCache;
  if (!impl->fromCache) {
    if (failed(impl->lower(error)))
      return nullptr;
    // A cache that cannot be written only costs the next process a
    // compilation: fall back to loading without it.
    std::string cacheError;
    if (!cachePath.empty())
      impl->executable = impl->compileIntoCache(cachePath, cacheError);
    cached = bool(impl->executable);
    if (!impl->executable) {
      auto loaded = impl->target->load(*impl->lowered, request, error);
      if (failed(loaded))
        return nullptr;
      impl->executable = std::move(*loaded);
    }
  }
  // The next process finds the code from this text without MLIR.
  if (cached && !indexPath.empty())
    writeTextIndex(indexPath, {cacheKey, impl->fingerprint, request.inputs,
                               request.outputs});
  // New entries: the folder is trimmed to its limit, sparing them.
  if (cached && !impl->fromCache)
    trimDiskCache(options.cacheDir, diskCacheLimitBytes(),
                  {cachePath, indexPath});
  return finish();
}

bool cuvil::verify(const std::string &mlirText, std::string &error) {
  auto context = createContext();
  DiagnosticCollector diagnostics(context.get());
  if (parseModule(mlirText, context.get()))
    return true;
  error = diagnostics.take("the IR does not parse");
  return false;
}

/// The parsed and verified module, or null with the diagnostics in `error`.
static OwningOpRef<ModuleOp> parseForQuery(const std::string &mlirText,
                                           MLIRContext *context,
                                           std::string &error) {
  DiagnosticCollector diagnostics(context);
  OwningOpRef<ModuleOp> module = parseModule(mlirText, context);
  if (!module)
    error = diagnostics.take("the IR does not parse");
  return module;
}

std::string cuvil::fingerprint(const std::string &mlirText,
                               std::string &error) {
  auto context = createContext();
  OwningOpRef<ModuleOp> module = parseForQuery(mlirText, context.get(), error);
  return module ? structuralFingerprint(*module) : "";
}

bool cuvil::saveIRPackage(const std::string &mlirText,
                          const std::string &metadataJson,
                          const std::string &path, std::string &error) {
  auto context = createContext();
  OwningOpRef<ModuleOp> module = parseForQuery(mlirText, context.get(), error);
  return module && writeIRPackage(*module, metadataJson, path, error);
}

bool cuvil::loadIRPackage(const std::string &path, std::string &mlirText,
                          std::string &metadataJson, std::string &form,
                          std::string &error) {
  auto context = createContext();
  OwningOpRef<ModuleOp> module =
      readIRPackage(path, context.get(), metadataJson, form, error);
  if (!module)
    return false;
  mlirText = printOp(module->getOperation());
  return true;
}

bool cuvil::transformIR(const std::string &mlirText,
                        const std::string &pipeline, std::string &out,
                        std::string &report, std::string &error) {
  auto context = createContext();
  OwningOpRef<ModuleOp> module = parseForQuery(mlirText, context.get(), error);
  if (!module)
    return false;
  mlir::cuvil::registerCuvilPasses();
  // Remarks name their op by location; the op's text would bury them.
  context->printOpOnDiagnostic(false);
  mlir::PassManager pm(context.get());
  {
    llvm::raw_string_ostream os(error);
    if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, os)))
      return false;
  }
  DiagnosticCollector diagnostics(context.get());
  if (mlir::failed(pm.run(*module))) {
    error = diagnostics.take("the passes '" + pipeline + "' failed");
    return false;
  }
  report = diagnostics.take("");
  out = printOp(module->getOperation());
  return true;
}

bool cuvil::resultSymbols(const std::string &mlirText,
                          const std::string &funcName,
                          std::vector<std::vector<std::string>> &out,
                          std::string &error) {
  auto context = createContext();
  OwningOpRef<ModuleOp> module = parseForQuery(mlirText, context.get(), error);
  if (!module)
    return false;
  DiagnosticCollector diagnostics(context.get());
  auto func = module->lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func) {
    error = "no function @" + funcName + " in the IR";
    return false;
  }
  mlir::PassManager pm(context.get(), mlir::func::FuncOp::getOperationName());
  pm.addPass(mlir::cuvil::createPropagateSymbols());
  if (mlir::failed(pm.run(func))) {
    error = diagnostics.take("the symbolic shapes do not agree");
    return false;
  }
  llvm::StringRef name =
      mlir::cuvil::CuvilDialect::SymbolsAttrHelper::getNameStr();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    std::vector<std::string> exprs;
    if (auto symbols = func.getResultAttrOfType<mlir::ArrayAttr>(i, name))
      for (mlir::Attribute symbol : symbols)
        exprs.push_back(mlir::cast<mlir::StringAttr>(symbol).getValue().str());
    out.push_back(std::move(exprs));
  }
  return true;
}
