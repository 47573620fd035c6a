//===- Pipelines.cpp - Cuvil pipelines and per-pass snapshots -------------===//
//
// Every caller (CLI, Python, Workbench, cuvil-opt) gets its pass order from
// here. Pipelines are textual pass pipelines plus transform-dialect
// schedules, so a snapshot's pass name is the flag that reproduces it.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Pipelines/Pipelines.h"

#include "cuvil/Conversion/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <mutex>

using namespace mlir;
using namespace mlir::cuvil;

int mlir::cuvil::hostVectorLanes() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 16;
  if (features.lookup("avx2") && features.lookup("fma"))
    return 8;
  return 4;
}

void mlir::cuvil::registerCuvilPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerCuvilConversionPasses();
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
  stageList.push_back({std::move(name), std::move(passes), nullptr});
  return *this;
}

PipelineBuilder &PipelineBuilder::addScheduleStage(
    std::string name, std::function<std::string(ModuleOp)> schedule) {
  stageList.push_back({std::move(name), "", std::move(schedule)});
  return *this;
}

std::string PipelineBuilder::describe() const {
  std::string text;
  for (const Stage &stage : stageList) {
    if (!text.empty())
      text += ",\n";
    if (stage.schedule)
      text += "  // stage " + stage.name + ": transform schedule";
    else
      text += "  // stage " + stage.name + "\n  " + stage.passes;
  }
  return "builtin.module(\n" + text + "\n)";
}

static LogicalResult runSchedule(ModuleOp module, const std::string &schedule,
                                 const std::string &stage, bool captureIR,
                                 std::vector<PassSnapshot> &snapshots) {
  MLIRContext *ctx = module.getContext();
  OwningOpRef<ModuleOp> scheduleModule =
      parseSourceString<ModuleOp>(schedule, ParserConfig(ctx));
  if (!scheduleModule)
    return module.emitError("internal error: the CPU schedule does not parse");
  Operation *entry = transform::detail::findTransformEntryPoint(
      module, *scheduleModule, "__transform_main");
  if (!entry)
    return module.emitError("internal error: no schedule entry point");
  auto start = Clock::now();
  OperationFingerPrint before(module);
  LogicalResult result = transform::applyTransformNamedSequence(
      module, entry, *scheduleModule, transform::TransformOptions());
  PassSnapshot snap{"cuvil-cpu-schedule", stage,
                    std::chrono::duration<double, std::milli>(Clock::now() -
                                                              start)
                        .count(),
                    !(OperationFingerPrint(module) == before), ""};
  if (captureIR) {
    llvm::raw_string_ostream os(snap.ir);
    module->print(os, OpPrintingFlags().enableDebugInfo(true, true));
  }
  snapshots.push_back(std::move(snap));
  return result;
}

LogicalResult PipelineBuilder::run(ModuleOp module, bool captureSnapshots,
                                   std::vector<PassSnapshot> &snapshots,
                                   size_t first, size_t last) const {
  MLIRContext *ctx = module.getContext();
  registerCuvilPasses();
  last = std::min(last, stageList.size());
  for (size_t i = first; i < last; ++i) {
    const Stage &stage = stageList[i];
    if (stage.schedule) {
      if (failed(runSchedule(module, stage.schedule(module), stage.name,
                             captureSnapshots, snapshots)))
        return failure();
      continue;
    }
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

/// Largest of `candidates` dividing `size`, or 0.
static int64_t largestDivisor(int64_t size, ArrayRef<int64_t> candidates) {
  for (int64_t c : candidates)
    if (c > 0 && size % c == 0)
      return c;
  return 0;
}

std::string mlir::cuvil::cpuMatmulSchedule(ModuleOp module, int vectorLanes) {
  // Per GEMM: a cache tile on tensors (one per thread task), a K block, then
  // a register tile of 8 rows by two vector registers accumulated over K one
  // step at a time. Tile sizes divide the GEMM so every tile is static.
  int64_t registerCols = 2 * vectorLanes;
  std::string body;
  int64_t id = 0;
  module.walk([&](linalg::MatmulOp matmul) {
    auto lhs = dyn_cast<RankedTensorType>(matmul.getInputs()[0].getType());
    auto out = dyn_cast<RankedTensorType>(matmul.getOutputs()[0].getType());
    if (!lhs || !out || !lhs.hasStaticShape() || !out.hasStaticShape() ||
        !matmul.getOutputs()[0].getDefiningOp<linalg::FillOp>())
      return;
    int64_t m = out.getDimSize(0), n = out.getDimSize(1),
            k = lhs.getDimSize(1);
    int64_t blockM = largestDivisor(m, {64, 32, 16, 8});
    int64_t blockN = largestDivisor(
        n, {8 * registerCols, 4 * registerCols, 2 * registerCols,
            registerCols});
    if (!blockM || !blockN)
      return;
    int64_t blockK = largestDivisor(k, {128, 64, 32}) ? largestDivisor(k, {128, 64, 32}) : k;
    matmul->setAttr("cuvil.gemm_id", IntegerAttr::get(
                                         IntegerType::get(module.getContext(), 64), id));
    std::string block = R"mlir(
    %mm@ID@ = transform.structured.match ops{["linalg.matmul"]} attributes{cuvil.gemm_id = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %fill@ID@ = transform.get_producer_of_operand %mm@ID@[2] : (!transform.any_op) -> !transform.any_op
    %a@ID@, %forall@ID@ = transform.structured.tile_using_forall %mm@ID@ tile_sizes [@BM@, @BN@, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f@ID@, %fl@ID@ = transform.structured.fuse_into_containing_op %fill@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %b@ID@, %kl@ID@ = transform.structured.tile_using_for %a@ID@ tile_sizes [0, 0, @BK@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %c@ID@, %rl@ID@:3 = transform.structured.tile_using_for %b@ID@ tile_sizes [8, @RC@, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %c@ID@ : !transform.any_op
)mlir";
    auto substitute = [&](llvm::StringRef key, int64_t value) {
      size_t at;
      while ((at = block.find(key.str())) != std::string::npos)
        block.replace(at, key.size(), std::to_string(value));
    };
    substitute("@ID@", id);
    substitute("@BM@", blockM);
    substitute("@BN@", blockN);
    substitute("@BK@", blockK);
    substitute("@RC@", registerCols);
    body += block;
    ++id;
  });
  return R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {)mlir" +
         body + R"mlir(
    %vf = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %vf {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %vf : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op
    transform.apply_patterns to %vf {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
)mlir";
}

PipelineBuilder mlir::cuvil::buildCpuPipeline(const CpuPipelineOptions &o) {
  PipelineBuilder builder;
  builder.addStage("cuvil", "canonicalize,cse");
  builder.addStage("linalg", "convert-cuvil-to-linalg,canonicalize,cse");
  if (o.enableFusion)
    builder.addStage("fusion", "linalg-fuse-elementwise-ops,canonicalize,cse");
  int lanes = o.vectorLanes;
  builder.addScheduleStage("schedule", [lanes](ModuleOp module) {
    return cpuMatmulSchedule(module, lanes);
  });
  builder.addStage(
      "bufferize",
      "one-shot-bufferize{bufferize-function-boundaries=1 "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-results-to-out-params{hoist-static-allocs=1},"
      "buffer-deallocation-pipeline,convert-linalg-to-loops,"
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
};
} // namespace

void mlir::cuvil::registerCuvilPipelines() {
  // Schedules are not passes, so cuvil-opt exposes the stages without the
  // transform schedule; the full pipeline is driven by PipelineBuilder::run.
  PassPipelineRegistration<CpuPipelineCliOptions>(
      "cuvil-cpu-pipeline",
      "Cuvil's CPU pipeline from cuvil ops to the LLVM dialect (without the "
      "GEMM schedule, which runs only through the Cuvil driver)",
      [](OpPassManager &pm, const CpuPipelineCliOptions &cli) {
        CpuPipelineOptions options;
        options.enableFusion = cli.enableFusion;
        options.parallel = false;
        PipelineBuilder pipeline = buildCpuPipeline(options);
        for (const PipelineBuilder::Stage &stage : pipeline.stages()) {
          if (!stage.passes.empty())
            (void)parsePassPipeline(stage.passes, pm);
          if (stage.name == cli.upTo)
            break;
        }
      });
}
