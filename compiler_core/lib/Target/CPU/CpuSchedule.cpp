//===- CpuSchedule.cpp - The cuvil-cpu-schedule pass ----------------===//
//
// GEMM code generation as a transform-dialect schedule built per module, so
// the tiling decisions are readable IR: each GEMM gets tile sizes that divide
// it where possible (static tiles vectorize whole) and peeled remainder tiles
// where not.
//
//===----------------------------------------------------------------------===//

#include "ConvColumns.h"
#include "GemmTiles.h"
#include "ImplicitConv.h"
#include "PadKernels.h"
#include "RowKernels.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
#include "cuvil/Target/CPU/Passes.h"

#include "cuvil/Pipelines/Pipelines.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUSCHEDULE
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::cpu;

int mlir::cuvil::hostVectorLanes() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 16;
  if (features.lookup("avx2") && features.lookup("fma"))
    return 8;
  return 4;
}

int mlir::cuvil::registerRowsFor(int vectorLanes) {
  // With AVX2 on a Zen 3, 8 rows spilled and shuffled their accumulators
  // through the stack every K step: 2048^3 at 0.38x OpenBLAS's speed,
  // 1024x512x256 at 0.38x; 4 rows ran them at 0.89x and 0.99x.
  return vectorLanes >= kAvx512Lanes ? 8 : 4;
}

namespace {
/// Replaces every `key` in `text` by `value`.
void substitute(std::string &text, llvm::StringRef key, llvm::StringRef value) {
  size_t at;
  while ((at = text.find(key.str())) != std::string::npos)
    text.replace(at, key.size(), value.str());
}

/// One register loop of a kernel whose extent is dynamic: the loop handle,
/// and the tile sizes that cut the ops of its last (partial) iteration into
/// static pieces (1 along the loop's dimension).
struct Remainder {
  std::string loop;
  SmallVector<int64_t> restTiles;
};

/// Peels each loop of `rests` (innermost first, so no peel invalidates a
/// handle still to be peeled): the full iterations keep the register tile,
/// which canonicalization then makes static; the ops (`opName`) of the last,
/// partial iteration are tiled by 1 along the loop's dimension. Every tile
/// is static afterwards, so each vectorizes without masks (the tail at
/// width 1).
std::string peelLoops(llvm::StringRef opName, ArrayRef<Remainder> rests) {
  std::string text;
  for (const Remainder &rest : rests) {
    std::string block = R"mlir(
    %@H@_for = transform.cast @HANDLE@ : !transform.any_op to !transform.op<"scf.for">
    %@H@_main, %@H@_rest = transform.loop.peel %@H@_for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    %@H@_ops = transform.structured.match ops{["@OP@"]} in %@H@_rest : (!transform.any_op) -> !transform.any_op
    %@H@_tiles, %@H@_loop = transform.structured.tile_using_for %@H@_ops tile_sizes [@SIZES@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir";
    // "%rl@ID@#1" peels into "%rl@ID@_1_main" and "%rl@ID@_1_rest".
    std::string name = rest.loop.substr(1);
    std::replace(name.begin(), name.end(), '#', '_');
    std::string sizes;
    for (int64_t size : rest.restTiles)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
    substitute(block, "@H@", name);
    substitute(block, "@HANDLE@", rest.loop);
    substitute(block, "@OP@", opName);
    substitute(block, "@SIZES@", sizes);
    text += block;
  }
  return text;
}

/// Vectorizes every op tagged `attr` = `id`; `handle` names the match. Runs
/// after every kernel is tiled and the peeled loops' full tiles are folded
/// static (see buildCpuSchedule).
std::string vectorizeTagged(llvm::StringRef handle, llvm::StringRef opName,
                            llvm::StringRef attr, int64_t id, bool extracts) {
  std::string block = R"mlir(
    %@HANDLE@ = transform.structured.match ops{["@OP@"]} attributes{@ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %@HANDLE@@ND@ : !transform.any_op
)mlir";
  substitute(block, "@HANDLE@", handle);
  substitute(block, "@OP@", opName);
  substitute(block, "@ATTR@", attr);
  substitute(block, "@ID@", std::to_string(id));
  substitute(block, "@ND@", extracts ? " {vectorize_nd_extract}" : "");
  return block;
}

/// The schedule of one tagged GEMM. Batched GEMMs get a leading batch
/// tile of 1 in the thread-level tiling and 0 (untiled) below it. With an
/// epilogue (the elementwise op consuming the GEMM, e.g. bias + GELU), the
/// epilogue is tiled across threads and the GEMM and its fill are fused
/// into each tile, so the epilogue reads the accumulator tile while it is
/// still in cache: one kernel, no intermediate GEMM result. When K is one
/// block, the fill is each register tile's initial accumulators, and with
/// an epilogue the GEMM's register tile is fused into the epilogue's, which
/// then computes on the accumulators in registers. With `threads` (a
/// convolution's GEMM whose tasks each compute their columns, see
/// ConvColumns.cpp), the tiling across threads goes there, a stage of its
/// own, and the block goes on from its result.
std::string gemmBlock(llvm::StringRef opName, int64_t id, bool batched,
                      bool epilogue, bool serial, const GemmTiles &tiles,
                      int64_t k, int64_t registerRows, int64_t registerCols,
                      const GemmRemainders &rest, std::string &deferred,
                      std::string *threads = nullptr) {
  // M or N ending in a partial tile (dynamic, or static without a dividing
  // tile): the register loops over rows / columns are peeled (see peelLoops)
  // and the tagged ops vectorized once all tiles are static.
  int64_t b0 = batched ? 1 : 0;
  auto peeled = [&](llvm::StringRef loops, llvm::StringRef op, int64_t dims) {
    SmallVector<Remainder> rests;
    auto cut = [&](int64_t dim) {
      SmallVector<int64_t> tiles(dims, 0);
      tiles[b0 + dim] = 1;
      return tiles;
    };
    if (rest.cols)
      rests.push_back({("%" + loops + "@ID@#1").str(), cut(1)});
    if (rest.rows)
      rests.push_back({("%" + loops + "@ID@#0").str(), cut(0)});
    return peelLoops(op, rests);
  };
  bool dynamic = rest.rows || rest.cols;
  bool fillInRegisters = !dynamic && !rest.batch && tiles.blockK >= k;
  std::string head;
  std::string block = R"mlir(
    %mm@ID@ = transform.structured.match ops{["@OP@"]} attributes{@GEMM_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %fill@ID@ = transform.get_producer_of_operand %mm@ID@[2] : (!transform.any_op) -> !transform.any_op
)mlir";
  if (epilogue)
    block += R"mlir(
    %epi@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@EPILOGUE_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %et@ID@, %forall@ID@ = transform.structured.tile_using_forall %epi@ID@ tile_sizes [@B1@@BM@, @BN@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %a@ID@, %fm@ID@ = transform.cuvil.fuse_into_containing_op %mm@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f@ID@, %fl@ID@ = transform.cuvil.fuse_into_containing_op %fill@ID@ into %fm@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir";
  else
    block += R"mlir(
    %a@ID@, %forall@ID@ = transform.structured.tile_using_forall %mm@ID@ tile_sizes [@B1@@BM@, @BN@, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f@ID@, %fl@ID@ = transform.cuvil.fuse_into_containing_op %fill@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir";
  if (threads) {
    // The thread tasks are this stage; the next finds the tiled ops by their
    // tags (tiling keeps them) once the columns are sliced per task.
    head = block + dropFusedOriginals("tsfuncs@ID@");
    block = R"mlir(
    %a@ID@ = transform.structured.match ops{["@OP@"]} attributes{@GEMM_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %f@ID@ = transform.get_producer_of_operand %a@ID@[2] : (!transform.any_op) -> !transform.any_op
    %tf@ID@ = transform.get_parent_op %a@ID@ {op_name = "scf.forall"} : (!transform.any_op) -> !transform.any_op
)mlir";
    if (epilogue)
      block += R"mlir(
    %et@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@EPILOGUE_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
)mlir";
    block += fuseColumnsIntoTasks(id, tiles.gatherRow);
  }
  if (epilogue)
    block += R"mlir(
    %ev@ID@, %el@ID@:2 = transform.structured.tile_using_for %et@ID@ tile_sizes [@B0@@RR@, @RC@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
)mlir";
  if (epilogue && dynamic) {
    block += peeled("el", "linalg.generic", b0 + 2);
    deferred += vectorizeTagged(
        "epiv" + std::to_string(id), "linalg.generic",
        CuvilDialect::EpilogueIdAttrHelper::getNameStr(), id, false);
  } else if (epilogue && fillInRegisters) {
    // The GEMM's register tile (and its fill) fused into the epilogue's:
    // the epilogue computes on the accumulators while they are in
    // registers, and the GEMM's result is never stored.
    block += R"mlir(
    %ga@ID@, %gl@ID@ = transform.cuvil.fuse_into_containing_op %a@ID@ into %el@ID@#1 : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %gf@ID@, %gfl@ID@ = transform.cuvil.fuse_into_containing_op %f@ID@ into %gl@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir" + vectorizedKSteps("ga@ID@", "gf@ID@", "c@ID@", batched, tiles.kStep) +
             "    transform.structured.vectorize %ev@ID@ : !transform.any_op\n";
  } else if (epilogue) {
    block += "    transform.structured.vectorize %ev@ID@ : !transform.any_op\n";
  }
  if (serial)
    block += "    transform.annotate %fl@ID@ \"@SERIAL_ATTR@\" : "
             "!transform.any_op\n";
  if (fillInRegisters) {
    // One K block: the fill becomes the accumulators' initial value (with an
    // epilogue, done above).
    if (!epilogue)
      block += registerTileWithFill("a@ID@", "c@ID@", batched, registerRows,
                                    registerCols, tiles.kStep);
  } else {
    block += R"mlir(
    %b@ID@, %kl@ID@@KLOOPS@ = transform.structured.tile_using_for %a@ID@ tile_sizes [@BB@0, 0, @BK@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op@KTYPES@)
    %c@ID@, %rl@ID@:3 = transform.structured.tile_using_for %b@ID@ tile_sizes [@B0@@RR@, @RC@, @KS@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
)mlir";
    if (dynamic) {
      block += peeled("rl", opName, b0 + 3);
      deferred += vectorizeTagged("mmv" + std::to_string(id), opName,
                                  CuvilDialect::GemmIdAttrHelper::getNameStr(),
                                  id, false);
    } else {
      block +=
          "    transform.structured.vectorize %c@ID@ : !transform.any_op\n";
    }
  }
  for (std::string *text : {&block, &head}) {
    substitute(*text, "@OP@", opName);
    substitute(*text, "@GEMM_ATTR@",
               mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr());
    substitute(*text, "@EPILOGUE_ATTR@",
               mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr());
    substitute(*text, "@SERIAL_ATTR@",
               mlir::cuvil::CuvilDialect::SerialAttrHelper::getNameStr());
    substitute(*text, "@ID@", std::to_string(id));
    substitute(*text, "@B1@", batched ? "1, " : "");
    substitute(*text, "@B0@", batched ? "0, " : "");
    // A dynamic batch's thread tile of 1 still has a dynamic size; a loop of
    // tile 1 over it makes the size static.
    substitute(*text, "@BB@", rest.batch ? "1, " : batched ? "0, " : "");
    substitute(*text, "@KLOOPS@", rest.batch ? ":2" : "");
    substitute(*text, "@KTYPES@", rest.batch ? ", !transform.any_op" : "");
    substitute(*text, "@BM@", std::to_string(tiles.blockM));
    substitute(*text, "@KS@", std::to_string(tiles.kStep));
    substitute(*text, "@BN@", std::to_string(tiles.blockN));
    substitute(*text, "@BK@", std::to_string(tiles.blockK));
    substitute(*text, "@RC@", std::to_string(registerCols));
    substitute(*text, "@RR@", std::to_string(registerRows));
  }
  if (threads)
    *threads += head;
  return block;
}

/// The schedule of one int4 GEMM (a `cuvil.dequantized_gemm` contraction
/// over loops (m, h, j, kg, kk), see QuantizedLowering.cpp). Like gemmBlock,
/// with the K block being one quantization group: the dequantization of the
/// group's rows for the tile's columns is fused into that K loop, so each
/// weight panel is decoded into a small float tile right before the
/// register kernel reads it. The register kernel (8 rows by two vectors,
/// one row of K per step) has its unit dimensions folded away first, which
/// leaves the broadcast multiply-add the outer-product GEMM lowers to.
std::string dequantGemmBlock(int64_t id, bool serial, const GemmTiles &tiles,
                             int64_t registerRows, int64_t registerCols,
                             bool partialRows, std::string &deferred) {
  std::string block = R"mlir(
    %qg@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@GEMM_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
    %qf@ID@ = transform.get_producer_of_operand %qg@ID@[2] : (!transform.any_op) -> !transform.any_op
    %qd@ID@ = transform.get_producer_of_operand %qg@ID@[1] : (!transform.any_op) -> !transform.any_op
    %a@ID@, %forall@ID@ = transform.structured.tile_using_forall %qg@ID@ tile_sizes [@BM@, 1, @BN@, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %f@ID@, %fl@ID@ = transform.cuvil.fuse_into_containing_op %qf@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %d@ID@, %dl@ID@ = transform.cuvil.fuse_into_containing_op %qd@ID@ into %forall@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %b@ID@, %kl@ID@ = transform.structured.tile_using_for %a@ID@ tile_sizes [0, 0, 0, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %dk@ID@, %dkl@ID@ = transform.cuvil.fuse_into_containing_op %d@ID@ into %kl@ID@ : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %dt@ID@, %dtl@ID@:2 = transform.structured.tile_using_for %dk@ID@ tile_sizes [0, 1, 0, @RC@] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %dt@ID@ : !transform.any_op
    %c@ID@, %rl@ID@:3 = transform.structured.tile_using_for %b@ID@ tile_sizes [@RR@, 0, @RC@, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
)mlir";
  if (serial)
    block += "    transform.annotate %fl@ID@ \"@SERIAL_ATTR@\" : "
             "!transform.any_op\n";
  if (partialRows) {
    block += peelLoops("linalg.generic", {{"%rl@ID@#0", {1, 0, 0, 0, 0}}});
    deferred += vectorizeTagged("qv" + std::to_string(id), "linalg.generic",
                                CuvilDialect::GemmIdAttrHelper::getNameStr(),
                                id, false);
  } else {
    block += R"mlir(
    transform.apply_patterns to %rl@ID@#2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
    } : !transform.any_op
    %cv@ID@ = transform.structured.match ops{["linalg.generic"]} in %rl@ID@#2 : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %cv@ID@ : !transform.any_op
)mlir";
  }
  substitute(block, "@GEMM_ATTR@",
             mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr());
  substitute(block, "@SERIAL_ATTR@",
             mlir::cuvil::CuvilDialect::SerialAttrHelper::getNameStr());
  substitute(block, "@ID@", std::to_string(id));
  substitute(block, "@BM@", std::to_string(tiles.blockM));
  substitute(block, "@BN@", std::to_string(tiles.blockN));
  substitute(block, "@RR@", std::to_string(registerRows));
  substitute(block, "@RC@", std::to_string(registerCols));
  substitute(block, "@RR@", std::to_string(registerRows));
  return block;
}

/// Schedule of one tagged elementwise kernel or row reduction: every outer
/// dimension tiled by 1, the innermost one vectorized. A kernel reading a
/// tensor at computed positions (a gather) needs the vectorizer's
/// n-D extract support: contiguous loads where it can prove them, gathers
/// elsewhere. It proves them only when the other indices are invariant, which
/// the `linalg.index` of a unit tile dimension is not until that dimension is
/// folded away: the tile's unit dimensions are dropped first (only inside its
/// innermost loop, so no other kernel changes) when its vectors are longer
/// than 1 (`innerExtent`; a tile of single elements would fold to 0-D).
std::string vectorBlock(int64_t id, ArrayRef<int64_t> tileSizes, bool extracts,
                        int64_t innerExtent, bool dynamicInner,
                        ArrayRef<int64_t> threads, std::string &deferred) {
  int64_t loops = llvm::count_if(tileSizes, [](int64_t t) { return t != 0; });
  std::string block = R"mlir(
    %v@ID@ = transform.structured.match ops{["linalg.generic"]} attributes{@VECTOR_ATTR@ = @ID@ : i64} in %root : (!transform.any_op) -> !transform.any_op
)mlir";
  if (loops == 0) {
    // Nothing to tile (a single row): vectorize the op itself.
    block += "    transform.structured.vectorize %v@ID@@ND@ : "
             "!transform.any_op\n";
  } else {
    // A large gather (a convolution's image-to-column copy) is first cut
    // into tasks across threads.
    std::string tiled = "v@ID@";
    if (!threads.empty()) {
      tiled = "vp@ID@";
      block += "    %vp@ID@, %vf@ID@ = transform.structured.tile_using_forall "
               "%v@ID@ tile_sizes [" +
               cpu::joinSizes(threads) +
               "] : (!transform.any_op) -> (!transform.any_op, "
               "!transform.any_op)\n";
    }
    block += cpu::tileUsingFor(tiled, "vt@ID@", "vl@ID@", tileSizes);
    std::string inner = "%vl@ID@#" + std::to_string(loops - 1);
    if (!dynamicInner && extracts && innerExtent > 1)
      block += "    transform.apply_patterns to " + inner + R"mlir( {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
    } : !transform.any_op
    %vg@ID@ = transform.structured.match ops{["linalg.generic"]} in )mlir" +
               inner + R"mlir( : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %vg@ID@@ND@ : !transform.any_op
)mlir";
    else if (!dynamicInner)
      block += "    transform.structured.vectorize %vt@ID@@ND@ : "
               "!transform.any_op\n";
    else {
      SmallVector<int64_t> restTiles(tileSizes.size(), 0);
      restTiles.back() = 1;
      block += peelLoops("linalg.generic", {{inner, restTiles}});
      deferred += vectorizeTagged(
          "vv" + std::to_string(id), "linalg.generic",
          mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr(), id,
          extracts);
    }
  }
  substitute(block, "@VECTOR_ATTR@",
             mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr());
  substitute(block, "@ID@", std::to_string(id));
  substitute(block, "@ND@", extracts ? " {vectorize_nd_extract}" : "");
  return block;
}

/// The longest row a row reduction reduces as one vector.
constexpr int64_t kWholeRowReduction = 1024;

/// Tile sizes that vectorize `generic` along its innermost loop, or empty:
/// all-parallel kernels, or reductions over the innermost loop only.
SmallVector<int64_t> vectorTiles(linalg::GenericOp generic, int64_t lanes) {
  if (generic.getNumResults() != 1 || generic.getNumLoops() == 0 ||
      generic->hasAttr(
          mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr()))
    return {};
  for (Value operand : generic->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || cpu::isBitPackedInVectors(type.getElementType()))
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
  // A reduction whose body only passes its accumulator on (the reduced
  // values folded away, as in `(x % 1).sum()`) has no combining op for the
  // vectorizer to recognize: it stays a scalar loop.
  if (innerReduction &&
      llvm::all_of(generic.getRegionOutputArgs().front().getUsers(),
                   [](Operation *user) { return isa<linalg::YieldOp>(user); }))
    return {};
  int64_t inner = ranges.back();
  SmallVector<int64_t> tiles(loops, 1);
  if (ShapedType::isDynamic(inner)) {
    // A run-time row length: vectors of `lanes` (a reduction accumulates
    // them one by one), the last partial one masked (see vectorBlock).
    tiles.back() = lanes;
  } else if (innerReduction) {
    // The whole row in one vector reduction; a longer row (softmax over
    // 2048 keys) in chunks of whole vectors that divide it, each reduced in
    // registers into the row's running value. Without such a chunk the row
    // stays a scalar loop (a maximum over 2048 ran at 5 ns per element).
    tiles.back() = 0;
    if (inner > kWholeRowReduction) {
      tiles.back() = largestDivisor(inner, {1024, 512, 256, 128});
      if (tiles.back() == 0 || tiles.back() % lanes != 0)
        return {};
    }
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

/// The transform module whose entry point applies `body` to `%root`.
std::string namedSequence(llvm::StringRef body) {
  return R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {)mlir" +
         body.str() + R"mlir(
    transform.yield
  }
}
)mlir";
}

} // namespace

std::string mlir::cuvil::buildCpuSchedule(ModuleOp module, int vectorLanes,
                                          bool fuseEpilogues, int registerRows,
                                          std::string *threadStage) {
  // Per GEMM: a cache tile on tensors (one per thread task), a K block, then
  // a register tile of `registerRows` rows (8) by two vector registers
  // accumulated over K one step at a time. Tile sizes divide a static GEMM
  // where they can so every tile is static; dynamic and odd sizes add peeled
  // remainder tiles.
  int64_t registerCols = 2 * vectorLanes;
  cpu::splitRemainderColumns(module, registerRows, registerCols, vectorLanes,
                             fuseEpilogues);
  std::string body, deferred, threads;
  int64_t id = 0;
  // Attention's two batched GEMMs and the softmax between them: one kernel
  // (see RowKernels.cpp), found before any GEMM takes an epilogue.
  SmallVector<cpu::BatchedGemmChain> chains =
      fuseEpilogues
          ? cpu::findBatchedGemmChains(
                module, registerRows, registerCols,
                [&](linalg::GenericOp op) -> std::optional<int64_t> {
                  SmallVector<int64_t> tiles = vectorTiles(op, vectorLanes);
                  if (tiles.empty())
                    return std::nullopt;
                  return tiles.back();
                })
          : SmallVector<cpu::BatchedGemmChain>();
  llvm::DenseSet<Operation *> chained;
  for (const cpu::BatchedGemmChain &chain : chains) {
    chained.insert(chain.first);
    chained.insert(chain.second);
    for (linalg::GenericOp op : chain.rowOps())
      chained.insert(op);
  }
  module.walk([&](linalg::LinalgOp op) {
    bool batched = isa<linalg::BatchMatmulOp>(op);
    if ((!batched && !isa<linalg::MatmulOp>(op)) || chained.contains(op))
      return;
    auto lhs = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto out = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
    if (!lhs || !out || !op.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
      return;
    unsigned rank = out.getRank();
    int64_t m = out.getDimSize(rank - 2), n = out.getDimSize(rank - 1);
    // Smaller than one register tile both ways: vectors gain nothing.
    if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(n) &&
        m < registerRows && n < registerCols)
      return;
    GemmRemainders rest;
    rest.batch = batched && out.isDynamicDim(0);
    // One row (a GEMV, batch-1 inference): a register tile one row by eight
    // registers sweeps each row of the right operand's block contiguously,
    // the other operand's element broadcast once per row.
    int64_t rows = registerRows, cols = registerCols;
    if (m == 1 && !ShapedType::isDynamic(n) && n >= 4 * registerCols) {
      rows = 1;
      cols = 4 * registerCols;
    } else if (!ShapedType::isDynamic(n) && n > registerCols &&
               n % registerCols != 0 && n % vectorLanes == 0) {
      // Columns in whole vectors but not in whole register tiles (a 28 x 28
      // image's 784 pixels): tiles one vector wide, rather than a remainder
      // done one column at a time.
      cols = vectorLanes;
    } else if (!ShapedType::isDynamic(n) && n <= vectorLanes &&
               !ShapedType::isDynamic(m) && m >= registerRows) {
      // One vector of columns or fewer (a split GEMM's rest, see
      // splitRemainderColumns; a classifier's 10 classes): a tile of
      // exactly that width.
      cols = n;
    }
    int64_t k = lhs.getDimSize(rank - 1);
    GemmTiles tiles =
        chooseTiles(m, n, k, rows, cols, rest,
                    matchPattern(op.getDpsInputs()[1], m_Constant()),
                    lhs.getElementTypeBitWidth() / 8);
    // A convolution's columns computed per thread task need the thread
    // stage (see ConvColumns.cpp).
    linalg::GenericOp columns =
        threadStage ? cpu::columnTasks(op, rows == registerRows, registerRows,
                                       cols, rest, tiles)
                    : nullptr;
    if (!columns && (!batched || out.getDimSize(0) == 1) && isWorthSharing(op))
      splitLoneTile(m, n, rows, cols, rest, tiles);
    if (!columns && !batched && !isSmallWork(op)) {
      balanceRowTiles(m, n, rows, rest, tiles);
      evenOutTasks(m, n, cols, rest, tiles);
    }
    auto tag = IntegerAttr::get(IntegerType::get(module.getContext(), 64), id);
    op->setAttr(mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr(), tag);
    if (columns)
      columns->setAttr(CuvilDialect::GemmIdAttrHelper::getNameStr(), tag);
    // A batched GEMM's epilogue (attention's scale) is fused like a plain
    // one's, under the batch tile of 1; not where the batch is dynamic (the
    // epilogue's tile would keep a dynamic size).
    linalg::GenericOp epilogue =
        rest.batch || !fuseEpilogues ? nullptr : cpu::epilogueOf(op);
    // An elementwise op combining two GEMMs (`min(a @ b, c @ d)`) is the
    // epilogue of the first only: the second GEMM is tiled on its own.
    if (epilogue &&
        (chained.contains(epilogue) ||
         epilogue->hasAttr(
             mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr())))
      epilogue = nullptr;
    if (epilogue)
      epilogue->setAttr(
          mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr(), tag);
    // Tiles peeled along the columns or a dynamic batch keep one K step.
    // Batched ones take K steps too: attention's 8 x 256x64 . 64x256 on AVX2
    // 0.95-0.96x the time of one step (alternated in one process); so do
    // rows ending in a partial tile, the remainder tile included: the
    // 512 x 7 x 7 convolution's pixel rows (49, in 4-row tiles) 0.89-0.97x
    // (Zen 3, four alternated runs).
    if (!rest.batch && !rest.cols)
      tiles.kStep = registerKStep(k, std::min(tiles.blockK, k), vectorLanes,
                                  rows * (cols / vectorLanes));
    body += gemmBlock(op->getName().getStringRef(), id, batched, (bool)epilogue,
                      isSmallWork(op), tiles, k, rows, cols, rest, deferred,
                      columns ? &threads : nullptr);
    ++id;
  });
  module.walk([&](linalg::GenericOp gemm) {
    if (!gemm->hasAttr(CuvilDialect::DequantizedGemmAttrHelper::getNameStr()))
      return;
    // Loops (m, h, j, kg, kk): halves of N must fill register tiles.
    SmallVector<int64_t> ranges = gemm.getStaticLoopRanges();
    if (ranges.size() != 5 || ShapedType::isDynamic(ranges[2]) ||
        ranges[2] % registerCols != 0)
      return;
    GemmRemainders rest;
    GemmTiles tiles = chooseTiles(ranges[0], ranges[2], ranges[3] * ranges[4],
                                  registerRows, registerCols, rest);
    gemm->setAttr(
        CuvilDialect::GemmIdAttrHelper::getNameStr(),
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), id));
    body += dequantGemmBlock(id, isSmallWork(gemm), tiles, registerRows,
                             registerCols, rest.rows, deferred);
    ++id;
  });
  module.walk([&](linalg::GenericOp gemm) {
    if (!threadStage ||
        !gemm->hasAttr(CuvilDialect::ImplicitConvAttrHelper::getNameStr()))
      return;
    // Loops (n, fo, fi, pb, j, l, c, kh, kw) over the image's planes [N,
    // C, plane], the weights packed by register rows (fi), the columns in
    // register tiles of j vectors of l lanes.
    SmallVector<int64_t> ranges = gemm.getStaticLoopRanges();
    auto planes = cast<RankedTensorType>(gemm.getDpsInputs()[0].getType());
    if (ranges.size() != 9 || ShapedType::isDynamicShape(ranges) ||
        !planes.hasStaticShape())
      return;
    int64_t rows = ranges[2], cols = ranges[4] * ranges[5];
    GemmTiles tiles = cpu::implicitConvTiles(
        ranges[0], ranges[1] * rows, ranges[3] * cols,
        ranges[6] * planes.getElementTypeBitWidth() / 8,
        planes.getDimSize(2) - ranges[3] * cols, rows, cols);
    if (!tiles.blockN)
      return;
    gemm->setAttr(
        CuvilDialect::GemmIdAttrHelper::getNameStr(),
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), id));
    threads += cpu::implicitConvTasks(id, tiles, rows, cols, ranges[6]);
    body += cpu::implicitConvKernelUnroll(id, ranges[7], ranges[8]) +
            vectorizeTagged("icm" + std::to_string(id), "linalg.generic",
                            CuvilDialect::GemmIdAttrHelper::getNameStr(), id,
                            false);
    ++id;
  });
  // Row-wise kernels: each tagged op gets its vector schedule; chains of
  // them are first fused into row-blocked loops (see RowKernels.cpp), whose
  // fused copies those vector schedules then match.
  std::string vectorBody;
  llvm::DenseMap<int64_t, int64_t> innerTiles;
  module.walk([&](linalg::GenericOp generic) {
    if (generic->hasAttr(CuvilDialect::GemmIdAttrHelper::getNameStr()))
      return;
    SmallVector<int64_t> tiles = vectorTiles(generic, vectorLanes);
    if (tiles.empty())
      return;
    generic->setAttr(
        mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr(),
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), id));
    bool extracts = !generic.getBody()->getOps<tensor::ExtractOp>().empty();
    // A dynamic innermost extent: the last, partial vector is peeled off.
    int64_t inner = generic.getStaticLoopRanges().back();
    bool dynamicInner = ShapedType::isDynamic(inner);
    int64_t innerExtent = tiles.back() ? tiles.back() : inner;
    innerTiles[id] = tiles.back();
    // Gathers are no row ops (RowKernels.cpp), so nothing else threads
    // them; the tasks split a dimension the vectors do not run along. From
    // 2^18 elements: the zoo CNN's 7x7 stem (37632 columns in 8 tasks of
    // two output rows) ran slower split.
    SmallVector<int64_t> threads;
    if (extracts && generic.getNumReductionLoops() == 0) {
      threads = cpu::threadTiles(generic.getStaticLoopRanges(),
                                 /*anyDimension=*/true,
                                 /*minElements=*/int64_t(1) << 18);
      if (!threads.empty() && threads.back() != 0)
        threads.clear();
    }
    vectorBody += vectorBlock(id, tiles, extracts, innerExtent, dynamicInner,
                              threads, deferred);
    ++id;
  });
  body +=
      cpu::batchedGemmChainSchedule(chains, registerRows, registerCols, id) +
      cpu::rowGroupSchedule(module, vectorLanes, innerTiles, chains) +
      cpu::threadedTransposes(module, vectorLanes, id) + vectorBody;
  // Kernels with dynamic extents are vectorized last, once canonicalization
  // has made the peeled loops' full tiles static.
  if (!deferred.empty())
    body += R"mlir(
    %peeled = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %peeled {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
)mlir" + deferred;
  if (threadStage)
    *threadStage = threads.empty() ? "" : namedSequence(threads);
  return namedSequence(body + R"mlir(
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
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16")mlir" +
                       // AVX2's 8 x 8 blocks (threadedTransposes): x86vector's
                       // shuffles and blends.
                       std::string(vectorLanes == kAvx2Lanes
                                       ? " avx2_lowering_strategy = true"
                                       : "") +
                       R"mlir(
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
)mlir");
}

namespace {
struct CpuSchedulePass
    : public mlir::cuvil::impl::CpuScheduleBase<CpuSchedulePass> {
  using CpuScheduleBase::CpuScheduleBase;

  /// Parses and applies one transform module to `module`.
  LogicalResult applySchedule(ModuleOp module, llvm::StringRef text) {
    OwningOpRef<ModuleOp> scheduleModule =
        parseSourceString<ModuleOp>(text, ParserConfig(&getContext()));
    if (!scheduleModule)
      return module.emitError("internal error: the generated GEMM schedule "
                              "does not parse");
    Operation *entry = transform::detail::findTransformEntryPoint(
        module, *scheduleModule, "__transform_main");
    if (!entry)
      return failure();
    return transform::applyTransformNamedSequence(
        module, entry, *scheduleModule, transform::TransformOptions());
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int lanes = vectorLanes > 0 ? (int)vectorLanes : hostVectorLanes();
    int rows = registerRows != 0 ? (int)registerRows : registerRowsFor(lanes);
    // Register tiles must divide the cache tiles (64 and 32 rows).
    if (rows <= 0 || 32 % rows != 0) {
      module.emitError() << "cuvil-cpu-schedule: register-rows=" << rows
                         << " does not divide the cache tiles; use 1, 2, 4, "
                            "8, 16 or 32";
      return signalPassFailure();
    }
    bool changed = cpu::padsAsFilledCopies(module);
    std::string threadStage;
    std::string schedule =
        buildCpuSchedule(module, lanes, fuseEpilogues, rows, &threadStage);
    if (printSchedule)
      llvm::errs() << threadStage << schedule;
    bool any = false;
    module.walk([&](Operation *op) {
      if (op->hasAttr(
              mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr()) ||
          op->hasAttr(
              mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr()))
        any = true;
    });
    if (!any) {
      // Nothing to schedule; a rewritten padding still changed the IR.
      if (!changed)
        markAllAnalysesPreserved();
      return;
    }
    // Convolutions' GEMMs are cut into thread tasks first, so that their
    // columns can be sliced per task (see ConvColumns.cpp).
    if (!threadStage.empty()) {
      if (failed(applySchedule(module, threadStage)))
        return signalPassFailure();
      cpu::sliceColumnsBeforeCollapse(module);
      cpu::implicitConvRegisterContractions(module);
    }
    if (failed(applySchedule(module, schedule)))
      return signalPassFailure();
    cpu::readRowsFromBlocks(module);
    cpu::hoistInvariantTensorReads(module);
    cpu::reduceAsTrees(module);
    cpu::vectorizeFills(module, lanes);
    // The tags only link schedule and payload; drop them afterwards.
    module.walk([](Operation *op) {
      op->removeAttr(mlir::cuvil::CuvilDialect::GemmIdAttrHelper::getNameStr());
      op->removeAttr(
          mlir::cuvil::CuvilDialect::EpilogueIdAttrHelper::getNameStr());
      op->removeAttr(
          mlir::cuvil::CuvilDialect::VectorIdAttrHelper::getNameStr());
      op->removeAttr(
          mlir::cuvil::CuvilDialect::DequantizedGemmAttrHelper::getNameStr());
      op->removeAttr(CuvilDialect::ImplicitConvAttrHelper::getNameStr());
    });
  }
};
} // namespace

void mlir::cuvil::registerCpuCodegenPasses() {
  static std::once_flag once;
  std::call_once(once, [] { registerCuvilCpuPasses(); });
}

void mlir::cuvil::addCpuSchedule(PipelineBuilder &p, int vectorLanes,
                                 bool fuseEpilogues, int registerRows,
                                 bool unaliasRows) {
  using Need = PipelineBuilder::Need;
  // Both passes' register rows: the implicit convolutions' packed filters
  // are the schedule's register tiles.
  std::string lanesAndRows =
      "vector-lanes=" + std::to_string(vectorLanes) +
      (registerRows == 0 ? ""
                         : " register-rows=" + std::to_string(registerRows));
  p.add(Phase::Schedule, "cuvil-tag-kernels", "", "func.func", Need::Optional);
  p.add(Phase::Schedule, "cuvil-cpu-conv-to-gemm", lanesAndRows, "func.func");
  if (unaliasRows)
    p.add(Phase::Schedule, "cuvil-cpu-unalias-gemm-rows", "", "func.func");
  p.add(Phase::Schedule, "cuvil-cpu-schedule",
        lanesAndRows + (fuseEpilogues ? "" : " fuse-epilogues=0"));
}
