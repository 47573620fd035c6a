//===- Pipelines.cpp - Typed pipelines, per-pass snapshots ----------------===//
//
// Every caller (CLI, Python, Workbench, cuvil-opt) gets its pass order from
// here and from the target backends' buildPhases. Steps are single passes
// named by their argument, so a snapshot's pass name is the flag that
// reproduces it; each step is parsed by MLIR before anything runs.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Pipelines/Pipelines.h"

#include "cuvil/Codegen/Common/Passes.h"
#include "cuvil/Conversion/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"
#include "cuvil/Target/TargetBackend.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/ADT/StringSet.h"

#include <chrono>
#include <mutex>
#include <optional>

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::phaseInfo;
using ::cuvil::phaseName;

void mlir::cuvil::registerCuvilPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerCuvilConversionPasses();
    registerCuvilGraphPasses();
    registerCuvilCodegenPasses();
  });
}

void mlir::cuvil::registerCuvilDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<CuvilDialect>();
}

//===----------------------------------------------------------------------===//
// Snapshots
//===----------------------------------------------------------------------===//

namespace {
using Clock = std::chrono::steady_clock;

/// Pass managers wrap nested pipelines in adaptor passes, which have no
/// argument; they are containers, not transformations.
bool isAdaptor(Pass *pass) {
  StringRef name = pass->getName();
  return pass->getArgument().empty() &&
         (name.starts_with("Pipeline") || name.contains("OpToOpPassAdaptor"));
}

/// Records one snapshot per pass instance. A pass nested on functions runs
/// once per function; its times add up and any change marks it changed.
/// Whether a pass changed the IR is known only when the IR is captured: the
/// fingerprint hashes the whole function twice per pass, a tenth of the
/// passes' time, which a plain compilation does not pay for.
class SnapshotInstrumentation : public PassInstrumentation {
public:
  SnapshotInstrumentation(ModuleOp root, Phase phase, bool captureIR,
                          std::vector<PassSnapshot> &out)
      : root(root), phase(phase), captureIR(captureIR), out(out) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (isAdaptor(pass))
      return;
    std::optional<OperationFingerPrint> before;
    if (captureIR)
      before.emplace(op);
    pending.push_back({pass, Clock::now(), std::move(before)});
  }

  void runAfterPass(Pass *pass, Operation *op) override { finish(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    finish(pass, op);
  }

private:
  struct Pending {
    Pass *pass;
    Clock::time_point start;
    std::optional<OperationFingerPrint> before;
  };

  void finish(Pass *pass, Operation *op) {
    if (isAdaptor(pass) || pending.empty())
      return;
    Pending p = pending.back();
    pending.pop_back();
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - p.start)
            .count();
    bool changed = p.before && !(OperationFingerPrint(op) == *p.before);
    PassSnapshot *snap = nullptr;
    if (!out.empty() && lastPass == pass)
      snap = &out.back();
    if (!snap) {
      out.push_back(
          {pass->getArgument().str(), phase, 0, false, captureIR, ""});
      if (out.back().name.empty())
        out.back().name = pass->getName().str();
      snap = &out.back();
      lastPass = pass;
    }
    snap->wallMs += ms;
    snap->changed |= changed;
    if (captureIR) {
      snap->ir.clear();
      llvm::raw_string_ostream os(snap->ir);
      root->print(os, OpPrintingFlags().enableDebugInfo(true, false));
    }
  }

  ModuleOp root;
  Phase phase;
  bool captureIR;
  std::vector<PassSnapshot> &out;
  SmallVector<Pending> pending;
  Pass *lastPass = nullptr;
};
} // namespace

//===----------------------------------------------------------------------===//
// PipelineBuilder
//===----------------------------------------------------------------------===//

PipelineBuilder &PipelineBuilder::add(Phase phase, StringRef name,
                                      StringRef options, StringRef anchor,
                                      Need need) {
  std::string element = name.str();
  if (!options.empty())
    element += "{" + options.str() + "}";
  if (!anchor.empty())
    element = anchor.str() + "(" + element + ")";
  stepList.push_back(
      {name.str(), phase, std::move(element), need == Need::Optional});
  return *this;
}

PipelineBuilder &PipelineBuilder::addCleanups(Phase phase) {
  Need need =
      phaseInfo(phase).cleanupsOptional ? Need::Optional : Need::Required;
  add(phase, "canonicalize", "", "", need);
  return add(phase, "cse", "", "", need);
}

PipelineBuilder &PipelineBuilder::addBufferization() {
  add(Phase::Bufferize, "one-shot-bufferize",
      "bufferize-function-boundaries=1 "
      "function-boundary-type-conversion=identity-layout-map");
  add(Phase::Bufferize, "cuvil-materialize-results");
  add(Phase::Bufferize, "buffer-results-to-out-params",
      "hoist-static-allocs=1");
  return add(Phase::Bufferize, "buffer-deallocation-pipeline");
}

namespace {
/// The passes a parsed pass manager holds, through nested adaptors' printed
/// form: a single-pass step must hold exactly the pass it is named after,
/// possibly nested on its anchor.
bool holdsPass(OpPassManager &pm, StringRef name) {
  if (pm.size() != 1)
    return PassPipelineInfo::lookup(name) != nullptr;
  Pass &pass = *pm.getPasses().begin();
  if (pass.getArgument() == name)
    return true;
  // A nested step parses into an adaptor on its anchor; a pipeline alias
  // into whatever it expands to.
  return isAdaptor(&pass) || PassPipelineInfo::lookup(name) != nullptr;
}
} // namespace

bool PipelineBuilder::verifyStep(StringRef name, Phase phase,
                                 StringRef pipeline, std::string &error) {
  OpPassManager pm(ModuleOp::getOperationName());
  std::string message;
  llvm::raw_string_ostream os(message);
  if (succeeded(parsePassPipeline(pipeline, pm, os)) && holdsPass(pm, name))
    return true;
  error = "pass '" + name.str() + "' of phase '" + phaseName(phase) +
          "' does not parse as '" + pipeline.str() + "'" +
          (message.empty() ? "" : ": " + message);
  return false;
}

bool PipelineBuilder::verify(std::string &error) const {
  registerCuvilPasses();
  return llvm::all_of(stepList, [&](const Step &step) {
    return verifyStep(step.name, step.phase, step.pipeline, error);
  });
}

LogicalResult PipelineBuilder::runStep(ModuleOp module, Phase phase,
                                       StringRef pipeline, bool captureIR,
                                       bool verify,
                                       std::vector<PassSnapshot> &snapshots) {
  if (pipeline.empty())
    return success();
  registerCuvilPasses();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(parsePassPipeline(pipeline, pm, errorStream)))
    return module.emitError("invalid pass pipeline '")
           << pipeline << "' in phase '" << phaseName(phase) << "': " << errors;
  pm.enableVerifier(verify);
  pm.addInstrumentation(std::make_unique<SnapshotInstrumentation>(
      module, phase, captureIR, snapshots));
  return pm.run(module);
}

bool mlir::cuvil::loadPassPlugin(const std::string &path, std::string &error) {
  static std::mutex mutex;
  static llvm::StringSet<> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.contains(path))
    return true;
  registerCuvilPasses();
  auto plugin = PassPlugin::load(path);
  if (!plugin) {
    error = "cannot load pass plugin " + path + ": " +
            llvm::toString(plugin.takeError()) +
            " (build it against the same MLIR as Cuvil, e.g. as in "
            "plugins/cpp, and pass the path of its .so)";
    return false;
  }
  plugin->registerPassRegistryCallbacks();
  loaded.insert(path);
  return true;
}

bool mlir::cuvil::checkPassPipeline(const std::string &pipeline,
                                    std::string &error) {
  registerCuvilPasses();
  OpPassManager pm(ModuleOp::getOperationName());
  llvm::raw_string_ostream os(error);
  return succeeded(parsePassPipeline(pipeline, pm, os));
}

//===----------------------------------------------------------------------===//
// Whole pipelines
//===----------------------------------------------------------------------===//

void mlir::cuvil::buildTargetNeutralPhases(PipelineBuilder &p,
                                           bool enableFusion) {
  using Need = PipelineBuilder::Need;
  // Named dynamic dimensions are checked before anything relies on them.
  p.add(Phase::Graph, "cuvil-propagate-symbols", "", "func.func");
  for (StringRef pass : {"cuvil-strip-training-ops", "cuvil-fold-batch-norm",
                         "cuvil-fold-constants", "cuvil-merge-sibling-matmuls"})
    p.add(Phase::Graph, pass, "", "func.func", Need::Optional);
  p.addCleanups(Phase::Graph);
  p.add(Phase::Linalg, "convert-cuvil-to-linalg");
  p.addCleanups(Phase::Linalg);
  // Without fusion the phase is empty, so later phases keep their place.
  if (enableFusion) {
    p.add(Phase::Fusion, "cuvil-fuse-elementwise", "", "", Need::Optional);
    p.addCleanups(Phase::Fusion);
  }
}

PipelineBuilder mlir::cuvil::buildPipeline(const TargetBackend &target,
                                           const TargetOptions &options) {
  PipelineBuilder pipeline;
  buildTargetNeutralPhases(pipeline, options.enableFusion);
  target.buildPhases(options, pipeline);
  return pipeline;
}

//===----------------------------------------------------------------------===//
// cuvil-opt registration
//===----------------------------------------------------------------------===//

namespace {
/// The up-to option's help text: llvm::cl::desc keeps only a reference, so
/// the text must outlive every options object (a temporary printed garbage
/// in `cuvil-opt --help`).
const std::string &upToHelp() {
  static const std::string text =
      "Stop after this phase (" + ::cuvil::phaseNames() + ")";
  return text;
}

struct PipelineCliOptions : public PassPipelineOptions<PipelineCliOptions> {
  Option<bool> enableFusion{*this, "enable-fusion",
                            llvm::cl::desc("Fuse elementwise ops"),
                            llvm::cl::init(true)};
  Option<std::string> upTo{*this, "up-to", llvm::cl::desc(upToHelp()),
                           llvm::cl::init("llvm")};
  Option<int> vectorLanes{*this, "vector-lanes",
                          llvm::cl::desc("f32 lanes per vector register (0: "
                                         "the target's own)"),
                          llvm::cl::init(0)};
};

/// Adds the steps of `pipeline` up to and including phase `upTo`.
LogicalResult addSteps(OpPassManager &pm, const PipelineBuilder &pipeline,
                       Phase upTo) {
  for (const PipelineBuilder::Step &step : pipeline.steps()) {
    if (step.phase > upTo)
      break;
    if (failed(parsePassPipeline(step.pipeline, pm)))
      return failure();
  }
  return success();
}
} // namespace

bool mlir::cuvil::registerCuvilPipelines(std::string &error) {
  registerCuvilPasses();
  for (const std::string &name : TargetRegistry::names()) {
    const TargetBackend *target = TargetRegistry::lookup(name);
    // Every built-in pipeline must parse, for every option combination the
    // command line offers; a broken one is an error now, not a silent
    // no-op when someone asks for it.
    for (bool fusion : {true, false}) {
      TargetOptions options;
      options.enableFusion = fusion;
      if (!buildPipeline(*target, options).verify(error)) {
        error = "the " + name + " pipeline does not parse: " + error;
        return false;
      }
    }
    registerPassPipeline(
        "cuvil-" + name + "-pipeline",
        "Cuvil's " + name +
            " pipeline from cuvil ops to the target's code generation "
            "dialect (serial)",
        [target](OpPassManager &pm, StringRef optionsText,
                 function_ref<LogicalResult(const Twine &)> errorHandler) {
          PipelineCliOptions cli;
          if (failed(cli.parseFromString(optionsText)))
            return failure();
          std::optional<Phase> upTo = ::cuvil::parsePhase(cli.upTo);
          if (!upTo)
            return errorHandler("unknown phase '" + cli.upTo +
                                "' for up-to; expected " +
                                ::cuvil::phaseNames());
          TargetOptions options;
          options.enableFusion = cli.enableFusion;
          options.parallel = false;
          options.vectorLanes = cli.vectorLanes;
          return addSteps(pm, buildPipeline(*target, options), *upTo);
        },
        [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
          optHandler(PipelineCliOptions());
        });
  }
  return true;
}
