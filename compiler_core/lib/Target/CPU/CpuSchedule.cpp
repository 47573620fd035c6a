//===- CpuSchedule.cpp - The cuvil-cpu-schedule pass ----------------===//
//
// GEMM code generation as a transform-dialect schedule built per module, so
// the tiling decisions are readable IR and each GEMM gets tile sizes that
// divide it (keeping every tile static, hence vectorizable).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUSCHEDULE
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

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

/// Largest of `candidates` dividing `size`, or 0.
static int64_t largestDivisor(int64_t size, ArrayRef<int64_t> candidates) {
  for (int64_t c : candidates)
    if (c > 0 && size % c == 0)
      return c;
  return 0;
}

namespace {
/// Replaces every `key` in `text` by `value`.
void substitute(std::string &text, llvm::StringRef key, llvm::StringRef value) {
  size_t at;
  while ((at = text.find(key.str())) != std::string::npos)
    text.replace(at, key.size(), value.str());
}

/// Tile sizes of one GEMM (batch 0 for a plain matmul).
struct GemmTiles {
  int64_t blockM, blockN, blockK;
};

/// Chooses tiles dividing (m, n, k): whole dimensions when they fit one
/// cache tile, else the largest candidate dividing them.
std::optional<GemmTiles> chooseTiles(int64_t m, int64_t n, int64_t k,
                                     int64_t registerCols) {
  int64_t blockM =
      (m <= 64 && m % 8 == 0) ? m : largestDivisor(m, {64, 32, 16, 8});
  int64_t blockN = (n <= 8 * registerCols && n % registerCols == 0)
                       ? n
                       : largestDivisor(n, {8 * registerCols, 4 * registerCols,
                                            2 * registerCols, registerCols});
  if (!blockM || !blockN)
    return std::nullopt;
  int64_t blockK = largestDivisor(k, {128, 64, 32});
  return GemmTiles{blockM, blockN, blockK ? blockK : k};
}

/// The schedule of one tagged GEMM. Batched GEMMs get a leading batch
/// tile of 1 in the thread-level tiling and 0 (untiled) below it. With an
/// epilogue (the elementwise op consuming the GEMM, e.g. bias + GELU), the
/// epilogue is tiled across threads and the GEMM and its fill are fused
/// into each tile, so the epilogue reads the accumulator tile while it is
/// still in cache: one kernel, no intermediate GEMM result.
std::string gemmBlock(llvm::StringRef opName, int64_t id, bool batched,
                      bool epilogue, const GemmTiles &tiles,
                      int64_t registerCols) {
  std::string block = R"mlir(
    %mm@ID@ = transform.structured.match ops{["@OP@"]} attributes{@GEMM_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %fill@ID@ = transform.get_producer_of_operand %mm@ID@[2] : (!transform.any_op) -> !transform.any_op
)mlir";
  if (epilogue)
    block += R"mlir(
    %epi@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@EPILOGUE_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %et@ID@, %forall@ID@ = transform.structured.tile_using_forall %epi@ID@ tile_sizes [@BM@, @BN@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %a@ID@, %fm@ID@ = transform.structured.fuse_into_containing_op %mm@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f@ID@, %fl@ID@ = transform.structured.fuse_into_containing_op %fill@ID@ into %fm@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %ev@ID@, %el@ID@:2 = transform.structured.tile_using_for %et@ID@ tile_sizes [8, @RC@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %ev@ID@ : !transform.any_op
)mlir";
  else
    block += R"mlir(
    %a@ID@, %forall@ID@ = transform.structured.tile_using_forall %mm@ID@ tile_sizes [@B1@@BM@, @BN@, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f@ID@, %fl@ID@ = transform.structured.fuse_into_containing_op %fill@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir";
  block += R"mlir(
    %b@ID@, %kl@ID@ = transform.structured.tile_using_for %a@ID@ tile_sizes [@B0@0, 0, @BK@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %c@ID@, %rl@ID@:3 = transform.structured.tile_using_for %b@ID@ tile_sizes [@B0@8, @RC@, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %c@ID@ : !transform.any_op
)mlir";
  substitute(block, "@OP@", opName);
  substitute(block, "@GEMM_ATTR@",
             mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr());
  substitute(block, "@EPILOGUE_ATTR@",
             mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr());
  substitute(block, "@ID@", std::to_string(id));
  substitute(block, "@B1@", batched ? "1, " : "");
  substitute(block, "@B0@", batched ? "0, " : "");
  substitute(block, "@BM@", std::to_string(tiles.blockM));
  substitute(block, "@BN@", std::to_string(tiles.blockN));
  substitute(block, "@BK@", std::to_string(tiles.blockK));
  substitute(block, "@RC@", std::to_string(registerCols));
  return block;
}

/// The elementwise op that is the only user of a 2-D GEMM and computes on
/// its result element by element (identity access), if any.
linalg::GenericOp epilogueOf(linalg::LinalgOp gemm) {
  Value result = gemm->getResult(0);
  if (!result.hasOneUse())
    return {};
  auto generic = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!generic || generic.getNumResults() != 1 || generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      generic.getResult(0).getType() != result.getType())
    return {};
  OpOperand &use = *result.getUses().begin();
  if (!generic.isDpsInput(&use) ||
      !generic.getMatchingIndexingMap(&use).isIdentity())
    return {};
  return generic;
}
/// Inner tile for vectorizing an innermost dimension of `size`: whole
/// registers when they divide it, the whole dimension when it is short.
int64_t innerVectorTile(int64_t size, int64_t lanes) {
  if (size % lanes == 0)
    return lanes;
  return size <= 4 * lanes ? size : 0;
}

/// Schedule of one tagged elementwise kernel or row reduction: every outer
/// dimension tiled by 1, the innermost one vectorized. A kernel reading a
/// tensor at computed positions (a gather) needs the vectorizer's
/// n-D extract support: contiguous loads where it can prove them, gathers
/// elsewhere.
std::string vectorBlock(int64_t id, ArrayRef<int64_t> tileSizes,
                        bool extracts) {
  std::string sizes;
  for (int64_t size : tileSizes)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
  int64_t loops = llvm::count_if(tileSizes, [](int64_t t) { return t != 0; });
  std::string loopTypes;
  for (int64_t i = 0; i < loops; ++i)
    loopTypes += ", !transform.any_op";
  std::string block = R"mlir(
    %v@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@VECTOR_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %vt@ID@, %vl@ID@:@LOOPS@ = transform.structured.tile_using_for %v@ID@ tile_sizes [@SIZES@] : (!transform.any_op) -> (!transform.any_op@TYPES@)
    transform.structured.vectorize %vt@ID@@ND@ : !transform.any_op
)mlir";
  substitute(block, "@VECTOR_ATTR@",
             mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr());
  substitute(block, "@ID@", std::to_string(id));
  substitute(block, "@SIZES@", sizes);
  substitute(block, "@LOOPS@", std::to_string(loops));
  substitute(block, "@TYPES@", loopTypes);
  if (loops == 0) {
    // Nothing to tile (a single row): vectorize the op itself.
    block = R"mlir(
    %v@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@VECTOR_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %v@ID@@ND@ : !transform.any_op
)mlir";
    substitute(block, "@VECTOR_ATTR@",
               mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr());
    substitute(block, "@ID@", std::to_string(id));
  }
  substitute(block, "@ND@", extracts ? " {vectorize_nd_extract}" : "");
  return block;
}

/// Tile sizes that vectorize `generic` along its innermost loop, or empty:
/// all-parallel kernels, or reductions over the innermost loop only.
SmallVector<int64_t> vectorTiles(linalg::GenericOp generic, int64_t lanes) {
  if (generic.getNumResults() != 1 || generic.getNumLoops() == 0 ||
      generic->hasAttr(
          mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr()))
    return {};
  for (Value operand : generic->getOperands()) {
    // Vectors of i1 are bit-packed in memory while tensors of i1 are stored
    // a byte per element: boolean kernels stay scalar.
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape() || type.getElementType().isInteger(1))
      return {};
  }
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  unsigned loops = ranges.size();
  unsigned reductions = generic.getNumReductionLoops();
  bool innerReduction =
      reductions == 1 && generic.getIteratorTypesArray()[loops - 1] ==
                             utils::IteratorType::reduction;
  if (reductions != 0 && !innerReduction)
    return {};
  int64_t inner = ranges.back();
  SmallVector<int64_t> tiles(loops, 1);
  if (innerReduction) {
    if (inner > 1024)
      return {};
    tiles.back() = 0; // the whole row in one vector reduction
  } else {
    int64_t tile = innerVectorTile(inner, lanes);
    if (!tile)
      return {};
    tiles.back() = tile;
  }
  // Dimensions of size 1 need no loop.
  for (unsigned d = 0; d + 1 < loops; ++d)
    if (ranges[d] == 1)
      tiles[d] = 0;
  if (!innerReduction && tiles.back() == inner)
    tiles.back() = 0;
  return tiles;
}

} // namespace

std::string mlir::cuvil::buildCpuSchedule(ModuleOp module, int vectorLanes,
                                          bool fuseEpilogues) {
  // Per GEMM: a cache tile on tensors (one per thread task), a K block, then
  // a register tile of 8 rows by two vector registers accumulated over K one
  // step at a time. Tile sizes divide the GEMM so every tile is static.
  int64_t registerCols = 2 * vectorLanes;
  std::string body;
  int64_t id = 0;
  module.walk([&](linalg::LinalgOp op) {
    bool batched = isa<linalg::BatchMatmulOp>(op);
    if (!batched && !isa<linalg::MatmulOp>(op))
      return;
    auto lhs = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto out = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
    if (!lhs || !out || !lhs.hasStaticShape() || !out.hasStaticShape() ||
        !op.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
      return;
    unsigned rank = out.getRank();
    std::optional<GemmTiles> tiles =
        chooseTiles(out.getDimSize(rank - 2), out.getDimSize(rank - 1),
                    lhs.getDimSize(rank - 1), registerCols);
    if (!tiles)
      return;
    auto tag = IntegerAttr::get(IntegerType::get(module.getContext(), 64), id);
    op->setAttr(mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr(), tag);
    linalg::GenericOp epilogue =
        batched || !fuseEpilogues ? nullptr : epilogueOf(op);
    if (epilogue)
      epilogue->setAttr(
          mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr(), tag);
    body += gemmBlock(op->getName().getStringRef(), id, batched, (bool)epilogue,
                      *tiles, registerCols);
    ++id;
  });
  module.walk([&](linalg::GenericOp generic) {
    SmallVector<int64_t> tiles = vectorTiles(generic, vectorLanes);
    if (tiles.empty())
      return;
    generic->setAttr(
        mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr(),
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), id));
    bool extracts = !generic.getBody()->getOps<tensor::ExtractOp>().empty();
    body += vectorBlock(id, tiles, extracts);
    ++id;
  });
  return R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {)mlir" +
         body + R"mlir(
    %vf = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %vf {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op
    transform.apply_patterns to %vf {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
)mlir";
}

namespace {
struct CpuSchedulePass : public cuvil::impl::CpuScheduleBase<CpuSchedulePass> {
  using CpuScheduleBase::CpuScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int lanes = vectorLanes > 0 ? (int)vectorLanes : hostVectorLanes();
    std::string schedule = buildCpuSchedule(module, lanes, fuseEpilogues);
    if (printSchedule)
      llvm::errs() << schedule;
    bool any = false;
    module.walk([&](Operation *op) {
      if (op->hasAttr(
              mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr()) ||
          op->hasAttr(
              mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr()))
        any = true;
    });
    if (!any)
      return markAllAnalysesPreserved();
    OwningOpRef<ModuleOp> scheduleModule =
        parseSourceString<ModuleOp>(schedule, ParserConfig(&getContext()));
    if (!scheduleModule) {
      module.emitError("internal error: the generated GEMM schedule does not "
                       "parse");
      return signalPassFailure();
    }
    Operation *entry = transform::detail::findTransformEntryPoint(
        module, *scheduleModule, "__transform_main");
    if (!entry ||
        failed(transform::applyTransformNamedSequence(
            module, entry, *scheduleModule, transform::TransformOptions())))
      return signalPassFailure();
    // The tags only link schedule and payload; drop them afterwards.
    module.walk([](Operation *op) {
      op->removeAttr(mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr());
      op->removeAttr(
          mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr());
      op->removeAttr(
          mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr());
    });
  }
};
} // namespace
