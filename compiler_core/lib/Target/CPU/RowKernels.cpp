//===- RowKernels.cpp - Row-wise kernels of the CPU schedule --------------===//
//
// A softmax is four kernels when each op is scheduled on its own: the row
// maximum, the exponentials, their row sum and the division, each a pass
// over the whole tensor (8 x 256 x 256 scores are 2 MiB, out of L2) and
// each on one thread. A row group fuses such a chain into one loop over
// blocks of rows: the block's maximum, exponentials, sum and quotients are
// computed one after the other while its rows are in L1, and the blocks are
// shared between threads when the chain is large. Layer norms (mean,
// centred values, variance, normalization) form the same kind of chain.
//
// Ops join a group when every op in it runs over the same static iteration
// space (rows, innermost dimension last), each is either elementwise
// (identity output) or a reduction over the innermost dimension, and each
// value passed between them is read row for row (a reduced value broadcast
// along its row). An op whose result is also used outside the group stays
// out of it.
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"

#include "GemmTiles.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::cuvil;

//===----------------------------------------------------------------------===//
// Unit expansions
//===----------------------------------------------------------------------===//

/// For each dimension of `expand`'s result, the source dimension it is, or
/// -1 for a unit dimension the expansion adds. Empty unless the expansion
/// only adds unit dimensions (static shapes).
static SmallVector<int64_t> unitExpansionSources(tensor::ExpandShapeOp expand) {
  RankedTensorType result = expand.getResultType();
  if (!result.hasStaticShape() || !expand.getSrcType().hasStaticShape())
    return {};
  SmallVector<int64_t> sources(result.getRank(), -1);
  for (auto [srcDim, group] :
       llvm::enumerate(expand.getReassociationIndices())) {
    // The one dimension of the group that is the source's; the rest are 1.
    std::optional<int64_t> kept;
    for (int64_t d : group)
      if (result.getDimSize(d) != 1) {
        if (kept)
          return {};
        kept = d;
      }
    sources[kept.value_or(group.front())] = srcDim;
  }
  return sources;
}

/// The map `generic` would read `operand` with if it read the source of the
/// unit expansion defining it, or nothing when no such expansion defines it.
static std::optional<AffineMap> mapThroughExpansion(linalg::GenericOp generic,
                                                    OpOperand &operand) {
  auto expand = operand.get().getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return std::nullopt;
  SmallVector<int64_t> sources = unitExpansionSources(expand);
  if (sources.empty())
    return std::nullopt;
  // The unit dimensions are read at 0 whatever the map says: drop them.
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  SmallVector<AffineExpr> kept;
  for (auto [d, source] : llvm::enumerate(sources))
    if (source >= 0)
      kept.push_back(map.getResult(d));
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), kept,
                        generic.getContext());
}

/// Makes `generic` read the source of the unit expansion defining
/// `operand` (see mapThroughExpansion); a dead expansion is erased.
static void readThroughExpansion(linalg::GenericOp generic,
                                 OpOperand &operand) {
  std::optional<AffineMap> map = mapThroughExpansion(generic, operand);
  if (!map)
    return;
  auto expand = operand.get().getDefiningOp<tensor::ExpandShapeOp>();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  maps[operand.getOperandNumber()] = *map;
  operand.set(expand.getSrc());
  generic.setIndexingMapsAttr(
      Builder(generic.getContext()).getAffineMapArrayAttr(maps));
  if (expand->use_empty())
    expand->erase();
}

//===----------------------------------------------------------------------===//
// Row groups
//===----------------------------------------------------------------------===//

namespace {

/// Bytes of one block of rows of a tensor in the chain: the block's
/// intermediates stay in L1 between the chain's ops.
constexpr int64_t kBlockBytes = 16 * 1024;

/// The number of elements of static loop ranges, or nothing when one is
/// dynamic or the product overflows (a model declaring a dimension of 2^62:
/// it cannot run, and its sizes must not wrap around into a division).
std::optional<int64_t> elementsOf(ArrayRef<int64_t> ranges) {
  int64_t elements = 1;
  for (int64_t r : ranges) {
    std::optional<int64_t> product =
        ShapedType::isDynamic(r) ? std::nullopt : llvm::checkedMul(elements, r);
    if (!product || *product > (int64_t(1) << 48))
      return std::nullopt;
    elements = *product;
  }
  return elements;
}

/// The vector id of an op tagged for the vector schedule, or -1.
int64_t vectorId(Operation *op) {
  auto id = op->getAttrOfType<IntegerAttr>(
      CuvilDialect::VectorIdAttrHelper::getNameStr());
  return id ? id.getInt() : -1;
}

/// Whether `generic` is a row op: vectorized (`tileOf`), one result, static
/// iteration space whose loops are all parallel except perhaps the innermost
/// (a row reduction), no gathers; an elementwise op writes its result with
/// the identity map, a reduction with the innermost dimension dropped.
bool isRowOp(linalg::GenericOp generic, cpu::VectorTileOf tileOf) {
  if (!tileOf(generic) || generic.getNumResults() != 1 ||
      !generic.getBody()->getOps<tensor::ExtractOp>().empty())
    return false;
  if (llvm::any_of(generic.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  unsigned loops = generic.getNumLoops();
  AffineMap out = generic.getIndexingMapMatchingResult(generic->getResult(0));
  if (generic.getNumReductionLoops() == 0)
    return out.isIdentity();
  return generic.getNumReductionLoops() == 1 &&
         generic.getIteratorTypesArray()[loops - 1] ==
             utils::IteratorType::reduction &&
         out == AffineMap::getMultiDimIdentityMap(loops, generic.getContext())
                    .getMajorSubMap(loops - 1);
}

/// The loops a group runs over: its last op's, and its blocks of rows.
struct GroupSpace {
  SmallVector<int64_t> ranges; ///< the sink's loops, rows innermost but one
  int64_t rows;                ///< rows per block
  cpu::VectorTileOf tileOf;    ///< which ops are vectorized, and how
};

/// A chain fused into one row-blocked loop: the last op and the producers
/// fused into it, consumers before their producers.
struct RowGroup {
  linalg::GenericOp sink;
  SmallVector<linalg::GenericOp> producers;
  int64_t rows;
};

/// Which loops of a group an op runs over: all of them, its rows alone, or
/// neither (the op cannot join).
enum class Extent { Full, PerRow, Other };

Extent extentOf(linalg::GenericOp op, ArrayRef<int64_t> full) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ArrayRef<int64_t>(ranges) == full)
    return Extent::Full;
  if (ArrayRef<int64_t>(ranges) == full.drop_back())
    return Extent::PerRow;
  return Extent::Other;
}

/// The row op `consumer` reads row for row through `use`, if any. Ops of a
/// group run over its loops (full ops: elementwise or a row reduction) or
/// over its rows alone (per-row values, elementwise: a mean's division by
/// the row length). A full elementwise op's result is read with the identity
/// map by a full op; a per-row result (a reduction's or a per-row op's) with
/// the row of the loops by a full op, the identity by a per-row op (seeing
/// through a unit expansion, see mapThroughExpansion). A per-row op joins
/// only if its vector tile divides the block's rows.
linalg::GenericOp rowProducer(linalg::GenericOp consumer, OpOperand &use,
                              const GroupSpace &space) {
  if (!consumer.isDpsInput(&use))
    return {};
  Value value = use.get();
  AffineMap read = consumer.getMatchingIndexingMap(&use);
  if (std::optional<AffineMap> through = mapThroughExpansion(consumer, use)) {
    value = value.getDefiningOp<tensor::ExpandShapeOp>().getSrc();
    read = *through;
  }
  auto producer = value.getDefiningOp<linalg::GenericOp>();
  if (!producer || producer->getBlock() != consumer->getBlock() ||
      !isRowOp(producer, space.tileOf))
    return {};
  ArrayRef<int64_t> full = space.ranges;
  Extent consumerExtent = extentOf(consumer, full);
  Extent producerExtent = extentOf(producer, full);
  bool elementwise = producer.getNumReductionLoops() == 0;
  if (consumerExtent == Extent::Other || producerExtent == Extent::Other)
    return {};
  if (producerExtent == Extent::PerRow) {
    int64_t tile = *space.tileOf(producer);
    if (!elementwise || (tile != 0 && space.rows % tile != 0))
      return {};
  }
  unsigned rank = full.size();
  MLIRContext *context = consumer.getContext();
  AffineMap want;
  if (producerExtent == Extent::Full && elementwise) {
    if (consumerExtent != Extent::Full)
      return {};
    want = AffineMap::getMultiDimIdentityMap(rank, context);
  } else {
    want = consumerExtent == Extent::Full
               ? AffineMap::getMultiDimIdentityMap(rank, context)
                     .getMajorSubMap(rank - 1)
               : AffineMap::getMultiDimIdentityMap(rank - 1, context);
  }
  return read == want ? producer : linalg::GenericOp();
}

/// Whether `value` is used only by ops in `members`, unit expansions of it
/// looked through.
bool usedOnlyBy(Value value, const llvm::SetVector<Operation *> &members) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
      return usedOnlyBy(expand.getResult(), members);
    return members.contains(user);
  });
}

/// The group ending at `sink`: its row-for-row producers, transitively,
/// without those whose result is also used outside the group. The group's
/// ops then read each other's results directly (unit expansions between
/// them folded into their maps), which fusion needs.
RowGroup collectGroup(linalg::GenericOp sink, const GroupSpace &space,
                      const llvm::DenseSet<Operation *> &taken) {
  llvm::SetVector<Operation *> members;
  members.insert(sink);
  // Each read of one candidate by another, to fold once the group is known.
  SmallVector<std::tuple<linalg::GenericOp, OpOperand *, Operation *>> reads;
  for (size_t i = 0; i < members.size(); ++i) {
    auto consumer = cast<linalg::GenericOp>(members[i]);
    for (OpOperand *use : consumer.getDpsInputOperands()) {
      linalg::GenericOp producer = rowProducer(consumer, *use, space);
      if (!producer || taken.contains(producer))
        continue;
      members.insert(producer);
      reads.push_back({consumer, use, producer});
    }
  }
  // Drop members used outside the group, until none is.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : members.getArrayRef().drop_front())
      if (!usedOnlyBy(op->getResult(0), members)) {
        members.remove(op);
        changed = true;
        break;
      }
  }
  RowGroup group{sink, {}, space.rows};
  for (Operation *op : members.getArrayRef().drop_front())
    group.producers.push_back(cast<linalg::GenericOp>(op));
  if (group.producers.empty())
    return group;
  for (auto [consumer, use, producer] : reads)
    if (members.contains(consumer) && members.contains(producer))
      readThroughExpansion(consumer, *use);
  // Consumers before their producers: fusion pulls each producer into the
  // loop that its (already fused) consumers are in.
  llvm::sort(group.producers, [](linalg::GenericOp a, linalg::GenericOp b) {
    return b->isBeforeInBlock(a);
  });
  return group;
}

/// Rows per block: the most rows of the innermost extent that fit
/// kBlockBytes (at least `lanes`, so that a per-row value's vectors fill
/// whole registers) and divide the row count, so every block is static; a
/// multiple of `lanes` where one divides the rows.
int64_t rowsPerBlock(ArrayRef<int64_t> ranges, int64_t elementBytes,
                     int64_t lanes) {
  int64_t inner = ranges.back(), rows = ranges[ranges.size() - 2];
  int64_t target = std::max<int64_t>(1, kBlockBytes / (inner * elementBytes));
  for (int64_t r = std::min(std::max(target, lanes), rows); r >= lanes; --r)
    if (rows % r == 0 && r % lanes == 0)
      return r;
  for (int64_t r = std::min(target, rows); r > 1; --r)
    if (rows % r == 0)
      return r;
  return 1;
}

/// The reduction init of `generic` when a linalg.fill makes it, else -1.
int64_t filledInit(linalg::GenericOp generic) {
  if (generic.getNumReductionLoops() == 0)
    return -1;
  OpOperand *init = generic.getDpsInitOperand(0);
  return init->get().getDefiningOp<linalg::FillOp>()
             ? (int64_t)init->getOperandNumber()
             : -1;
}

/// Binds %`name` to the `opName` op whose `attr` (by default its vector id)
/// is `id`.
std::string matchTagged(
    const std::string &name, llvm::StringRef opName, int64_t id,
    llvm::StringRef attr = CuvilDialect::VectorIdAttrHelper::getNameStr()) {
  return "    %" + name + " = transform.structured.match ops{[\"" +
         opName.str() + "\"]} attributes{" + attr.str() + " = " +
         std::to_string(id) +
         " : i64} in %root : (!transform.any_op) -> !transform.any_op\n";
}

/// Schedule text fusing ops into one loop: `%<g>f<step>` is the loop's
/// latest handle, `%<g>fn` its function.
struct LoopFusion {
  std::string g;
  std::string text;
  int64_t step = 0;

  /// Fuses the op `%producer` into the loop; its fused copy is
  /// `%<producer>x`.
  void fuse(const std::string &producer) {
    std::string from = g + "f" + std::to_string(step++);
    std::string into = g + "f" + std::to_string(step);
    text += "    %" + producer + "x, %" + into +
            " = transform.cuvil.fuse_into_containing_op %" + producer +
            " into %" + from +
            " : (!transform.any_op, !transform.any_op) -> (!transform.any_op, "
            "!transform.any_op)\n";
  }

  /// Binds `%<g>fn` to the loop's function.
  void findFunction() {
    text += "    %" + g + "fn = transform.get_parent_op %" + g + "f" +
            std::to_string(step) +
            " {op_name = \"func.func\"} : (!transform.any_op) -> "
            "!transform.any_op\n";
  }

  /// Fuses `%op` and, when `init` >= 0, the fill making its operand `init`.
  void fuseWithFill(const std::string &op, int64_t init) {
    if (init >= 0)
      text += "    %" + op + "i = transform.get_producer_of_operand %" + op +
              "[" + std::to_string(init) +
              "] : (!transform.any_op) -> !transform.any_op\n";
    fuse(op);
    if (init >= 0)
      fuse(op + "i");
  }

  /// Fuses the tagged row ops `ops` (consumers before producers), each with
  /// the fill of its reduction init, naming them `%<g><prefix><i>`.
  void fuseRowOps(ArrayRef<linalg::GenericOp> ops, llvm::StringRef prefix) {
    for (auto [i, op] : llvm::enumerate(ops)) {
      std::string p = g + prefix.str() + std::to_string(i);
      // Two ops of the block reading the same producer read the same slice
      // of it: CSE makes that one slice, so the producer is fused (and
      // computed) once, not once per reader.
      text += "    transform.apply_cse to %" + g + "fn : !transform.any_op\n";
      text += matchTagged(p, "linalg.generic", vectorId(op));
      fuseWithFill(p, filledInit(op));
    }
  }
};

std::string groupBlock(RowGroup group, int64_t index) {
  // The sink's tiles: one along each outer dimension, a block of rows, the
  // rows whole.
  SmallVector<int64_t> tiles(group.sink.getNumLoops() - 2, 1);
  tiles.append({group.rows, 0});
  LoopFusion loop{"g" + std::to_string(index)};
  const std::string &g = loop.g;
  loop.text = matchTagged(g + "s", "linalg.generic", vectorId(group.sink));
  loop.text += cpu::tileUsingForall(g + "s", g + "t", g + "f0", tiles);
  loop.findFunction();
  loop.fuseRowOps(group.producers, "p");
  return loop.text;
}

} // namespace

std::string cpu::dropFusedOriginals(llvm::StringRef name) {
  return "    %" + name.str() +
         " = transform.structured.match ops{[\"func.func\"]} in %root : "
         "(!transform.any_op) -> !transform.any_op\n"
         "    transform.apply_dce to %" +
         name.str() + " : !transform.any_op\n";
}

std::string
cpu::rowGroupSchedule(ModuleOp module, int64_t lanes,
                      const llvm::DenseMap<int64_t, int64_t> &innerTiles,
                      ArrayRef<BatchedGemmChain> claimed) {
  auto tileOf = [&](linalg::GenericOp op) -> std::optional<int64_t> {
    int64_t id = vectorId(op);
    if (id < 0)
      return std::nullopt;
    return innerTiles.lookup(id);
  };
  SmallVector<linalg::GenericOp> sinks;
  module.walk([&](linalg::GenericOp generic) {
    if (isRowOp(generic, tileOf) && generic.getNumLoops() >= 2 &&
        generic.getNumReductionLoops() == 0)
      sinks.push_back(generic);
  });
  llvm::DenseSet<Operation *> taken;
  for (const BatchedGemmChain &chain : claimed)
    for (linalg::GenericOp op : chain.rowOps())
      taken.insert(op);
  std::string text;
  int64_t index = 0;
  // Last ops first: a chain's sink is never fused into an earlier chain.
  for (linalg::GenericOp sink : llvm::reverse(sinks)) {
    // Small chains keep one plain kernel per op: their tensors stay in L2
    // anyway, and measured on two cores they ran no faster fused (a 64 x 128
    // layer norm 8.0 us as five kernels, 11.9 us as one group on one
    // thread: the group's block buffers are allocated per block).
    std::optional<int64_t> elements = elementsOf(sink.getStaticLoopRanges());
    if (taken.contains(sink) || !elements || *elements < kSerialElements)
      continue;
    Type element = getElementTypeOrSelf(sink->getResult(0).getType());
    int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    GroupSpace space{sink.getStaticLoopRanges(), 0, tileOf};
    space.rows = rowsPerBlock(space.ranges, bytes, lanes);
    RowGroup group = collectGroup(sink, space, taken);
    taken.insert(sink);
    for (linalg::GenericOp p : group.producers)
      taken.insert(p);
    text += groupBlock(group, index++);
  }
  if (!text.empty())
    text += dropFusedOriginals("rgfuncs");
  return text;
}

//===----------------------------------------------------------------------===//
// Chains of two batched GEMMs (attention)
//===----------------------------------------------------------------------===//

namespace {

/// Tasks a chain's loop should have at least (blocks of rows times the
/// batch), so that threads can share it evenly.
constexpr int64_t kChainTasks = 8;

/// Multiply-adds and elements of a chain below which it runs on one thread.
constexpr int64_t kSerialChainWork = int64_t(1) << 20;

/// A batched GEMM whose init is a linalg.fill, static, of rank 3; its
/// (batch, rows, columns, reduction) sizes.
std::optional<std::array<int64_t, 4>> filledBatchedGemm(Operation *op) {
  auto gemm = dyn_cast_or_null<linalg::BatchMatmulOp>(op);
  if (!gemm || !gemm.getDpsInits()[0].getDefiningOp<linalg::FillOp>() ||
      llvm::any_of(gemm->getOperandTypes(), [](Type type) {
        return !getElementTypeOrSelf(type).isF32();
      }))
    return std::nullopt;
  SmallVector<int64_t> ranges = gemm.getStaticLoopRanges();
  if (ranges.size() != 4 || !elementsOf(ranges))
    return std::nullopt;
  return std::array<int64_t, 4>{ranges[0], ranges[1], ranges[2], ranges[3]};
}

/// The batched GEMM that the row op `op` reads element for element (its
/// loops are the GEMM's result's), when every use of that result is by one
/// of `members`.
linalg::BatchMatmulOp
gemmReadBy(linalg::GenericOp op,
           const llvm::SmallPtrSetImpl<Operation *> &members) {
  for (OpOperand *use : op.getDpsInputOperands()) {
    auto gemm = use->get().getDefiningOp<linalg::BatchMatmulOp>();
    if (gemm && gemm->getBlock() == op->getBlock() &&
        op.getMatchingIndexingMap(use).isIdentity() &&
        llvm::all_of(use->get().getUsers(),
                     [&](Operation *user) { return members.contains(user); }))
      return gemm;
  }
  return {};
}

/// The chain ending at `second` (see findBatchedGemmChains), if its sizes
/// suit the register tiles.
std::optional<cpu::BatchedGemmChain>
chainEndingAt(linalg::BatchMatmulOp second, int64_t registerRows,
              int64_t registerCols, cpu::VectorTileOf tileOf,
              const llvm::DenseSet<Operation *> &taken) {
  std::optional<std::array<int64_t, 4>> outer = filledBatchedGemm(second);
  if (!outer || (*outer)[2] % registerCols != 0)
    return std::nullopt;
  Value lhs = second.getDpsInputs()[0];
  auto sink = lhs.getDefiningOp<linalg::GenericOp>();
  if (!sink || !lhs.hasOneUse() || sink->getBlock() != second->getBlock() ||
      !isRowOp(sink, tileOf) || sink.getNumReductionLoops() != 0 ||
      taken.contains(sink))
    return std::nullopt;
  auto [batch, m, n, s] = *outer;
  SmallVector<int64_t> ranges{batch, m, s};
  if (ArrayRef<int64_t>(sink.getStaticLoopRanges()) != ArrayRef(ranges))
    return std::nullopt;
  // Blocks of rows whose score rows fit L1, whole register tiles, enough of
  // them for the threads.
  int64_t rows = rowsPerBlock(ranges, sizeof(float), registerRows);
  if (rows % registerRows != 0)
    return std::nullopt;
  while (batch * (m / rows) < kChainTasks && rows % (2 * registerRows) == 0)
    rows /= 2;
  GroupSpace space{ranges, rows, tileOf};
  RowGroup group = collectGroup(sink, space, taken);
  // The first GEMM: read by a member of the group, element for element.
  linalg::BatchMatmulOp first;
  cpu::BatchedGemmChain chain{{}, second, sink, group.producers, rows, false};
  llvm::SmallPtrSet<Operation *, 8> members;
  for (linalg::GenericOp op : chain.rowOps())
    members.insert(op);
  for (linalg::GenericOp op : chain.rowOps())
    if (extentOf(op, ranges) == Extent::Full)
      if (linalg::BatchMatmulOp gemm = gemmReadBy(op, members))
        first = gemm;
  std::optional<std::array<int64_t, 4>> inner = filledBatchedGemm(first);
  if (!inner || (*inner)[0] != batch || (*inner)[1] != m || (*inner)[2] != s ||
      s % registerCols != 0)
    return std::nullopt;
  chain.first = first;
  chain.serial = batch * m * s * ((*inner)[3] + n + 1) < kSerialChainWork;
  return chain;
}

} // namespace

SmallVector<linalg::GenericOp> cpu::BatchedGemmChain::rowOps() const {
  SmallVector<linalg::GenericOp> ops{sink};
  ops.append(producers.begin(), producers.end());
  return ops;
}

SmallVector<cpu::BatchedGemmChain>
cpu::findBatchedGemmChains(ModuleOp module, int64_t registerRows,
                           int64_t registerCols, VectorTileOf tileOf) {
  SmallVector<linalg::BatchMatmulOp> seconds;
  module.walk([&](linalg::BatchMatmulOp gemm) { seconds.push_back(gemm); });
  SmallVector<BatchedGemmChain> chains;
  llvm::DenseSet<Operation *> taken;
  // Last GEMMs first, as row groups: a chain's second GEMM may be the first
  // of an earlier chain only if that one is not fused already.
  for (linalg::BatchMatmulOp second : llvm::reverse(seconds)) {
    if (taken.contains(second))
      continue;
    std::optional<BatchedGemmChain> chain =
        chainEndingAt(second, registerRows, registerCols, tileOf, taken);
    if (!chain || taken.contains(chain->first))
      continue;
    taken.insert(chain->first);
    taken.insert(chain->second);
    for (linalg::GenericOp op : chain->rowOps())
      taken.insert(op);
    chains.push_back(std::move(*chain));
  }
  return chains;
}

std::string cpu::batchedGemmChainSchedule(ArrayRef<BatchedGemmChain> chains,
                                          int64_t registerRows,
                                          int64_t registerCols,
                                          int64_t &nextId) {
  std::string text;
  for (auto [index, chain] : llvm::enumerate(chains)) {
    MLIRContext *context = chain.sink->getContext();
    LoopFusion loop{"bc" + std::to_string(index)};
    const std::string &g = loop.g;
    auto tag = [&](linalg::BatchMatmulOp gemm, const std::string &name) {
      int64_t id = nextId++;
      gemm->setAttr(CuvilDialect::GemmIdAttrHelper::getNameStr(),
                    IntegerAttr::get(IntegerType::get(context, 64), id));
      loop.text += matchTagged(name, "linalg.batch_matmul", id,
                               CuvilDialect::GemmIdAttrHelper::getNameStr());
    };
    // The second GEMM tiled by blocks of rows, one task each; into each
    // block, its fill, the row ops and the first GEMM with its fill.
    tag(chain.second, g + "c");
    loop.text += "    %" + g + "ci = transform.get_producer_of_operand %" + g +
                 "c[2] : (!transform.any_op) -> !transform.any_op\n";
    loop.text +=
        cpu::tileUsingForall(g + "c", g + "t", g + "f0", {1, chain.rows, 0, 0});
    loop.fuse(g + "ci");
    loop.findFunction();
    loop.fuseRowOps(chain.rowOps(), "r");
    // Its readers (a softmax's maximum and differences, when nothing scales
    // the scores first) read one slice of it once CSE has run: one copy.
    loop.text +=
        "    transform.apply_cse to %" + g + "fn : !transform.any_op\n";
    tag(chain.first, g + "s");
    loop.fuseWithFill(g + "s", 2);
    // Each block's slices of q and v split into heads (a transpose moving
    // only the head, of extent 1 in the slice) read the projection in place:
    // no kernel copies them whole first.
    loop.text += "    %" + g + "fv = transform.cuvil.fold_transpose_slices %" +
                 g + "f" + std::to_string(loop.step) +
                 " : (!transform.any_op) -> !transform.any_op\n";
    if (chain.serial)
      loop.text += "    transform.annotate %" + g + "f" +
                   std::to_string(loop.step) + " \"" +
                   CuvilDialect::SerialAttrHelper::getNameStr().str() +
                   "\" : !transform.any_op\n";
    // Both GEMMs in register tiles, as gemmBlock's; the scores' fill is the
    // first one's initial accumulators. (Fusing the second one's fill the
    // same way would fuse the row ops producing its left operand into every
    // register tile too.)
    loop.text += tileUsingFor(g + "t", g + "tr", g + "tl",
                              {0, registerRows, registerCols, 1}) +
                 "    transform.structured.vectorize %" + g +
                 "tr : !transform.any_op\n";
    loop.text += registerTileWithFill(g + "sx", g + "sxr", /*batched=*/true,
                                      registerRows, registerCols);
    text += loop.text;
  }
  if (!text.empty())
    text += dropFusedOriginals("bcfuncs");
  return text;
}

std::string cpu::joinSizes(ArrayRef<int64_t> sizes) {
  std::string text;
  for (int64_t size : sizes)
    text += (text.empty() ? "" : ", ") + std::to_string(size);
  return text;
}

std::string cpu::tileUsingFor(llvm::StringRef target, llvm::StringRef tiled,
                              llvm::StringRef loops, ArrayRef<int64_t> sizes) {
  int64_t count = llvm::count_if(sizes, [](int64_t s) { return s != 0; });
  std::string types;
  for (int64_t i = 0; i < count; ++i)
    types += ", !transform.any_op";
  return "    %" + tiled.str() + ", %" + loops.str() + ":" +
         std::to_string(count) + " = transform.structured.tile_using_for %" +
         target.str() + " tile_sizes [" + joinSizes(sizes) +
         "] : (!transform.any_op) -> (!transform.any_op" + types + ")\n";
}

std::string cpu::tileUsingForall(llvm::StringRef target, llvm::StringRef tiled,
                                 llvm::StringRef forall,
                                 ArrayRef<int64_t> sizes) {
  return "    %" + tiled.str() + ", %" + forall.str() +
         " = transform.structured.tile_using_forall %" + target.str() +
         " tile_sizes [" + joinSizes(sizes) +
         "] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n";
}

SmallVector<int64_t> cpu::threadTiles(ArrayRef<int64_t> shape,
                                      bool anyDimension, int64_t minElements) {
  std::optional<int64_t> elements = elementsOf(shape);
  if (!elements || *elements < std::max(minElements, kSerialElements))
    return {};
  // Tasks along the first dimension that splits into 8, 4 or 2 equal parts
  // (the dimensions after it whole).
  SmallVector<int64_t> tiles(shape.size(), 0);
  for (auto [d, extent] : llvm::enumerate(shape)) {
    if (extent == 1)
      continue;
    for (int64_t parts : {8, 4, 2})
      if (extent % parts == 0) {
        tiles[d] = extent / parts;
        break;
      }
    if (tiles[d] != 0 || !anyDimension)
      break; // the first dimension that is not 1 decides (odd: serial)
  }
  if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
    return {};
  return tiles;
}

std::string cpu::threadedTransposes(ModuleOp module, int64_t lanes,
                                    int64_t &nextId) {
  std::string text;
  module.walk([&](linalg::TransposeOp transpose) {
    auto type = dyn_cast<RankedTensorType>(transpose.getInit().getType());
    if (!type || !type.hasStaticShape())
      return;
    // Under kSerialElements no tasks: the caller's thread runs it whole.
    SmallVector<int64_t> tiles = threadTiles(type.getShape());
    bool threaded = !tiles.empty();
    int64_t rank = type.getRank();
    if (!threaded)
      tiles.assign(rank, 0);
    ArrayRef<int64_t> perm = transpose.getPermutation();
    auto taskExtent = [&](int64_t d) {
      return tiles[d] ? tiles[d] : type.getDimSize(d);
    };
    // Dimensions of extent 1 stay untiled; the others outside the vectors
    // step by 1.
    SmallVector<int64_t> block(rank, 1);
    for (int64_t d = 0; d < rank; ++d)
      if (type.getDimSize(d) == 1)
        block[d] = 0;
    bool vectorized = true;
    if (perm[rank - 1] == rank - 1) {
      // The innermost dimension kept (attention's heads split off a
      // projection's columns): each row is a contiguous copy, moved in
      // vectors of up to four registers (wider ones LLVM unrolls whole).
      int64_t row =
          largestDivisor(taskExtent(rank - 1), {4 * lanes, 2 * lanes, lanes});
      vectorized = row != 0;
      block[rank - 1] = row;
    } else if ((lanes == kAvx512Lanes || lanes == kAvx2Lanes) && rank >= 2 &&
               perm[rank - 2] == rank - 1 &&
               taskExtent(rank - 1) % lanes == 0 &&
               taskExtent(rank - 2) % lanes == 0) {
      // The input's innermost dimension becomes the output's second
      // innermost (a swap of the last two; attention's k transposed from a
      // projection's columns): square blocks of a register's lanes, one
      // transposed vector read each, lowered to AVX-512's or AVX2's shuffles
      // (see buildCpuSchedule), instead of a scalar load and store per
      // element.
      block[rank - 1] = block[rank - 2] = lanes;
    } else {
      vectorized = false;
    }
    // Neither form: a large one's tasks are still split across threads, a
    // small one stays as it is.
    if (!threaded && !vectorized)
      return;
    int64_t id = nextId++;
    transpose->setAttr(
        CuvilDialect::VectorIdAttrHelper::getNameStr(),
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), id));
    std::string name = "tr" + std::to_string(id);
    text += matchTagged(name, "linalg.transpose", id);
    std::string target = name;
    if (threaded) {
      text += tileUsingForall(name, name + "t", name + "f", tiles);
      target = name + "t";
    }
    if (vectorized)
      text += tileUsingFor(target, name + "v", name + "l", block) +
              "    transform.structured.vectorize %" + name +
              "v : !transform.any_op\n";
  });
  return text;
}

//===----------------------------------------------------------------------===//
// After vectorization
//===----------------------------------------------------------------------===//

/// Whether `loop` runs at least once (constant bounds).
static bool runsAtLeastOnce(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  return lb && ub && *lb < *ub;
}

/// LICM leaves a vector.transfer_read of a tensor in place (MLIR 19 does not
/// count it as speculatable), and with it everything computed from the
/// value read: a layer norm's per-row sqrt(variance + eps) was read,
/// broadcast and recomputed for every vector of its row. A read moves only
/// out of a loop that runs (the indices it reads at are valid where it
/// executes).
void cpu::hoistInvariantTensorReads(ModuleOp module) {
  module.walk([](scf::ForOp loop) { // inner loops first
    bool runs = runsAtLeastOnce(loop);
    moveLoopInvariantCode(
        loop.getLoopRegions(),
        [&](Value value, Region *) {
          return loop.isDefinedOutsideOfLoop(value);
        },
        [&](Operation *op, Region *) {
          if (auto read = dyn_cast<vector::TransferReadOp>(op))
            return runs && !read.getMask() &&
                   isa<RankedTensorType>(read.getSource().getType()) &&
                   llvm::all_of(read.getInBoundsValues(),
                                [](bool in) { return in; });
          return isMemoryEffectFree(op) && isSpeculatable(op);
        },
        [&](Operation *op, Region *) { loop.moveOutOfLoop(op); });
  });
}

/// A `vector.reduction` without `reassoc` becomes LLVM's ordered reduction:
/// one scalar add after the other, 128 dependent adds for a row of 128 (a
/// layer norm's mean and variance, a softmax's sum). A tree is a few vector
/// adds and its rounding error grows with log n instead of n (NumPy sums
/// pairwise for the same reason). A maximum or minimum is exact in any
/// order (NaN wins wherever it is, -0 < +0 either way), but ordered it was
/// a scalar compare, NaN test and blend per element (a softmax's row
/// maximum).
void cpu::reduceAsTrees(ModuleOp module) {
  module.walk([](vector::ReductionOp reduction) {
    using Kind = vector::CombiningKind;
    if (!isa<FloatType>(reduction.getType()) ||
        !llvm::is_contained({Kind::ADD, Kind::MUL, Kind::MAXIMUMF,
                             Kind::MINIMUMF, Kind::MAXNUMF, Kind::MINNUMF},
                            reduction.getKind()))
      return;
    reduction.setFastmath(reduction.getFastmath() |
                          arith::FastMathFlags::reassoc);
  });
}
