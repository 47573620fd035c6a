//===- CpuTransformOps.cpp - Transform ops of the CPU schedule ------------===//
//
// transform.cuvil.fuse_into_containing_op: producer fusion into a loop that
// names the producer and the loop in a diagnostic only when it fails (see
// CpuTransformOps.td for the three ways a producer is fused).
// transform.cuvil.fold_transpose_slices: slices of a transpose that are
// views of its input read the input.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/CpuTransformOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SetVector.h"

#define GET_OP_CLASSES
#include "cuvil/Target/CPU/CpuTransformOps.cpp.inc"

using namespace mlir;

namespace {

/// The first `tensor.extract_slice` reading `value` strictly inside `loop`.
tensor::ExtractSliceOp firstSliceInside(ValueRange values, Operation *loop) {
  for (Value value : values)
    for (Operation *user : value.getUsers())
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
        if (loop->isProperAncestor(slice))
          return slice;
  return {};
}

/// Replaces `slice` (of `producer`'s result `resultNumber`) by that result
/// computed for the slice alone, right where the slice was.
FailureOr<TilingResult> tileIntoSlice(RewriterBase &rewriter,
                                      TilingInterface producer,
                                      unsigned resultNumber,
                                      tensor::ExtractSliceOp slice) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(slice);
  FailureOr<TilingResult> tiled = producer.generateResultTileValue(
      rewriter, resultNumber, slice.getMixedOffsets(), slice.getMixedSizes());
  if (failed(tiled) || tiled->tiledValues.empty())
    return failure();
  FailureOr<Value> value = tensor::ExtractSliceOp::rankReduceIfNeeded(
      rewriter, slice.getLoc(), tiled->tiledValues.front(),
      slice.getType().getShape());
  if (failed(value))
    return failure();
  rewriter.replaceOp(slice, *value);
  return tiled;
}

/// After a `linalg.generic` was tiled into `loop` (an `scf.forall`) for a
/// slice of its result `resultNumber`, readers of that result after the loop
/// would still need the whole producer: rebuilds the loop with one more
/// output that collects the tiles, and hands those readers the loop's new
/// result. Returns the new loop, or null when nothing reads the result after
/// the loop (or the tile is not computed in the loop's own body).
scf::ForallOp carryTilesOut(RewriterBase &rewriter, Operation *producer,
                            Operation *loop, const TilingResult &tiled,
                            unsigned resultNumber,
                            ArrayRef<OpFoldResult> offsets,
                            ArrayRef<OpFoldResult> sizes) {
  auto forall = dyn_cast<scf::ForallOp>(loop);
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  Value tile = tiled.tiledValues.front();
  if (!forall || !generic || tile.getParentBlock() != forall.getBody())
    return {};
  Value result = producer->getResult(resultNumber);
  DominanceInfo dominance(loop);
  llvm::SmallPtrSet<Operation *, 4> later;
  for (Operation *user : result.getUsers())
    if (!loop->isAncestor(user) && dominance.dominates(loop, user))
      later.insert(user);
  if (later.empty())
    return {};

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall);
  Value init = generic.getDpsInits()[resultNumber];
  SmallVector<Value> outputs(forall.getOutputs());
  outputs.push_back(init);
  auto wider = rewriter.create<scf::ForallOp>(
      forall.getLoc(), forall.getMixedLowerBound(), forall.getMixedUpperBound(),
      forall.getMixedStep(), outputs, forall.getMapping());
  rewriter.eraseBlock(wider.getBody());
  wider.getRegion().takeBody(forall.getRegion());
  BlockArgument collected =
      wider.getBody()->addArgument(init.getType(), init.getLoc());
  rewriter.replaceUsesWithIf(init, collected, [&](OpOperand &use) {
    return wider->isProperAncestor(use.getOwner());
  });
  rewriter.setInsertionPointToStart(wider.getTerminator().getBody());
  SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
  rewriter.create<tensor::ParallelInsertSliceOp>(
      forall.getLoc(), tile, collected, offsets, sizes, strides);
  for (auto [before, after] :
       llvm::zip(forall.getResults(), wider.getResults()))
    rewriter.replaceAllUsesWith(before, after);
  rewriter.replaceUsesWithIf(
      result, wider.getResults().back(),
      [&](OpOperand &use) { return later.contains(use.getOwner()); });
  return wider;
}

/// The first way: a slice of the producer's result read inside the loop.
/// Returns the tiled ops (none when there is no such slice or the producer
/// cannot be tiled to it) and sets `newLoop` when the loop was rebuilt.
SmallVector<Operation *> fuseIntoSlice(RewriterBase &rewriter,
                                       Operation *producer, Operation *loop,
                                       scf::ForallOp &newLoop) {
  auto tileable = dyn_cast<TilingInterface>(producer);
  if (!tileable)
    return {};
  tensor::ExtractSliceOp slice = firstSliceInside(producer->getResults(), loop);
  if (!slice)
    return {};
  unsigned resultNumber = cast<OpResult>(slice.getSource()).getResultNumber();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  FailureOr<TilingResult> tiled =
      tileIntoSlice(rewriter, tileable, resultNumber, slice);
  if (failed(tiled))
    return {};
  newLoop = carryTilesOut(rewriter, producer, loop, *tiled, resultNumber,
                          offsets, sizes);
  return tiled->tiledOps;
}

/// The second way: the producer initializes one of an `scf.forall`'s
/// `shared_outs`. Each task's slice of the block argument becomes the
/// producer computed into that slice, and the loop's output starts from the
/// producer's own destination instead.
SmallVector<Operation *> fuseIntoSharedOut(RewriterBase &rewriter,
                                           Operation *producer,
                                           Operation *loop) {
  auto tileable = dyn_cast<TilingInterface>(producer);
  auto forall = dyn_cast<scf::ForallOp>(loop);
  if (!tileable || !forall)
    return {};
  OpOperand *init = nullptr;
  for (OpOperand &use : producer->getUses())
    if (use.getOwner() == loop) {
      init = &use;
      break;
    }
  if (!init)
    return {};
  BlockArgument shared = forall.getTiedBlockArgument(init);
  tensor::ExtractSliceOp slice = firstSliceInside(shared, loop);
  if (!slice)
    return {};
  unsigned resultNumber = cast<OpResult>(init->get()).getResultNumber();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(slice);
  SmallVector<Value> destinations;
  if (failed(tensor::getOrCreateDestinations(rewriter, producer->getLoc(),
                                             producer, destinations)))
    return {};
  // The producer writing into the task's share of the loop's output.
  IRMapping intoShared;
  intoShared.map(destinations[resultNumber], shared);
  auto clone = cast<TilingInterface>(rewriter.clone(*producer, intoShared));
  FailureOr<TilingResult> tiled =
      tileIntoSlice(rewriter, clone, resultNumber, slice);
  rewriter.eraseOp(clone);
  if (failed(tiled))
    return {};
  rewriter.modifyOpInPlace(loop,
                           [&] { init->set(destinations[resultNumber]); });
  return tiled->tiledOps;
}

/// The third way: a copy of the whole producer right before its first reader
/// inside the loop. Not when the loop itself reads the producer.
Operation *cloneIntoLoop(RewriterBase &rewriter, Operation *producer,
                         Operation *loop) {
  OpOperand *first = nullptr;
  for (OpResult result : producer->getResults())
    for (OpOperand &use : result.getUses()) {
      if (use.getOwner() == loop)
        return nullptr;
      if (!first && loop->isProperAncestor(use.getOwner()))
        first = &use;
    }
  if (!first || isa<tensor::ParallelInsertSliceOp>(first->getOwner()))
    return nullptr;
  unsigned resultNumber = cast<OpResult>(first->get()).getResultNumber();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(first->getOwner());
  Operation *clone = rewriter.clone(*producer);
  rewriter.modifyOpInPlace(first->getOwner(),
                           [&] { first->set(clone->getResult(resultNumber)); });
  return clone;
}

/// The next producer to fuse: the first one read inside `loop` (or by it).
/// One read there once, it leaves `remaining`; one read several times stays
/// for the next reads.
Operation *nextProducer(llvm::SetVector<Operation *> &remaining,
                        Operation *loop) {
  for (Operation *producer : remaining) {
    int64_t reads = llvm::count_if(producer->getUsers(), [&](Operation *user) {
      return loop->isAncestor(user);
    });
    if (reads == 0)
      continue;
    if (reads == 1)
      remaining.remove(producer);
    return producer;
  }
  return nullptr;
}

/// `slice` (unit strides) of a transpose's result as a slice of the
/// transpose's input, its unit dimensions dropped and expanded back to the
/// slice's type; null where the slice's extents other than 1 come from the
/// input in another order (the slice moves data) or do not include the
/// input's innermost dimension (the view would not be contiguous along its
/// rows: a copy reads faster).
Value transposeSliceAsView(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                           linalg::TransposeOp transpose) {
  if (!slice.hasUnitStride())
    return nullptr;
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  int64_t rank = perm.size();
  SmallVector<OpFoldResult> inOffsets(rank), inSizes(rank);
  SmallVector<int64_t> kept; // input dimensions of extent other than 1
  for (int64_t d = 0; d < rank; ++d) {
    inOffsets[perm[d]] = offsets[d];
    inSizes[perm[d]] = sizes[d];
    if (!isConstantIntValue(sizes[d], 1))
      kept.push_back(perm[d]);
  }
  if (kept.empty() || !llvm::is_sorted(kept) || kept.back() != rank - 1)
    return nullptr;
  Value input = transpose.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
  RankedTensorType reduced =
      tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
          kept.size(), inputType, inOffsets, inSizes, strides);
  RankedTensorType type = slice.getType();
  // The slice's unit dimensions put back (none when it dropped them all).
  std::optional<SmallVector<ReassociationIndices>> groups;
  if (reduced.getRank() != type.getRank() &&
      !(groups = getReassociationIndicesForReshape(reduced, type)))
    return nullptr;
  rewriter.setInsertionPoint(slice);
  Value view = rewriter.create<tensor::ExtractSliceOp>(
      slice.getLoc(), reduced, input, inOffsets, inSizes, strides);
  if (!groups)
    return view;
  return rewriter.create<tensor::ExpandShapeOp>(slice.getLoc(), type, view,
                                                *groups);
}

class CpuTransformExtension
    : public transform::TransformDialectExtension<CpuTransformExtension> {
public:
  using Base::Base;

  void init() {
    declareGeneratedDialect<linalg::LinalgDialect>();
    declareGeneratedDialect<scf::SCFDialect>();
    declareGeneratedDialect<tensor::TensorDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "cuvil/Target/CPU/CpuTransformOps.cpp.inc"
        >();
  }
};

} // namespace

DiagnosedSilenceableFailure
mlir::cuvil::FuseIntoContainingOp::apply(transform::TransformRewriter &rewriter,
                                         transform::TransformResults &results,
                                         transform::TransformState &state) {
  auto loops = state.getPayloadOps(getContainingOp());
  if (!llvm::hasSingleElement(loops))
    return emitDefiniteFailure()
           << "requires exactly one containing_op handle (got "
           << llvm::range_size(loops) << ")";
  Operation *loop = *loops.begin();
  auto producers = state.getPayloadOps(getProducerOp());
  llvm::SetVector<Operation *> remaining(producers.begin(), producers.end());
  SmallVector<Operation *> fused;
  while (!remaining.empty()) {
    Operation *producer = nextProducer(remaining, loop);
    if (!producer) {
      DiagnosedSilenceableFailure diag =
          emitSilenceableError()
          << "could not find next producer to fuse into container";
      diag.attachNote(loop->getLoc()) << "containing op";
      return diag;
    }
    scf::ForallOp newLoop;
    SmallVector<Operation *> tiled =
        fuseIntoSlice(rewriter, producer, loop, newLoop);
    if (tiled.empty())
      tiled = fuseIntoSharedOut(rewriter, producer, loop);
    if (tiled.empty())
      if (Operation *clone = cloneIntoLoop(rewriter, producer, loop))
        tiled.push_back(clone);
    if (tiled.empty()) {
      // Only a failure pays for printing the ops.
      DiagnosedSilenceableFailure diag =
          emitSilenceableError()
          << "could not fuse a '" << producer->getName()
          << "' into the containing op: it could neither be tiled to a "
             "slice read inside the loop nor copied before its first reader "
             "there (a copy cannot serve the loop's own operands)";
      diag.attachNote(producer->getLoc()) << "the producer";
      diag.attachNote(loop->getLoc()) << "the containing op";
      return diag;
    }
    llvm::append_range(fused, tiled);
    if (newLoop) {
      // The handles to the old loop now point at the new one.
      if (failed(rewriter.notifyPayloadOperationReplaced(loop, newLoop)))
        return emitDefiniteFailure()
               << "could not replace the containing op in its handles";
      rewriter.eraseOp(loop);
      loop = newLoop;
    }
  }
  results.set(cast<OpResult>(getFusedOp()), fused);
  results.set(cast<OpResult>(getNewContainingOp()), {loop});
  return DiagnosedSilenceableFailure::success();
}

void mlir::cuvil::FuseIntoContainingOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::consumesHandle(getProducerOpMutable(), effects);
  transform::onlyReadsHandle(getContainingOpMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

DiagnosedSilenceableFailure mlir::cuvil::FoldTransposeSlicesOp::apply(
    transform::TransformRewriter &rewriter,
    transform::TransformResults &results, transform::TransformState &state) {
  SmallVector<Operation *> targets =
      llvm::to_vector(state.getPayloadOps(getTarget()));
  for (Operation *target : targets) {
    SmallVector<std::pair<tensor::ExtractSliceOp, linalg::TransposeOp>> slices;
    target->walk([&](tensor::ExtractSliceOp slice) {
      if (auto transpose =
              slice.getSource().getDefiningOp<linalg::TransposeOp>())
        slices.push_back({slice, transpose});
    });
    llvm::SetVector<Operation *> transposes;
    for (auto [slice, transpose] : slices)
      if (Value view = transposeSliceAsView(rewriter, slice, transpose)) {
        rewriter.replaceOp(slice, view);
        transposes.insert(transpose);
      }
    for (Operation *transpose : transposes)
      if (transpose->use_empty())
        rewriter.eraseOp(transpose);
  }
  results.set(cast<OpResult>(getFolded()), targets);
  return DiagnosedSilenceableFailure::success();
}

void mlir::cuvil::FoldTransposeSlicesOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getTargetMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

void mlir::cuvil::registerCpuTransformOps(DialectRegistry &registry) {
  registry.addExtensions<CpuTransformExtension>();
}
