//===- Compiler.cpp - Compile Cuvil IR for the CPU and call it ------------===//
//
// Parses and verifies the text a front end produced, runs the CPU pipeline
// (with snapshots), JIT-compiles it, and calls it through the C interface
// wrapper with memref descriptors built around the caller's buffers. A disk
// cache keyed by the IR fingerprint lets a new process skip compilation.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/Compiler.h"

#include "IRSession.h"

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/CPU/CpuBackend.h"
#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <unistd.h>

using mlir::CallSiteLoc;
using mlir::Diagnostic;
using mlir::DiagnosticSeverity;
using mlir::DialectRegistry;
using mlir::ExecutionEngine;
using mlir::failed;
using mlir::failure;
using mlir::FileLineColLoc;
using mlir::FusedLoc;
using mlir::Location;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::NameLoc;
using mlir::Operation;
using mlir::OpPrintingFlags;
using mlir::OwningOpRef;
using mlir::ParserConfig;
using mlir::RankedTensorType;
using mlir::ScopedDiagnosticHandler;
using mlir::succeeded;
using mlir::success;
using mlir::Type;
using mlir::TypeRange;
using mlir::UnitAttr;
namespace func = mlir::func;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
namespace cpu = mlir::cuvil::cpu;

#ifndef CUVIL_VERSION
#define CUVIL_VERSION "0.0.0"
#endif

const char *cuvil::version() { return CUVIL_VERSION; }

namespace {

//===----------------------------------------------------------------------===//
// Context and diagnostics
//===----------------------------------------------------------------------===//

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  mlir::cuvil::registerCuvilDialects(registry);
  cpu::initializeTargets(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->disableMultithreading();
  context->printOpOnDiagnostic(false);
  return context;
}

} // namespace

/// Formats a location as the user's `file:line:col`.
std::string cuvil::detail::formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
            ":" + std::to_string(file.getColumn()));
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string text = formatLocation(inner);
      if (!text.empty())
        return text;
    }
  if (auto name = dyn_cast<NameLoc>(loc))
    return formatLocation(name.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return formatLocation(callSite.getCallee());
  return "";
}

namespace {
using cuvil::detail::formatLocation;

/// Collects diagnostics as "file:line:col: error: message" lines.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &diag) {
          std::string where = formatLocation(diag.getLocation());
          const char *severity = "error";
          if (diag.getSeverity() == DiagnosticSeverity::Warning)
            severity = "warning";
          else if (diag.getSeverity() == DiagnosticSeverity::Note)
            severity = "note";
          else if (diag.getSeverity() == DiagnosticSeverity::Remark)
            severity = "remark";
          if (!text.empty())
            text += "\n";
          text += (where.empty() ? "" : where + ": ") + severity + ": " +
                  diag.str();
          for (Diagnostic &note : diag.getNotes()) {
            std::string noteWhere = formatLocation(note.getLocation());
            text += "\n" + (noteWhere.empty() ? "" : noteWhere + ": ") +
                    "note: " + note.str();
          }
          return success();
        }) {}

  std::string take(const std::string &fallback) {
    return text.empty() ? fallback : std::move(text);
  }

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

std::string printOp(Operation *op, bool debugInfo = true) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().enableDebugInfo(debugInfo, false));
  return text;
}

std::string sha256Hex(llvm::StringRef data) {
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(data));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string structuralFingerprint(ModuleOp module) {
  // Function names and locations do not change what a graph computes; SSA
  // names are positional in the generic printed form.
  OwningOpRef<ModuleOp> clone = module.clone();
  unsigned index = 0;
  clone->walk([&](func::FuncOp func) {
    func.setSymName(("f" + std::to_string(index++)));
  });
  std::string text;
  llvm::raw_string_ostream os(text);
  clone->print(os,
               OpPrintingFlags().printGenericOpForm().enableDebugInfo(false));
  return sha256Hex(text);
}

std::optional<std::string> dtypeName(Type type) {
  if (type.isF32())
    return "float32";
  if (type.isF64())
    return "float64";
  if (type.isF16())
    return "float16";
  if (type.isBF16())
    return "bfloat16";
  if (type.isInteger(1))
    return "bool";
  if (type.isInteger(8))
    return "int8";
  if (type.isInteger(32))
    return "int32";
  if (type.isInteger(64))
    return "int64";
  return std::nullopt;
}

LogicalResult signatureOf(TypeRange types, Location loc, const char *what,
                          std::vector<cuvil::TensorSignature> &out) {
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<std::string> dtype =
        tensor ? dtypeName(tensor.getElementType()) : std::nullopt;
    if (!tensor || !tensor.hasStaticShape() || !dtype)
      return mlir::emitError(loc)
             << "unsupported " << what << " type " << type
             << ": compiled functions take and return "
                "statically shaped tensors of f16, bf16, f32, "
                "f64, i1, i8, i32 or i64";
    out.push_back({*dtype, std::vector<int64_t>(tensor.getShape().begin(),
                                                tensor.getShape().end())});
  }
  return success();
}

using PackedFn = void (*)(void **);

OwningOpRef<ModuleOp> parseModule(const std::string &text,
                                  MLIRContext *context) {
  return mlir::parseSourceString<ModuleOp>(text, ParserConfig(context),
                                           "<cuvil-ir>");
}

} // namespace

//===----------------------------------------------------------------------===//
// CompiledFunction
//===----------------------------------------------------------------------===//

struct cuvil::CompiledFunction::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> input;   // verified cuvil IR
  OwningOpRef<ModuleOp> lowered; // LLVM dialect (null when loaded from cache)
  std::string funcName;
  CompileOptions options;
  std::string inputText, optimizedText;
  std::vector<TensorSignature> inputs, outputs;
  std::vector<PassSnapshot> snapshots;
  std::string fingerprint;
  double compileMs = 0;
  bool fromCache = false;
  int64_t plannedPeakBytes = 0, unplannedBytes = 0;
  bool planKnown = false; // set once lowered (the IR may be released later)
  bool instrumented = false;
  std::vector<KernelInfo> kernels;
  std::shared_ptr<void> clientData;
  std::unique_ptr<ExecutionEngine> engine;
  PackedFn entry = nullptr;
  /// Descriptor template per argument: {alloc, aligned, offset, sizes,
  /// strides} as 64-bit words; pointer words are filled per call.
  std::vector<std::vector<int64_t>> descriptors;

  LogicalResult lower(std::string &error);
  LogicalResult runStep(const PipelineStep &step,
                        std::vector<PassSnapshot> &recorded);
  void finalizeBeforeLLVM();
  LogicalResult jit(std::string &error);
  LogicalResult loadFromCache(const std::string &path, std::string &error);
  void storeInCache(const std::string &path);
  std::string cacheKey() const;
  /// Passes outside the compiler (Python) ran: no disk cache, and the IR is
  /// kept rather than rebuilt by running them again.
  bool hasExternalPasses() const {
    return llvm::any_of(
        options.steps, [](const PipelineStep &step) { return bool(step.run); });
  }
  void releaseIR() {
    lowered = nullptr;
    input = nullptr;
    context.reset();
  }
  /// Name of the compiled function's symbol.
  std::string symbolName() const { return "cuvil_" + funcName; }
};

static std::string packedName(const std::string &func) {
  return "_mlir__mlir_ciface_" + func;
}

LogicalResult cuvil::CompiledFunction::Impl::lower(std::string &error) {
  if (lowered)
    return success();
  if (!input) {
    // The IR was released after compilation; rebuild it from the text.
    context = createContext();
    DiagnosticCollector parseDiagnostics(context.get());
    input = parseModule(inputText, context.get());
    if (!input) {
      error = parseDiagnostics.take("the IR does not parse");
      return failure();
    }
  }
  DiagnosticCollector diagnostics(context.get());
  lowered = input->clone();
  lowered->walk([&](func::FuncOp func) {
    func->setAttr("llvm.emit_c_interface", UnitAttr::get(context.get()));
  });
  std::vector<PassSnapshot> recorded;
  bool optimizedTaken = false, finalized = false;
  for (const PipelineStep &step : options.steps) {
    // The "optimized" IR is what enters scheduling.
    if (!optimizedTaken &&
        (step.stage == "schedule" || step.stage == "bufferize" ||
         step.stage == "llvm")) {
      optimizedText = printOp(*lowered);
      optimizedTaken = true;
    }
    if (!finalized && step.stage == "llvm") {
      finalizeBeforeLLVM();
      finalized = true;
    }
    if (failed(runStep(step, recorded))) {
      error =
          diagnostics.take("compilation failed in pass '" + step.name + "'");
      lowered = nullptr;
      return failure();
    }
  }
  if (!optimizedTaken)
    optimizedText = printOp(*lowered);
  if (!finalized)
    finalizeBeforeLLVM();
  if (snapshots.empty())
    snapshots = std::move(recorded);
  return success();
}

/// Reads the memory plan before the LLVM stage drops function attributes,
/// and prefixes compiled symbols: a user function called `exp` must not
/// capture the C library's exp that generated code calls.
void cuvil::CompiledFunction::Impl::finalizeBeforeLLVM() {
  plannedPeakBytes = unplannedBytes = 0;
  planKnown = true;
  lowered->walk([&](func::FuncOp func) {
    if (!func.isDeclaration())
      func.setSymName(("cuvil_" + func.getSymName()).str());
    if (auto peak =
            func->getAttrOfType<mlir::IntegerAttr>("cuvil.planned_peak_bytes"))
      plannedPeakBytes += peak.getInt();
    if (auto total =
            func->getAttrOfType<mlir::IntegerAttr>("cuvil.unplanned_bytes"))
      unplannedBytes += total.getInt();
    if (auto table = func->getAttrOfType<mlir::ArrayAttr>("cuvil.kernels")) {
      kernels.clear();
      for (mlir::Attribute entry : table) {
        auto pair = cast<mlir::ArrayAttr>(entry);
        kernels.push_back({cast<mlir::StringAttr>(pair[0]).str(),
                           formatLocation(cast<mlir::LocationAttr>(pair[1]))});
      }
    }
  });
}

LogicalResult
cuvil::CompiledFunction::Impl::runStep(const PipelineStep &step,
                                       std::vector<PassSnapshot> &recorded) {
  if (!step.run)
    return mlir::cuvil::PipelineBuilder::runPasses(
        *lowered, step.stage, step.pipeline, options.captureSnapshots,
        recorded);
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
  PassSnapshot snapshot{step.name, step.stage, ms,
                        !(mlir::OperationFingerPrint(root) == before), ""};
  if (options.captureSnapshots)
    snapshot.ir = printOp(root);
  recorded.push_back(std::move(snapshot));
  return success();
}

LogicalResult cuvil::CompiledFunction::Impl::jit(std::string &error) {
  auto created = cpu::createJit(*lowered);
  if (!created) {
    error = "JIT compilation failed: " + llvm::toString(created.takeError());
    return failure();
  }
  engine = std::move(*created);
  auto fn = engine->lookupPacked("_mlir_ciface_" + symbolName());
  if (!fn) {
    error = "compiled function '" + funcName +
            "' not found: " + llvm::toString(fn.takeError());
    return failure();
  }
  entry = *fn;
  return success();
}

std::string cuvil::CompiledFunction::Impl::cacheKey() const {
  std::string material = fingerprint + "|" + funcName + "|" + version() + "|" +
                         cpu::hostDescription() +
                         (options.enableFusion ? "|fusion" : "|nofusion") +
                         (options.parallel ? "|parallel" : "|serial");
  // The passes themselves: a cache written by another pipeline (an older
  // build, a custom one) must not be reused.
  for (const PipelineStep &step : options.steps)
    material += "|" + step.pipeline;
  return sha256Hex(material);
}

LogicalResult
cuvil::CompiledFunction::Impl::loadFromCache(const std::string &path,
                                             std::string &error) {
  cpu::configureThreadRuntime();
  std::string loadError;
  auto library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &loadError);
  if (!library.isValid()) {
    error = loadError;
    return failure();
  }
  void *symbol = library.getAddressOfSymbol(packedName(symbolName()).c_str());
  if (!symbol) {
    error = "symbol " + packedName(symbolName()) + " missing in " + path;
    return failure();
  }
  entry = reinterpret_cast<PackedFn>(symbol);
  return success();
}

void cuvil::CompiledFunction::Impl::storeInCache(const std::string &path) {
  // Write under a unique name, then rename: concurrent processes never see
  // a half-written library. A failure only costs the next process a compile.
  if (llvm::sys::fs::create_directories(options.cacheDir))
    return;
  std::string unique = path + ".tmp" + std::to_string(::getpid());
  if (llvm::Error e = cpu::emitSharedLibrary(*lowered, symbolName(), unique)) {
    llvm::consumeError(std::move(e));
    llvm::sys::fs::remove(unique);
    return;
  }
  if (llvm::sys::fs::rename(unique, path))
    llvm::sys::fs::remove(unique);
}

cuvil::CompiledFunction::CompiledFunction(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
cuvil::CompiledFunction::~CompiledFunction() = default;

const std::string &cuvil::CompiledFunction::name() const {
  return impl->funcName;
}
const std::vector<cuvil::TensorSignature> &
cuvil::CompiledFunction::inputs() const {
  return impl->inputs;
}
const std::vector<cuvil::TensorSignature> &
cuvil::CompiledFunction::outputs() const {
  return impl->outputs;
}
const std::vector<cuvil::PassSnapshot> &
cuvil::CompiledFunction::snapshots() const {
  return impl->snapshots;
}
const std::string &cuvil::CompiledFunction::fingerprint() const {
  return impl->fingerprint;
}
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
  return impl->instrumented;
}
const std::vector<cuvil::KernelInfo> &cuvil::CompiledFunction::kernels() {
  std::string error;
  if (impl->instrumented && !impl->planKnown && failed(impl->lower(error)))
    impl->kernels.clear();
  return impl->kernels;
}
std::shared_ptr<void> &cuvil::CompiledFunction::clientData() {
  return impl->clientData;
}

bool cuvil::CompiledFunction::ir(const std::string &stage, std::string &out,
                                 std::string &error) {
  if (stage == "input") {
    out = impl->inputText;
    return true;
  }
  static const char *kStages[] = {"optimized", "llvm-dialect", "llvm", "asm"};
  if (!llvm::is_contained(kStages, stage)) {
    error = "unknown IR stage '" + stage +
            "'; expected input, optimized, llvm-dialect, llvm or asm";
    return false;
  }
  if (failed(impl->lower(error)))
    return false;
  if (stage == "optimized") {
    out = impl->optimizedText;
    return true;
  }
  if (stage == "llvm-dialect") {
    out = printOp(*impl->lowered);
    return true;
  }
  auto kind = stage == "llvm" ? cpu::Artifact::LLVMIR : cpu::Artifact::Assembly;
  if (llvm::Error e = cpu::emitArtifact(*impl->lowered, kind, out)) {
    error = llvm::toString(std::move(e));
    return false;
  }
  return true;
}

bool cuvil::CompiledFunction::emit(const std::string &kind,
                                   const std::string &path,
                                   std::string &error) {
  std::string content;
  if (kind == "mlir") {
    content = impl->inputText;
  } else if (kind == "llvm" || kind == "asm") {
    if (!ir(kind, content, error))
      return false;
  } else if (kind == "so") {
    if (failed(impl->lower(error)))
      return false;
    if (llvm::Error e =
            cpu::emitSharedLibrary(*impl->lowered, impl->symbolName(), path)) {
      error = llvm::toString(std::move(e));
      return false;
    }
    return true;
  } else if (kind == "obj") {
    if (failed(impl->lower(error)))
      return false;
    if (llvm::Error e =
            cpu::emitArtifact(*impl->lowered, cpu::Artifact::Object, content)) {
      error = llvm::toString(std::move(e));
      return false;
    }
  } else {
    error = "unknown artifact kind '" + kind +
            "'; expected mlir, llvm, asm, obj or so";
    return false;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os << content;
  return true;
}

void cuvil::CompiledFunction::call(void *const *inputs, void *const *outputs,
                                   const KernelHooks *hooks) const {
  size_t numInputs = impl->inputs.size();
  size_t numArgs = impl->descriptors.size();
  llvm::SmallVector<int64_t, 64> words;
  llvm::SmallVector<size_t, 8> offsets;
  for (const std::vector<int64_t> &desc : impl->descriptors) {
    offsets.push_back(words.size());
    words.append(desc.begin(), desc.end());
  }
  llvm::SmallVector<void *, 8> descriptorPtrs(numArgs);
  llvm::SmallVector<void *, 8> packed(numArgs);
  // Instrumented code takes the hook table (or null) as a last argument.
  void *hookTable = const_cast<KernelHooks *>(hooks);
  if (impl->instrumented)
    packed.push_back(&hookTable);
  for (size_t i = 0; i < numArgs; ++i) {
    void *data = i < numInputs ? inputs[i] : outputs[i - numInputs];
    int64_t *desc = words.data() + offsets[i];
    desc[0] = reinterpret_cast<int64_t>(data);
    desc[1] = reinterpret_cast<int64_t>(data);
    descriptorPtrs[i] = desc;
    packed[i] = &descriptorPtrs[i];
  }
  impl->entry(packed.data());
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

std::unique_ptr<cuvil::CompiledFunction>
cuvil::compile(const std::string &mlirText, const std::string &funcName,
               const CompileOptions &options, std::string &error) {
  std::unique_ptr<CompiledFunction> compiled =
      CompiledFunction::compileAndLoad(mlirText, funcName, options, error);
  // A compiled function keeps its machine code and texts, not the IR: a
  // process compiling thousands of graphs must not keep thousands of MLIR
  // contexts. IR stages are rebuilt on demand, except after external
  // passes, which are not rerun behind the caller's back.
  if (compiled && !compiled->impl->hasExternalPasses())
    compiled->impl->releaseIR();
  return compiled;
}

std::unique_ptr<cuvil::CompiledFunction>
cuvil::CompiledFunction::compileAndLoad(const std::string &mlirText,
                                        const std::string &funcName,
                                        const CompileOptions &options,
                                        std::string &error) {
  auto start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<CompiledFunction::Impl>();
  impl->context = createContext();
  impl->funcName = funcName;
  impl->options = options;
  // The passes to run, resolved once: lowering, the cache key and the
  // calling convention all follow this list.
  if (impl->options.steps.empty())
    impl->options.steps = defaultPipeline(options);
  DiagnosticCollector diagnostics(impl->context.get());
  impl->input = parseModule(mlirText, impl->context.get());
  if (!impl->input) {
    error = diagnostics.take("the IR does not parse");
    return nullptr;
  }
  auto func = impl->input->lookupSymbol<func::FuncOp>(funcName);
  if (!func) {
    error = "no function @" + funcName + " in the module";
    return nullptr;
  }
  if (failed(signatureOf(func.getArgumentTypes(), func.getLoc(), "argument",
                         impl->inputs)) ||
      failed(signatureOf(func.getResultTypes(), func.getLoc(), "result",
                         impl->outputs))) {
    error = diagnostics.take("unsupported signature");
    return nullptr;
  }
  for (const auto *list : {&impl->inputs, &impl->outputs})
    for (const TensorSignature &sig : *list) {
      std::vector<int64_t> desc = {0, 0, 0};
      desc.insert(desc.end(), sig.shape.begin(), sig.shape.end());
      std::vector<int64_t> strides(sig.shape.size(), 1);
      for (int i = (int)sig.shape.size() - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * sig.shape[i + 1];
      desc.insert(desc.end(), strides.begin(), strides.end());
      impl->descriptors.push_back(std::move(desc));
    }
  impl->inputText = printOp(*impl->input);
  impl->fingerprint = structuralFingerprint(*impl->input);
  impl->instrumented =
      llvm::any_of(impl->options.steps, [](const PipelineStep &step) {
        return step.name == "cuvil-instrument-kernels";
      });

  std::string cachePath;
  if (!options.cacheDir.empty() && !impl->hasExternalPasses()) {
    cachePath =
        (llvm::Twine(options.cacheDir) + "/" + impl->cacheKey() + ".so").str();
    std::string cacheError;
    if (!options.captureSnapshots && llvm::sys::fs::exists(cachePath) &&
        succeeded(impl->loadFromCache(cachePath, cacheError)))
      impl->fromCache = true;
  }
  if (!impl->fromCache) {
    if (failed(impl->lower(error)) || failed(impl->jit(error)))
      return nullptr;
    if (!cachePath.empty())
      impl->storeInCache(cachePath);
  }
  impl->compileMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return std::unique_ptr<CompiledFunction>(
      new CompiledFunction(std::move(impl)));
}

std::vector<cuvil::PipelineStep>
cuvil::defaultPipeline(const CompileOptions &options) {
  mlir::cuvil::CpuPipelineOptions pipelineOptions;
  pipelineOptions.enableFusion = options.enableFusion;
  pipelineOptions.parallel = options.parallel;
  pipelineOptions.vectorLanes = mlir::cuvil::hostVectorLanes();
  std::vector<PipelineStep> steps;
  for (const auto &step :
       mlir::cuvil::buildCpuPipeline(pipelineOptions).steps())
    steps.push_back({step.name, step.stage, step.pipeline, step.optional, {}});
  return steps;
}

bool cuvil::loadPassPlugin(const std::string &path, std::string &error) {
  return mlir::cuvil::loadPassPlugin(path, error);
}

bool cuvil::checkPassPipeline(const std::string &pipeline, std::string &error) {
  return mlir::cuvil::checkPassPipeline(pipeline, error);
}

bool cuvil::verify(const std::string &mlirText, std::string &error) {
  auto context = createContext();
  DiagnosticCollector diagnostics(context.get());
  if (parseModule(mlirText, context.get()))
    return true;
  error = diagnostics.take("the IR does not parse");
  return false;
}

std::string cuvil::fingerprint(const std::string &mlirText,
                               std::string &error) {
  auto context = createContext();
  DiagnosticCollector diagnostics(context.get());
  OwningOpRef<ModuleOp> module = parseModule(mlirText, context.get());
  if (!module) {
    error = diagnostics.take("the IR does not parse");
    return "";
  }
  return structuralFingerprint(*module);
}
