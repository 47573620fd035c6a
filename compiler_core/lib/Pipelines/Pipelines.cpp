//===- Pipelines.cpp - Cuvil pipelines and per-pass snapshots -------------===//
//
// Every caller (CLI, Python, Workbench, cuvil-opt) gets its pass order from
// here. Stages are textual pass pipelines, so a snapshot's pass name is the
// flag that reproduces it.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Pipelines/Pipelines.h"

#include "cuvil/Conversion/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"
#include "cuvil/Target/CPU/Passes.h"

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

using namespace mlir;
using namespace mlir::cuvil;

void mlir::cuvil::registerCuvilPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerCuvilConversionPasses();
    registerCuvilGraphPasses();
    registerCuvilCpuPasses();
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
class SnapshotInstrumentation : public PassInstrumentation {
public:
  SnapshotInstrumentation(ModuleOp root, std::string stage, bool captureIR,
                          std::vector<PassSnapshot> &out)
      : root(root), stage(std::move(stage)), captureIR(captureIR), out(out) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (isAdaptor(pass))
      return;
    pending.push_back({pass, Clock::now(), OperationFingerPrint(op)});
  }

  void runAfterPass(Pass *pass, Operation *op) override { finish(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    finish(pass, op);
  }

private:
  struct Pending {
    Pass *pass;
    Clock::time_point start;
    OperationFingerPrint before;
  };

  void finish(Pass *pass, Operation *op) {
    if (isAdaptor(pass) || pending.empty())
      return;
    Pending p = pending.back();
    pending.pop_back();
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - p.start)
            .count();
    bool changed = !(OperationFingerPrint(op) == p.before);
    PassSnapshot *snap = nullptr;
    if (!out.empty() && lastPass == pass)
      snap = &out.back();
    if (!snap) {
      out.push_back({pass->getArgument().str(), stage, 0, false, ""});
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
  std::string stage;
  bool captureIR;
  std::vector<PassSnapshot> &out;
  SmallVector<Pending> pending;
  Pass *lastPass = nullptr;
};
} // namespace

//===----------------------------------------------------------------------===//
// PipelineBuilder
//===----------------------------------------------------------------------===//

PipelineBuilder &PipelineBuilder::addStage(std::string name,
                                           std::string passes) {
  stageList.push_back({std::move(name), std::move(passes)});
  return *this;
}

LogicalResult PipelineBuilder::runPasses(ModuleOp module, StringRef stage,
                                         StringRef passes,
                                         bool captureSnapshots,
                                         std::vector<PassSnapshot> &snapshots) {
  if (passes.empty())
    return success();
  registerCuvilPasses();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(parsePassPipeline(passes, pm, errorStream)))
    return module.emitError("invalid pass pipeline '")
           << passes << "' in stage '" << stage << "': " << errors;
  pm.addInstrumentation(std::make_unique<SnapshotInstrumentation>(
      module, stage.str(), captureSnapshots, snapshots));
  return pm.run(module);
}

LogicalResult PipelineBuilder::run(ModuleOp module, bool captureSnapshots,
                                   std::vector<PassSnapshot> &snapshots,
                                   size_t first, size_t last) const {
  last = std::min(last, stageList.size());
  for (size_t i = first; i < last; ++i)
    if (failed(runPasses(module, stageList[i].name, stageList[i].passes,
                         captureSnapshots, snapshots)))
      return failure();
  return success();
}

namespace {
/// Splits a textual pipeline at top-level commas ("a{x=1,y=2},f(b,c)" ->
/// "a{x=1,y=2}", "f(b,c)").
SmallVector<StringRef> splitTopLevel(StringRef text) {
  SmallVector<StringRef> parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' || c == '{')
      ++depth;
    else if (c == ')' || c == '}')
      --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(text.slice(begin, i).trim());
      begin = i + 1;
    }
  }
  if (begin < text.size())
    parts.push_back(text.drop_front(begin).trim());
  return parts;
}

/// The pass argument of one element ("cse", "one-shot-bufferize{...}").
StringRef passArgument(StringRef element) {
  return element.take_until([](char c) { return c == '{' || c == '('; });
}

/// Passes code generation does not depend on: turning one off changes the
/// code's speed or size, never whether it compiles or what it computes.
/// Cleanups are optional on the graph; after bufferization later
/// conversions rely on them.
bool isOptionalPass(StringRef stage, StringRef name) {
  static const llvm::StringSet<> optional = {
      "cuvil-strip-training-ops", "cuvil-fold-batch-norm",
      "cuvil-fold-constants",     "cuvil-fuse-elementwise",
      "cuvil-plan-memory",        "cuvil-tag-kernels",
      "cuvil-instrument-kernels", "cuvil-approximate-math"};
  static const llvm::StringSet<> graphCleanups = {"canonicalize", "cse"};
  bool graphStage = stage == "cuvil" || stage == "linalg" || stage == "fusion";
  return optional.contains(name) ||
         (graphStage && graphCleanups.contains(name));
}
} // namespace

std::vector<PipelineBuilder::Step> PipelineBuilder::steps() const {
  std::vector<Step> result;
  for (const Stage &stage : stageList) {
    for (StringRef element : splitTopLevel(stage.passes)) {
      StringRef name = passArgument(element);
      // An op-anchored nest ("func.func(a,b)") becomes one step per pass.
      if (element.drop_front(name.size()).starts_with("(") &&
          element.ends_with(")")) {
        StringRef inner = element.drop_front(name.size() + 1).drop_back();
        for (StringRef nested : splitTopLevel(inner)) {
          StringRef nestedName = passArgument(nested);
          result.push_back({nestedName.str(), stage.name,
                            (name + "(" + nested + ")").str(),
                            isOptionalPass(stage.name, nestedName)});
        }
        continue;
      }
      result.push_back({name.str(), stage.name, element.str(),
                        isOptionalPass(stage.name, name)});
    }
  }
  return result;
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
// The CPU pipeline
//===----------------------------------------------------------------------===//

PipelineBuilder mlir::cuvil::buildCpuPipeline(const CpuPipelineOptions &o) {
  PipelineBuilder builder;
  builder.addStage("cuvil",
                   "func.func(cuvil-strip-training-ops,cuvil-fold-batch-norm,"
                   "cuvil-fold-constants),canonicalize,cse");
  builder.addStage("linalg", "convert-cuvil-to-linalg,canonicalize,cse");
  // The stage stays (empty) without fusion so stage names are stable.
  builder.addStage("fusion", o.enableFusion
                                 ? "cuvil-fuse-elementwise,canonicalize,cse"
                                 : "");
  builder.addStage("schedule", "func.func(cuvil-tag-kernels),"
                               "cuvil-cpu-schedule{vector-lanes=" +
                                   std::to_string(o.vectorLanes) +
                                   (o.enableFusion ? "" : " fuse-epilogues=0") +
                                   "}");
  builder.addStage("bufferize",
                   "one-shot-bufferize{bufferize-function-boundaries=1 "
                   "function-boundary-type-conversion=identity-layout-map},"
                   "cuvil-materialize-results,"
                   "buffer-results-to-out-params{hoist-static-allocs=1},"
                   "buffer-deallocation-pipeline,func.func(cuvil-plan-memory),"
                   "convert-linalg-to-loops,"
                   "scf-forall-to-parallel,canonicalize,"
                   "func.func(cuvil-instrument-kernels)");
  std::string parallel =
      o.parallel ? "convert-scf-to-openmp,canonicalize," : "";
  builder.addStage("llvm", "func.func(cuvil-approximate-math),"
                           "convert-vector-to-scf{full-unroll=1}," +
                               parallel +
                               "convert-math-to-funcs,convert-math-to-llvm,"
                               "convert-math-to-libm,"
                               "convert-scf-to-cf,expand-strided-metadata,"
                               "lower-affine,convert-vector-to-llvm,"
                               "finalize-memref-to-llvm,"
                               "convert-arith-to-llvm,convert-index-to-llvm,"
                               "convert-func-to-llvm,convert-cf-to-llvm,"
                               "convert-openmp-to-llvm,"
                               "reconcile-unrealized-casts");
  return builder;
}

//===----------------------------------------------------------------------===//
// cuvil-opt registration
//===----------------------------------------------------------------------===//

namespace {
struct CpuPipelineCliOptions
    : public PassPipelineOptions<CpuPipelineCliOptions> {
  Option<bool> enableFusion{*this, "enable-fusion",
                            llvm::cl::desc("Fuse elementwise ops"),
                            llvm::cl::init(true)};
  Option<std::string> upTo{
      *this, "up-to",
      llvm::cl::desc("Stop after this stage (cuvil, linalg, fusion, "
                     "bufferize, llvm)"),
      llvm::cl::init("llvm")};
  Option<int> vectorLanes{*this, "vector-lanes",
                          llvm::cl::desc("f32 lanes per vector register"),
                          llvm::cl::init(16)};
};
} // namespace

void mlir::cuvil::registerCuvilPipelines() {
  PassPipelineRegistration<CpuPipelineCliOptions>(
      "cuvil-cpu-pipeline",
      "Cuvil's CPU pipeline from cuvil ops to the LLVM dialect (serial)",
      [](OpPassManager &pm, const CpuPipelineCliOptions &cli) {
        CpuPipelineOptions options;
        options.enableFusion = cli.enableFusion;
        options.parallel = false;
        options.vectorLanes = cli.vectorLanes;
        PipelineBuilder pipeline = buildCpuPipeline(options);
        for (const PipelineBuilder::Stage &stage : pipeline.stages()) {
          if (!stage.passes.empty())
            (void)parsePassPipeline(stage.passes, pm);
          if (stage.name == cli.upTo)
            break;
        }
      });
}
