//===- MapParallelLoops.cpp - Host loops onto GPU blocks and threads ------===//
//
// cuvil-cuda-map-parallel-loops: every outermost scf.parallel of a host
// function is tiled into blocks and threads with the innermost dimension
// on x; whatever else on the host reads or writes a buffer is wrapped in a
// loop of one iteration mapped to one thread, so convert-parallel-loops-
// to-gpu turns all of it into kernels and no host code touches device
// memory.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDAMAPPARALLELLOOPS
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using gpu::Processor;

namespace {

/// Hardware dimensions of a loop's last three dimensions, innermost first.
constexpr Processor kBlocks[] = {Processor::BlockX, Processor::BlockY,
                                 Processor::BlockZ};
constexpr Processor kThreads[] = {Processor::ThreadX, Processor::ThreadY,
                                  Processor::ThreadZ};

int64_t powerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

/// The static trip count of dimension `dim`, or nothing.
std::optional<int64_t> tripCount(scf::ParallelOp loop, unsigned dim) {
  auto lb = getConstantIntValue(loop.getLowerBound()[dim]);
  auto ub = getConstantIntValue(loop.getUpperBound()[dim]);
  auto step = getConstantIntValue(loop.getStep()[dim]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, (*ub - *lb + *step - 1) / *step);
}

/// Threads per block along each dimension: x (the innermost) takes a warp
/// (all of the block for a one-dimensional loop), y the rest, each no more
/// than the loop's trip count rounded up to a power of two.
SmallVector<int64_t> threadTile(scf::ParallelOp loop, int64_t threads) {
  unsigned rank = loop.getNumLoops();
  SmallVector<int64_t> tile(rank, 1);
  auto fit = [&](unsigned dim, int64_t want) {
    if (auto n = tripCount(loop, dim))
      want = std::min(want, powerOfTwoAtLeast(std::max<int64_t>(*n, 1)));
    return want;
  };
  int64_t x =
      fit(rank - 1, rank == 1 ? threads : std::min<int64_t>(32, threads));
  tile[rank - 1] = x;
  if (rank >= 2)
    tile[rank - 2] = fit(rank - 2, std::max<int64_t>(1, threads / x));
  return tile;
}

/// Marks `loop`'s dimensions, innermost first, with `units`; dimensions
/// before the last three run in sequence.
void setMapping(scf::ParallelOp loop, ArrayRef<Processor> units) {
  MLIRContext *ctx = loop.getContext();
  unsigned rank = loop.getNumLoops();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (unsigned dim = 0; dim < rank; ++dim) {
    unsigned fromInner = rank - 1 - dim;
    Processor unit =
        fromInner < units.size() ? units[fromInner] : Processor::Sequential;
    mapping.push_back(
        gpu::ParallelLoopDimMappingAttr::get(ctx, unit, identity, identity));
  }
  (void)gpu::setMappingAttr(loop, mapping);
}

/// Tiles `loop` into blocks and threads and maps both.
void mapLoop(RewriterBase &rewriter, scf::ParallelOp loop, int64_t threads) {
  unsigned rank = loop.getNumLoops();
  if (rank > 3) {
    // Collapse the leading dimensions into one, mapped on z.
    std::vector<unsigned> leading;
    for (unsigned dim = 0; dim + 2 < rank; ++dim)
      leading.push_back(dim);
    std::vector<std::vector<unsigned>> groups = {
        leading, {rank - 2}, {rank - 1}};
    // collapseParallelLoops replaces the loop by one it creates in its
    // place: the last loop before the old one's successor.
    rewriter.setInsertionPoint(loop);
    Block *block = loop->getBlock();
    Operation *next = loop->getNextNode();
    collapseParallelLoops(rewriter, loop, groups);
    scf::ParallelOp collapsed;
    for (Operation &op : *block) {
      if (&op == next)
        break;
      if (auto candidate = dyn_cast<scf::ParallelOp>(&op))
        collapsed = candidate;
    }
    if (!collapsed)
      return;
    loop = collapsed;
  }
  SmallVector<int64_t> tile = threadTile(loop, threads);
  auto [outer, inner] =
      scf::tileParallelLoop(loop, tile, /*noMinMaxBounds=*/true);
  setMapping(outer, kBlocks);
  setMapping(inner, kThreads);
}

/// Whether a host-level op may stay on the host: it does not touch buffer
/// contents (allocation, views, sizes, scalars, launches, the return).
bool staysOnHost(Operation *op) {
  if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::LaunchOp, gpu::MemcpyOp,
          gpu::WaitOp, func::ReturnOp, memref::DimOp>(op))
    return true;
  if (isa<ViewLikeOpInterface>(op) ||
      isa<memref::CastOp, memref::ReinterpretCastOp, memref::ExpandShapeOp,
          memref::CollapseShapeOp, memref::ExtractStridedMetadataOp,
          memref::GetGlobalOp, memref::AssumeAlignmentOp>(op))
    return true;
  if (op->getNumRegions() > 0)
    return false;
  return isMemoryEffectFree(op);
}

/// Wraps the ops `ops` (consecutive, in one block) in a parallel loop of one
/// iteration run by one thread of one block.
void wrapInOneThread(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  Operation *first = ops.front();
  Location loc = first->getLoc();
  rewriter.setInsertionPoint(first);
  Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
  Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
  auto blocks = rewriter.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{one}, ValueRange{one});
  rewriter.setInsertionPointToStart(blocks.getBody());
  auto threads = rewriter.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{one}, ValueRange{one});
  for (Operation *op : ops)
    op->moveBefore(threads.getBody()->getTerminator());
  setMapping(blocks, kBlocks);
  setMapping(threads, kThreads);
}

struct CudaMapParallelLoopsPass
    : mlir::cuvil::impl::CudaMapParallelLoopsBase<CudaMapParallelLoopsPass> {
  using CudaMapParallelLoopsBase::CudaMapParallelLoopsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (threadsPerBlock < 32 || threadsPerBlock > 1024 ||
        threadsPerBlock % 32 != 0) {
      func.emitError() << "threads-per-block="
                       << static_cast<unsigned>(threadsPerBlock)
                       << " is not a multiple of 32 between 32 and 1024";
      return signalPassFailure();
    }
    IRRewriter rewriter(func.getContext());
    for (Block &block : func.getBody()) {
      SmallVector<scf::ParallelOp> loops;
      SmallVector<SmallVector<Operation *>> serial;
      llvm::SmallPtrSet<Operation *, 16> inGroup;
      bool open = false;
      for (Operation &op : block) {
        if (auto loop = dyn_cast<scf::ParallelOp>(&op)) {
          if (op.getResults().empty()) {
            loops.push_back(loop);
            open = false;
            continue;
          }
        }
        // A scalar computed from what the open group loaded belongs to it.
        bool usesGroup = open && llvm::any_of(op.getOperands(), [&](Value v) {
                           return inGroup.contains(v.getDefiningOp());
                         });
        if (op.hasTrait<OpTrait::IsTerminator>() ||
            (staysOnHost(&op) && !usesGroup)) {
          open = false;
          continue;
        }
        if (!open)
          serial.emplace_back();
        serial.back().push_back(&op);
        inGroup.insert(&op);
        open = true;
      }
      // What a group computes must stay in it: its kernel cannot return
      // values to the host.
      for (ArrayRef<Operation *> group : serial)
        for (Operation *op : group)
          for (Operation *user : op->getUsers())
            if (!inGroup.contains(block.findAncestorOpInBlock(*user))) {
              op->emitError("this value is computed on the GPU but used by "
                            "host code; the cuda target cannot return it to "
                            "the host");
              return signalPassFailure();
            }
      for (ArrayRef<Operation *> group : serial)
        wrapInOneThread(rewriter, group);
      for (scf::ParallelOp loop : loops)
        mapLoop(rewriter, loop, threadsPerBlock);
    }
  }
};

} // namespace
