//===- PackGemmPanels.cpp - The cuvil-cpu-pack-gemm-panels pass -----------===//
//
// A GEMM's register tiles read the right operand's K block one row of their
// width at a time, each row a whole operand row away from the last. This
// pass copies the block into panels of that width laid end to end on the
// stack, once per K step, and points the tiles' reads at them: consecutive,
// aligned rows, whatever the operand's width (unaligned odd widths, widths
// whose rows alias in L1, pages). A constant operand (a model's weights) is
// packed once, at compile time, into a global of its panels; an operand
// whose blocks several row tiles read is packed whole, once per call,
// before the threads start.
//
//===----------------------------------------------------------------------===//

#include "GemmTiles.h"

#include "cuvil/Target/CPU/Passes.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUPACKGEMMPANELS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The largest value `v` takes, when a constant bounds it.
std::optional<int64_t> upperBound(OpFoldResult v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, cast<Value>(v), /*stopCondition=*/nullptr,
      /*closedUB=*/true);
  return succeeded(bound) ? std::optional(*bound) : std::nullopt;
}

/// Whether index `v` is always a multiple of `factor`: a constant, an
/// affine.apply whose expression is one, or the induction variable of a
/// loop that starts at one and steps by one.
bool isMultipleOf(OpFoldResult v, int64_t factor) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % factor == 0;
  Value value = cast<Value>(v);
  if (auto apply = value.getDefiningOp<affine::AffineApplyOp>())
    return apply.getAffineMap().getResult(0).isMultipleOf(factor);
  if (scf::ForOp loop = scf::getForInductionVarOwner(value)) {
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    return step && *step % factor == 0 &&
           isMultipleOf(loop.getLowerBound(), factor);
  }
  return false;
}

/// Whether every use of `view` (inside `within`, when given) can read a
/// packed copy instead: vector transfer reads, and subviews of it used so.
bool onlyRead(Value view, Operation *within = nullptr) {
  return llvm::all_of(view.getUsers(), [&](Operation *user) {
    if (isa<vector::TransferReadOp>(user) ||
        (within && !within->isAncestor(user)))
      return true;
    auto sub = dyn_cast<memref::SubViewOp>(user);
    return sub && sub.getSource() == view && onlyRead(sub.getResult(), within);
  });
}

/// A K block of a GEMM's right operand and the register tiles' reads of it.
/// A batched GEMM's block has a leading batch dimension of size 1 (its
/// thread task's batch tile): `lead()` is 1, every index below shifted by it.
struct KBlock {
  Operation *home;                     ///< where the block is taken (a loop)
  memref::SubViewOp block;             ///< %b[%k0, %n0] [kc, n] [1, 1]
  SmallVector<memref::SubViewOp> rows; ///< %block[%k, %j] [s, w] [1, 1]
  int64_t width = 0;                   ///< the widest row read: a panel
  int64_t maxDepth = 0, maxCols = 0;   ///< bounds of kc and n

  /// The leading unit dimensions before [kc, n].
  unsigned lead() const {
    return memref::SubViewOp(block).getType().getRank() - 2;
  }
  /// The K row (`%k`) and column (`%j`) where `row` starts in the block.
  OpFoldResult kOf(memref::SubViewOp row) const {
    return row.getMixedOffsets()[lead()];
  }
  OpFoldResult columnOf(memref::SubViewOp row) const {
    return row.getMixedOffsets()[lead() + 1];
  }
  /// The block's depth (kc) and columns (n).
  OpFoldResult depth() const { return sizes()[lead()]; }
  OpFoldResult columns() const { return sizes()[lead() + 1]; }
  SmallVector<OpFoldResult> sizes() const {
    return memref::SubViewOp(block).getMixedSizes();
  }
};

/// The most result rows one read of `block` serves: the largest extent of
/// the loops between the block's home and a read that walk neither the
/// read's row (k) nor its column.
int64_t resultRows(const KBlock &b) {
  int64_t rows = 0;
  for (memref::SubViewOp row : b.rows)
    for (Operation *op = row->getParentOp(); op && op != b.home;
         op = op->getParentOp()) {
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop)
        continue;
      Value iv = loop.getInductionVar();
      if (OpFoldResult(iv) == b.kOf(row) || OpFoldResult(iv) == b.columnOf(row))
        continue;
      if (std::optional<int64_t> upper = upperBound(loop.getUpperBound()))
        rows = std::max(rows, *upper);
    }
  return rows;
}

/// Whether `row` of `b` is read by a register tile: its row index is the
/// induction variable of a loop carrying vector sums.
bool readByRegisterTile(const KBlock &b, memref::SubViewOp row) {
  auto index = dyn_cast<Value>(b.kOf(row));
  scf::ForOp loop = index ? scf::getForInductionVarOwner(index) : nullptr;
  return loop && loop.getNumRegionIterArgs() > 0 &&
         llvm::all_of(loop.getRegionIterArgs(), [](BlockArgument arg) {
           return isa<VectorType>(arg.getType());
         });
}

/// The panels of `b`: [n / w][kc][w].
MemRefType packedTypeOf(KBlock &b) {
  int64_t panels = llvm::divideCeil(b.maxCols, b.width);
  return MemRefType::get({panels, b.maxDepth, b.width},
                         b.block.getType().getElementType());
}

int64_t bytesOf(MemRefType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// Whether the first `count` of `sizes` are 1.
bool unitSizes(ArrayRef<OpFoldResult> sizes, unsigned count) {
  return llvm::all_of(sizes.take_front(count),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); });
}

/// `block` as a K block that can be packed, or nothing: a 2-D view of rows
/// contiguous in memory (or a 3-D one of a single batch), read only as rows
/// of whole panels, at least one by a register tile's loop.
std::optional<KBlock> kBlockOf(memref::SubViewOp block) {
  auto type = cast<MemRefType>(block.getSource().getType());
  int64_t rank = block.getType().getRank();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (rank < 2 || rank > 3 || type.getRank() != rank ||
      !isa<FloatType>(type.getElementType()) || !block.hasUnitStride() ||
      failed(getStridesAndOffset(type, strides, offset)) ||
      strides.back() != 1 || !unitSizes(block.getMixedSizes(), rank - 2))
    return std::nullopt;
  KBlock b{block->getParentOp(), block, {}, 0, 0, 0};
  std::optional<int64_t> depth = upperBound(b.depth());
  std::optional<int64_t> cols = upperBound(b.columns());
  if (!depth || !cols)
    return std::nullopt;
  b.maxDepth = *depth;
  b.maxCols = *cols;
  for (Operation *user : block->getUsers()) {
    auto row = dyn_cast<memref::SubViewOp>(user);
    if (!row || row.getSource() != block.getResult() || !row.hasUnitStride() ||
        row.getType().getRank() != rank)
      return std::nullopt;
    SmallVector<OpFoldResult> sizes = row.getMixedSizes();
    std::optional<int64_t> w = upperBound(sizes[b.lead() + 1]);
    if (!unitSizes(sizes, b.lead()) ||
        !mlir::cuvil::cpu::isRegisterKSteps(sizes[b.lead()]) || !w || *w <= 0 ||
        !onlyRead(row.getResult()))
      return std::nullopt;
    b.width = std::max(b.width, *w);
    b.rows.push_back(row);
  }
  // Panels of whole vectors, every read starting on one.
  if (b.rows.empty() || b.width % 8 != 0 ||
      !llvm::any_of(
          b.rows,
          [&](memref::SubViewOp row) { return readByRegisterTile(b, row); }) ||
      llvm::any_of(b.rows, [&](memref::SubViewOp row) {
        return !isMultipleOf(b.columnOf(row), b.width);
      }))
    return std::nullopt;
  return b;
}

/// Whether copying `b` at run time pays: enough result rows read each panel
/// and the panels fit the stack buffer.
bool worthCopying(KBlock &b, int64_t minRows, int64_t maxBytes) {
  return bytesOf(packedTypeOf(b)) <= maxBytes && resultRows(b) >= minRows;
}

/// The largest constant packed at compile time (larger ones are copied per
/// K block at run time, as operands that are not constants are).
constexpr int64_t kMaxPanelBytes = int64_t(1) << 30;

/// Where a K block comes from: the memref at the end of its chain of
/// subviews and the block's place in it (the sums of their offsets).
struct Origin {
  Value root;
  SmallVector<OpFoldResult> rows, cols;
};

/// The origin of `b`'s block through 2-D unit-stride subviews, when its
/// panel columns start at multiples of the width (not for a batched GEMM's
/// block: only its copies per K block are made).
std::optional<Origin> originOf(KBlock &b) {
  if (b.lead())
    return std::nullopt;
  Origin origin;
  memref::SubViewOp view = b.block;
  while (true) {
    origin.rows.push_back(view.getMixedOffsets()[0]);
    origin.cols.push_back(view.getMixedOffsets()[1]);
    Value source = view.getSource();
    auto inner = source.getDefiningOp<memref::SubViewOp>();
    if (!inner) {
      origin.root = source;
      break;
    }
    if (!inner.hasUnitStride() || inner.getType().getRank() != 2 ||
        inner.getSourceType().getRank() != 2)
      return std::nullopt;
    view = inner;
  }
  if (!llvm::all_of(origin.cols,
                    [&](OpFoldResult c) { return isMultipleOf(c, b.width); }))
    return std::nullopt;
  return origin;
}

/// A K block read from a constant: its origin and the global.
struct ConstantOrigin {
  Origin chain;
  memref::GlobalOp global;
};

/// Where `b`'s block comes from, when it is a view of a constant global of
/// known values.
std::optional<ConstantOrigin> constantOrigin(KBlock &b, SymbolTable &symbols) {
  std::optional<Origin> chain = originOf(b);
  auto get = chain ? chain->root.getDefiningOp<memref::GetGlobalOp>() : nullptr;
  memref::GlobalOp global =
      get ? symbols.lookup<memref::GlobalOp>(get.getName()) : nullptr;
  if (!global || !global.getConstant() || !global.getInitialValue() ||
      !global.getType().getLayout().isIdentity() ||
      !global.getType().hasStaticShape() ||
      global.getType().getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  std::optional<ArrayRef<char>> bytes =
      cuvil::rawConstantBytes(*global.getInitialValue());
  MemRefType type = global.getType();
  int64_t size = bytes ? bytes->size() : 0,
          element = type.getElementTypeBitWidth() / 8;
  // The panels' size, checked: a splat's shape can be anything a model
  // declares, and they are built in memory here.
  std::optional<int64_t> packed = llvm::checkedMul<int64_t>(
      llvm::divideCeil(type.getDimSize(1), b.width) * b.width, element);
  packed = packed ? llvm::checkedMul(*packed, type.getDimSize(0)) : packed;
  if (!packed || *packed > kMaxPanelBytes ||
      (size != element && size != bytesOf(type)))
    return std::nullopt;
  return ConstantOrigin{std::move(*chain), global};
}

/// A constant global holding `global`'s [k][n] values as panels
/// [ceil(n / width)][k][width], zeros past the last column.
memref::GlobalOp panelsOf(memref::GlobalOp global, int64_t width,
                          SymbolTable &symbols) {
  MemRefType type = global.getType();
  int64_t depth = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t panels = llvm::divideCeil(cols, width);
  size_t bytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> from = *cuvil::rawConstantBytes(*global.getInitialValue());
  bool splat = from.size() == bytes;
  std::vector<char> to(panels * depth * width * bytes, 0);
  for (int64_t p = 0; p < panels; ++p) {
    int64_t count = std::min(width, cols - p * width);
    for (int64_t k = 0; k < depth; ++k) {
      char *row = to.data() + ((p * depth + k) * width) * bytes;
      if (!splat) {
        std::memcpy(row, from.data() + (k * cols + p * width) * bytes,
                    count * bytes);
        continue;
      }
      for (int64_t j = 0; j < count; ++j)
        std::memcpy(row + j * bytes, from.data(), bytes);
    }
  }
  auto packedType =
      MemRefType::get({panels, depth, width}, type.getElementType());
  auto value = DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(packedType.getShape(), type.getElementType()), to);
  OpBuilder builder(global);
  auto packed = builder.create<memref::GlobalOp>(
      global.getLoc(), (global.getSymName() + "_panels").str(),
      builder.getStringAttr("private"), packedType, value, /*constant=*/true,
      builder.getI64IntegerAttr(64));
  symbols.insert(packed); // renamed if the name is taken
  return packed;
}

/// Points the reads of `view` at `packed`, a view of the same shape.
void retarget(RewriterBase &rewriter, Value view, Value packed) {
  for (Operation *user : llvm::make_early_inc_range(view.getUsers())) {
    if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
      rewriter.modifyOpInPlace(read,
                               [&] { read.getSourceMutable().assign(packed); });
      continue;
    }
    auto sub = cast<memref::SubViewOp>(user);
    rewriter.setInsertionPoint(sub);
    auto type = memref::SubViewOp::inferRankReducedResultType(
        sub.getType().getShape(), cast<MemRefType>(packed.getType()),
        sub.getMixedOffsets(), sub.getMixedSizes(), sub.getMixedStrides());
    Value replacement = rewriter.create<memref::SubViewOp>(
        sub.getLoc(), cast<MemRefType>(type), packed, sub.getMixedOffsets(),
        sub.getMixedSizes(), sub.getMixedStrides());
    retarget(rewriter, sub.getResult(), replacement);
    rewriter.eraseOp(sub);
  }
}

/// Where `b`'s stack buffer is made: the start of the parallel loop's body
/// (convert-scf-to-openmp puts it at the start of each thread's region),
/// or the function's entry.
Operation *scopeOf(KBlock &b) {
  if (auto parallel = b.block->getParentOfType<scf::ParallelOp>())
    return parallel;
  return b.block->getParentOfType<FunctionOpInterface>();
}

/// Points the block's row reads at `packed`, its panels [n / w][kc][w]:
/// row k, columns j .. j+w of the block is row k of panel j / w.
void readPanels(RewriterBase &rewriter, KBlock &b, Value packed) {
  auto packedType = cast<MemRefType>(packed.getType());
  Value width =
      rewriter.create<arith::ConstantIndexOp>(b.block.getLoc(), b.width);
  for (memref::SubViewOp row : b.rows) {
    rewriter.setInsertionPoint(row);
    Value j = getValueOrCreateConstantIndexOp(rewriter, row.getLoc(),
                                              b.columnOf(row));
    Value panel = rewriter.create<arith::DivUIOp>(row.getLoc(), j, width);
    SmallVector<OpFoldResult> offsets = {panel, b.kOf(row),
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       row.getMixedSizes()[b.lead()],
                                       row.getMixedSizes()[b.lead() + 1]};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    auto type = memref::SubViewOp::inferRankReducedResultType(
        row.getType().getShape(), packedType, offsets, sizes, strides);
    Value view = rewriter.create<memref::SubViewOp>(
        row.getLoc(), cast<MemRefType>(type), packed, offsets, sizes, strides);
    retarget(rewriter, row.getResult(), view);
    rewriter.eraseOp(row);
  }
}

/// Reads `b` from `all`, the panels of its whole origin (packed at compile
/// time, or once before the loops that read it): the block is the view
/// [c0 / w, r0, 0] [ceil(n / w), kc, w] of them.
/// The views go at the rewriter's insertion point, after the block.
void readWholePanels(RewriterBase &rewriter, KBlock &b, const Origin &origin,
                     Value all) {
  Location loc = b.block.getLoc();
  // The sum of `parts` divided by `divisor` (rounded up if `up`).
  auto folded = [&](ArrayRef<OpFoldResult> parts, int64_t divisor, bool up) {
    AffineExpr sum = getAffineConstantExpr(0, rewriter.getContext());
    for (size_t i = 0; i < parts.size(); ++i)
      sum = sum + getAffineSymbolExpr(i, rewriter.getContext());
    AffineExpr expr = up ? sum.ceilDiv(divisor) : sum.floorDiv(divisor);
    return affine::makeComposedFoldedAffineApply(
        rewriter, loc, AffineMap::get(0, parts.size(), expr), parts);
  };
  SmallVector<OpFoldResult> offsets = {folded(origin.cols, b.width, false),
                                       folded(origin.rows, 1, false),
                                       rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      folded(b.block.getMixedSizes()[1], b.width, true),
      b.block.getMixedSizes()[0], rewriter.getIndexAttr(b.width)};
  SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
  Value view =
      rewriter.create<memref::SubViewOp>(loc, all, offsets, sizes, strides);
  readPanels(rewriter, b, view);
}

/// Erases `view` and the views and global read it came from once nothing
/// uses them.
void eraseUnusedChain(RewriterBase &rewriter, Operation *view) {
  while (view && view->use_empty() &&
         isa<memref::SubViewOp, memref::GetGlobalOp>(view)) {
    Operation *source =
        view->getNumOperands() ? view->getOperand(0).getDefiningOp() : nullptr;
    rewriter.eraseOp(view);
    view = source;
  }
}

/// Copies the rows 0 .. `depth` of `source` (2-D), columns p*w .. +w, into
/// panel `p` of `packed` ([panels][depth][w]), zeros past its last column.
/// Where the source's columns are static whole panels the reads are plain
/// loads, not masked ones (AVX2's vmaskmovps, and a mask per row).
void copyPanel(OpBuilder &builder, Location loc, Value source, Value packed,
               Value p, Value depth, int64_t width) {
  auto sourceType = cast<MemRefType>(source.getType());
  auto element = sourceType.getElementType();
  bool whole =
      !sourceType.isDynamicDim(1) && sourceType.getDimSize(1) % width == 0;
  Value w = builder.create<arith::ConstantIndexOp>(loc, width);
  Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
  Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
  Value pad = builder.create<arith::ConstantFloatOp>(
      loc, APFloat::getZero(cast<FloatType>(element).getFloatSemantics()),
      cast<FloatType>(element));
  Value col = builder.create<arith::MulIOp>(loc, p, w);
  auto vector = VectorType::get({width}, element);
  builder.create<scf::ForOp>(
      loc, zero, depth, one, ValueRange(),
      [&](OpBuilder &kb, Location kl, Value k, ValueRange) {
        Value row = kb.create<vector::TransferReadOp>(
            kl, vector, source, ValueRange{k, col},
            AffineMap::get(2, 0, kb.getAffineDimExpr(1)), pad,
            /*mask=*/Value(), kb.getBoolArrayAttr({whole}));
        kb.create<vector::TransferWriteOp>(
            kl, row, packed, ValueRange{p, k, zero},
            AffineMap::get(3, 0, kb.getAffineDimExpr(2)), ArrayRef<bool>{true});
        kb.create<scf::YieldOp>(kl);
      });
}

/// Copies the block into panels at the start of each K step, in `buffer`
/// (bytes on the stack, shared by the blocks of one scope: they run one
/// after the other), and retargets the reads.
void pack(RewriterBase &rewriter, KBlock &b, Value buffer) {
  Location loc = b.block.getLoc();
  MemRefType packedType = packedTypeOf(b);
  rewriter.setInsertionPointAfter(b.block);
  auto index = [&](int64_t v) {
    return rewriter.create<arith::ConstantIndexOp>(loc, v);
  };
  Value packed = rewriter.create<memref::ViewOp>(loc, packedType, buffer,
                                                 index(0), ValueRange());
  Value depth = getValueOrCreateConstantIndexOp(rewriter, loc, b.depth());
  Value cols = getValueOrCreateConstantIndexOp(rewriter, loc, b.columns());
  // The block as [kc, n] (a batched GEMM's without its batch of 1).
  Value source = b.block.getResult();
  if (b.lead())
    source = memref::createCanonicalRankReducingSubViewOp(
        rewriter, loc, source,
        b.block.getType().getShape().drop_front(b.lead()));
  // (arith.ceildivui has no direct lowering to LLVM.)
  Value count = rewriter.create<arith::DivUIOp>(
      loc, rewriter.create<arith::AddIOp>(loc, cols, index(b.width - 1)),
      index(b.width));
  rewriter.create<scf::ForOp>(
      loc, index(0), count, index(1), ValueRange(),
      [&](OpBuilder &pb, Location pl, Value p, ValueRange) {
        copyPanel(pb, pl, source, packed, p, depth, b.width);
        pb.create<scf::YieldOp>(pl);
      });
  readPanels(rewriter, b, packed);
}

/// The largest operand packed whole at run time (a heap buffer as large).
constexpr int64_t kMaxWholeBytes = int64_t(256) << 20;
/// The fewest times the loops must take each K block for the whole operand
/// to be packed instead: a block copied where it is read stays in the
/// core's cache, panels of the whole operand are read back from further
/// away. Against the copies per block, in the same minutes: 4 row tiles
/// 4-8% slower (256x256 by 256x512, 256x512 by 512x2048), 8 the same
/// (512^3), 16 and more 7-10% faster (1024x512 by 512x256, 1000x999 by
/// 999x1001, 4096x1024 by 1024x4096).
constexpr int64_t kMinWholeTakes = 16;

/// Whether `v` is computed from `iv` (through the ops defining it, in the
/// function; each op looked at once).
bool dependsOn(Value v, Value iv) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    if (next == iv)
      return true;
    Operation *def = next.getDefiningOp();
    if (def && seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// How many times the loops between `b`'s block and `point` (included)
/// take the same block of `origin`: the product of the trip counts of those
/// whose induction variables move none of its offsets (a GEMM's row tiles
/// over the right operand). Unknown trip counts count once.
int64_t timesTaken(KBlock &b, const Origin &origin, Operation *point) {
  auto moves = [&](Value iv) {
    for (const auto *offsets : {&origin.rows, &origin.cols})
      for (OpFoldResult offset : *offsets)
        if (auto value = dyn_cast<Value>(offset); value && dependsOn(value, iv))
          return true;
    return false;
  };
  auto trips = [](OpFoldResult lb, OpFoldResult ub, OpFoldResult step) {
    std::optional<int64_t> count = constantTripCount(lb, ub, step);
    return count && *count > 0 ? *count : int64_t(1);
  };
  int64_t times = 1;
  for (Operation *op = b.block->getParentOp(); op; op = op->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(op);
        loop && !moves(loop.getInductionVar()))
      times *=
          trips(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    if (auto loop = dyn_cast<scf::ParallelOp>(op))
      for (unsigned i = 0; i < loop.getNumLoops(); ++i)
        if (!moves(loop.getInductionVars()[i]))
          times *= trips(loop.getLowerBound()[i], loop.getUpperBound()[i],
                         loop.getStep()[i]);
    if (op == point)
      break;
  }
  return times;
}

/// Where `b`'s whole origin is packed once, at run time: the op in the
/// block defining its root that holds the block (the loops around the K
/// blocks: a GEMM's thread tiles), when those loops take each block at
/// least kMinWholeTakes times (each block is copied once instead), nothing
/// there writes the operand and its panels fit kMaxWholeBytes. A static,
/// contiguous 2-D float operand only.
Operation *wholePackingPoint(KBlock &b, const Origin &origin) {
  auto type = dyn_cast<MemRefType>(origin.root.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      !type.getLayout().isIdentity() || !isa<FloatType>(type.getElementType()))
    return nullptr;
  Block *home = Value(origin.root).getParentBlock();
  Operation *point = b.block;
  while (point && point->getBlock() != home)
    point = point->getParentOp();
  if (!point || point == b.block.getOperation())
    return nullptr;
  std::optional<int64_t> bytes = llvm::checkedMul<int64_t>(
      llvm::divideCeil(type.getDimSize(1), b.width) * b.width,
      type.getDimSize(0) * (type.getElementTypeBitWidth() / 8));
  if (!bytes || *bytes > kMaxWholeBytes ||
      timesTaken(b, origin, point) < kMinWholeTakes ||
      !onlyRead(origin.root, point))
    return nullptr;
  return point;
}

/// Packs the whole of `root` ([k][n]) into panels [ceil(n / w)][k][w] on
/// the heap before `point` (the panels split between threads when `point`
/// is a parallel loop), freed after it.
Value packWhole(RewriterBase &rewriter, Value root, int64_t width,
                Operation *point) {
  auto type = cast<MemRefType>(root.getType());
  int64_t depth = type.getDimSize(0);
  int64_t panels = llvm::divideCeil(type.getDimSize(1), width);
  Location loc = point->getLoc();
  rewriter.setInsertionPoint(point);
  auto packedType =
      MemRefType::get({panels, depth, width}, type.getElementType());
  Value packed = rewriter.create<memref::AllocOp>(
      loc, packedType, rewriter.getI64IntegerAttr(64));
  auto index = [&](int64_t v) {
    return rewriter.create<arith::ConstantIndexOp>(loc, v);
  };
  Value rows = index(depth);
  auto body = [&](OpBuilder &pb, Location pl, Value p) {
    copyPanel(pb, pl, root, packed, p, rows, width);
  };
  if (isa<scf::ParallelOp>(point))
    rewriter.create<scf::ParallelOp>(
        loc, ValueRange{index(0)}, ValueRange{index(panels)},
        ValueRange{index(1)},
        [&](OpBuilder &pb, Location pl, ValueRange p) { body(pb, pl, p[0]); });
  else
    rewriter.create<scf::ForOp>(
        loc, index(0), index(panels), index(1), ValueRange(),
        [&](OpBuilder &pb, Location pl, Value p, ValueRange) {
          body(pb, pl, p);
          pb.create<scf::YieldOp>(pl);
        });
  rewriter.setInsertionPointAfter(point);
  rewriter.create<memref::DeallocOp>(loc, packed);
  return packed;
}

struct CpuPackGemmPanelsPass
    : mlir::cuvil::impl::CpuPackGemmPanelsBase<CpuPackGemmPanelsPass> {
  using CpuPackGemmPanelsBase::CpuPackGemmPanelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    // Constants first, packed at compile time; the rest if a copy pays.
    SmallVector<KBlock> blocks;
    SmallVector<std::pair<KBlock, ConstantOrigin>> constants;
    SmallVector<Whole> wholes;
    module.walk([&](memref::SubViewOp view) {
      std::optional<KBlock> b = kBlockOf(view);
      if (!b)
        return;
      std::optional<Origin> origin;
      Operation *point = nullptr;
      if (std::optional<ConstantOrigin> constant = constantOrigin(*b, symbols))
        constants.emplace_back(std::move(*b), std::move(*constant));
      else if ((origin = originOf(*b)) &&
               (point = wholePackingPoint(*b, *origin)))
        wholes.push_back({std::move(*b), std::move(*origin), point});
      else if (worthCopying(*b, minRows, maxBytes))
        blocks.push_back(std::move(*b));
    });
    packConstants(rewriter, constants, symbols);
    packOperands(rewriter, wholes);

    // One buffer per scope, as large as its largest block.
    llvm::MapVector<Operation *, int64_t> scopes;
    for (KBlock &b : blocks) {
      int64_t &bytes = scopes[scopeOf(b)];
      bytes = std::max(bytes, bytesOf(packedTypeOf(b)));
    }
    llvm::DenseMap<Operation *, Value> buffers;
    for (auto [scope, bytes] : scopes) {
      rewriter.setInsertionPointToStart(&scope->getRegion(0).front());
      buffers[scope] = rewriter.create<memref::AllocaOp>(
          scope->getLoc(), MemRefType::get({bytes}, rewriter.getI8Type()),
          rewriter.getI64IntegerAttr(64));
    }
    for (KBlock &b : blocks)
      pack(rewriter, b, buffers[scopeOf(b)]);
  }

  /// A K block of an operand packed whole before `point`.
  struct Whole {
    KBlock block;
    Origin origin;
    Operation *point;
  };

  /// Packs each operand once per panel width and loop nest reading it, and
  /// points its blocks at the panels.
  void packOperands(IRRewriter &rewriter, MutableArrayRef<Whole> wholes) {
    llvm::DenseMap<std::tuple<Value, int64_t, Operation *>, Value> panels;
    for (Whole &w : wholes) {
      Value &packed = panels[{w.origin.root, w.block.width, w.point}];
      if (!packed)
        packed = packWhole(rewriter, w.origin.root, w.block.width, w.point);
      rewriter.setInsertionPointAfter(w.block.block);
      readWholePanels(rewriter, w.block, w.origin, packed);
      eraseUnusedChain(rewriter, w.block.block);
    }
  }

  /// Packs each constant once per panel width and points its blocks at the
  /// panels; a global nothing reads any more goes.
  void packConstants(IRRewriter &rewriter,
                     MutableArrayRef<std::pair<KBlock, ConstantOrigin>> blocks,
                     SymbolTable &symbols) {
    llvm::DenseMap<std::pair<Operation *, int64_t>, memref::GlobalOp> panels;
    llvm::SetVector<Operation *> replaced;
    for (auto &[b, origin] : blocks) {
      memref::GlobalOp &packed = panels[{origin.global, b.width}];
      if (!packed)
        packed = panelsOf(origin.global, b.width, symbols);
      rewriter.setInsertionPointAfter(b.block);
      Value all = rewriter.create<memref::GetGlobalOp>(
          b.block.getLoc(), packed.getType(), packed.getSymName());
      readWholePanels(rewriter, b, origin.chain, all);
      eraseUnusedChain(rewriter, b.block);
      replaced.insert(origin.global);
    }
    for (Operation *global : replaced)
      if (SymbolTable::symbolKnownUseEmpty(global, getOperation()))
        symbols.erase(global);
  }
};

} // namespace
