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
bool isAdaptor(Pass *pass) { return pass->getArgument().empty() &&
                                    pass->getName().starts_with("Pipeline"); }

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
      root->print(os, OpPrintingFlags().enableDebugInfo(true, true));
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

LogicalResult PipelineBuilder::run(ModuleOp module, bool captureSnapshots,
                                   std::vector<PassSnapshot> &snapshots,
                                   size_t first, size_t last) const {
  MLIRContext *ctx = module.getContext();
  registerCuvilPasses();
  last = std::min(last, stageList.size());
  for (size_t i = first; i < last; ++i) {
    const Stage &stage = stageList[i];
    if (stage.passes.empty())
      continue;
    PassManager pm(ctx, ModuleOp::getOperationName());
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    if (failed(parsePassPipeline(stage.passes, pm, errorStream)))
      return module.emitError("internal error: stage '")
             << stage.name << "' has an invalid pipeline: " << errors;
    pm.addInstrumentation(std::make_unique<SnapshotInstrumentation>(
        module, stage.name, captureSnapshots, snapshots));
    if (failed(pm.run(module)))
      return failure();
  }
  return success();
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
  builder.addStage("schedule", "cuvil-cpu-schedule{vector-lanes=" +
                                   std::to_string(o.vectorLanes) + "}");
  builder.addStage(
      "bufferize",
      "one-shot-bufferize{bufferize-function-boundaries=1 "
      "function-boundary-type-conversion=identity-layout-map},"
      "cuvil-materialize-results,"
      "buffer-results-to-out-params{hoist-static-allocs=1},"
      "buffer-deallocation-pipeline,func.func(cuvil-plan-memory),"
      "convert-linalg-to-loops,"
      "scf-forall-to-parallel,canonicalize");
  std::string parallel =
      o.parallel ? "convert-scf-to-openmp,canonicalize," : "";
  builder.addStage("llvm", "convert-vector-to-scf{full-unroll=1}," + parallel +
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
