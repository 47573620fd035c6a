//===- GathersAsLoads.cpp - Evenly spaced gathers as loads and shuffles ---===//
//
// cuvil-gathers-as-loads: vectorizing a strided access (a stride-2
// convolution's columns read every other pixel of an image row) gives a
// `vector.gather` whose lanes read elements evenly spaced in memory: lane i
// at start + s * i. x86 has no fast gather (LLVM scalarizes it on Zen and
// most Intel cores: an index extract, a scalar load and an insert per lane);
// the same lanes are one contiguous load of s * (n - 1) + 1 elements and a
// shuffle keeping every s-th. The gather reads the first and the last of
// those elements itself, so the load stays inside the memory it reads.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_GATHERSASLOADS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Widest spacing taken: a load of s elements per lane costs s / 8 vector
/// loads per lane and a shuffle, still under a scalarized gather's three
/// instructions per lane at 4.
constexpr int64_t kMaxSpacing = 4;

/// Deepest chain of vector arithmetic followed back from an index vector.
constexpr int kMaxDepth = 32;

/// Each lane of an integer vector less its lane 0, where those differences
/// are constants: vectors built from broadcasts (uniform across lanes,
/// whatever their value), constants, `vector.step`, sums, differences and
/// products by a constant, and elementwise ops of uniform operands (a
/// compare, a select, a clamp: an embedding's token index, clamped and
/// broadcast to the lanes reading its row). std::nullopt for anything else,
/// and where a difference overflows 64 bits. Remembers each value's answer,
/// so a chain that reuses values is walked once.
class LaneOffsets {
public:
  std::optional<SmallVector<int64_t>> of(Value value, int depth = 0) {
    auto known = answers.find(value);
    if (known != answers.end())
      return known->second;
    std::optional<SmallVector<int64_t>> offsets = compute(value, depth);
    answers[value] = offsets;
    return offsets;
  }

private:
  static bool allZero(ArrayRef<int64_t> offsets) {
    return llvm::all_of(offsets, [](int64_t d) { return d == 0; });
  }

  std::optional<SmallVector<int64_t>> compute(Value value, int depth);
  std::optional<SmallVector<int64_t>> combine(Operation *op, int depth);

  /// Whether `op`, elementwise and free of side effects, computes the same
  /// value in every lane: its vector operands do, its scalars are one value.
  bool isUniform(Operation *op, int depth) {
    if (!op->hasTrait<OpTrait::Elementwise>() || !isMemoryEffectFree(op))
      return false;
    return llvm::all_of(op->getOperands(), [&](Value operand) {
      if (!isa<VectorType>(operand.getType()))
        return operand.getType().isIntOrIndexOrFloat();
      std::optional<SmallVector<int64_t>> offsets = of(operand, depth + 1);
      return offsets && allZero(*offsets);
    });
  }

  DenseMap<Value, std::optional<SmallVector<int64_t>>> answers;
};

std::optional<SmallVector<int64_t>> LaneOffsets::compute(Value value,
                                                         int depth) {
  auto type = dyn_cast<VectorType>(value.getType());
  if (!type || type.getRank() != 1 || type.isScalable() || depth > kMaxDepth)
    return std::nullopt;
  int64_t lanes = type.getNumElements();
  SmallVector<int64_t> zeros(lanes, 0);
  ElementsAttr constant;
  if (matchPattern(value, m_Constant(&constant))) {
    if (constant.isSplat())
      return zeros;
    auto ints = dyn_cast<DenseIntElementsAttr>(constant);
    if (!ints)
      return std::nullopt;
    SmallVector<int64_t> offsets;
    APInt first = *ints.value_begin<APInt>();
    for (const APInt &lane : ints.getValues<APInt>())
      if (lane.getBitWidth() > 64 ||
          llvm::SubOverflow(lane.getSExtValue(), first.getSExtValue(),
                            offsets.emplace_back()))
        return std::nullopt;
    return offsets;
  }
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto broadcast = dyn_cast<vector::BroadcastOp>(op)) {
    auto source = dyn_cast<VectorType>(broadcast.getSourceType());
    if (!source || source.getNumElements() == 1)
      return zeros;
    return std::nullopt;
  }
  if (isa<vector::SplatOp>(op))
    return zeros;
  if (isa<vector::StepOp>(op))
    return llvm::to_vector(llvm::seq<int64_t>(0, lanes));
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
    return of(op->getOperand(0), depth + 1);
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(op))
    return combine(op, depth);
  return isUniform(op, depth) ? std::optional(zeros) : std::nullopt;
}

/// A sum, difference or product's offsets from its operands'.
std::optional<SmallVector<int64_t>> LaneOffsets::combine(Operation *op,
                                                         int depth) {
  std::optional<SmallVector<int64_t>> lhs = of(op->getOperand(0), depth + 1);
  std::optional<SmallVector<int64_t>> rhs = of(op->getOperand(1), depth + 1);
  if (!lhs || !rhs)
    return std::nullopt;
  int64_t lanes = lhs->size();
  SmallVector<int64_t> result(lanes);
  if (isa<arith::AddIOp, arith::SubIOp>(op)) {
    bool add = isa<arith::AddIOp>(op);
    for (int64_t i = 0; i < lanes; ++i)
      if (add ? llvm::AddOverflow((*lhs)[i], (*rhs)[i], result[i])
              : llvm::SubOverflow((*lhs)[i], (*rhs)[i], result[i]))
        return std::nullopt;
    return result;
  }
  // A product: uniform by uniform stays uniform; lanes that differ scale
  // only by a constant factor.
  if (allZero(*lhs) && allZero(*rhs))
    return result; // all zero
  for (auto [varying, other] : {std::pair(0, 1), std::pair(1, 0)}) {
    APInt factor;
    if (!matchPattern(op->getOperand(other), m_ConstantInt(&factor)) ||
        factor.getBitWidth() > 64)
      continue;
    const SmallVector<int64_t> &offsets = varying == 0 ? *lhs : *rhs;
    for (int64_t i = 0; i < lanes; ++i)
      if (llvm::MulOverflow(offsets[i], factor.getSExtValue(), result[i]))
        return std::nullopt;
    return result;
  }
  return std::nullopt;
}

/// The spacing s of `gather`'s lanes (lane i reads lane 0's element plus
/// s * i), where all are read and s is 1 to kMaxSpacing; 0 otherwise.
int64_t spacingOf(vector::GatherOp gather, LaneOffsets &lanes) {
  if (gather.getVectorType().getRank() != 1 ||
      !matchPattern(gather.getMask(), m_One()))
    return 0;
  std::optional<SmallVector<int64_t>> offsets = lanes.of(gather.getIndexVec());
  if (!offsets || offsets->size() < 2)
    return 0;
  int64_t spacing = (*offsets)[1];
  if (spacing < 1 || spacing > kMaxSpacing)
    return 0;
  for (auto [lane, offset] : llvm::enumerate(*offsets))
    if (offset != spacing * (int64_t)lane)
      return 0;
  return spacing;
}

/// The row-major element offset of `indices` in `base` (identity layout);
/// null where all are zero (a gather's usual base).
Value rowMajorOffset(OpBuilder &b, Location loc, Value base,
                     ValueRange indices) {
  auto type = cast<MemRefType>(base.getType());
  // Each dimension's stride: the product of the static sizes after it and
  // of the dynamic ones (null for none).
  int64_t staticStride = 1;
  Value dynamicStride, offset;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (!isConstantIntValue(indices[d], 0)) {
      Value stride = b.create<arith::ConstantIndexOp>(loc, staticStride);
      if (dynamicStride)
        stride = b.create<arith::MulIOp>(loc, dynamicStride, stride);
      Value term = b.create<arith::MulIOp>(loc, indices[d], stride);
      offset = offset ? b.create<arith::AddIOp>(loc, offset, term) : term;
    }
    if (d == 0)
      break;
    if (!type.isDynamicDim(d)) {
      staticStride *= type.getDimSize(d);
      continue;
    }
    Value size = b.create<memref::DimOp>(loc, base, d);
    dynamicStride = dynamicStride
                        ? b.create<arith::MulIOp>(loc, dynamicStride, size)
                        : size;
  }
  return offset;
}

/// `gather` (reading lanes `spacing` elements apart from a memref laid out
/// row-major) as a load of the elements from its first lane's to its last
/// and, for a spacing over 1, a shuffle keeping every spacing-th.
void rewrite(vector::GatherOp gather, int64_t spacing) {
  OpBuilder b(gather);
  Location loc = gather.getLoc();
  Value base = gather.getBase();
  auto type = cast<MemRefType>(base.getType());
  int64_t rank = type.getRank();
  Value flat = base;
  if (rank > 1) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    flat = b.create<memref::CollapseShapeOp>(
        loc, base, ArrayRef<ReassociationIndices>{all});
  }
  Value start = b.create<vector::ExtractOp>(loc, gather.getIndexVec(), 0);
  if (!start.getType().isIndex())
    start = b.create<arith::IndexCastOp>(loc, b.getIndexType(), start);
  if (Value offset = rowMajorOffset(b, loc, base, gather.getIndices()))
    start = b.create<arith::AddIOp>(loc, start, offset);
  VectorType result = gather.getVectorType();
  int64_t lanes = result.getNumElements();
  auto span =
      VectorType::get({spacing * (lanes - 1) + 1}, result.getElementType());
  Value read = b.create<vector::LoadOp>(loc, span, flat, ValueRange{start});
  if (spacing > 1) {
    SmallVector<int64_t> every;
    for (int64_t lane = 0; lane < lanes; ++lane)
      every.push_back(spacing * lane);
    read = b.create<vector::ShuffleOp>(loc, read, read, every);
  }
  gather.replaceAllUsesWith(read);
  gather.erase();
}

struct GathersAsLoadsPass
    : cuvil::impl::GathersAsLoadsBase<GathersAsLoadsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<vector::GatherOp, int64_t>> found;
    // One analysis for the function: gathers in a loop nest share index
    // arithmetic (nothing is rewritten until every gather is analysed).
    LaneOffsets lanes;
    getOperation().walk([&](vector::GatherOp gather) {
      // Row-major memory (an identity layout) collapses to one dimension
      // whatever its sizes; a tensor has not been bufferized yet. Elements
      // of whole bytes only: LLVM loads a vector of i1 as packed bits, a
      // memref stores one per byte.
      auto type = dyn_cast<MemRefType>(gather.getBase().getType());
      if (!type || type.getRank() == 0 || !type.getLayout().isIdentity())
        return;
      Type element = type.getElementType();
      if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
        return;
      if (int64_t spacing = spacingOf(gather, lanes))
        found.push_back({gather, spacing});
    });
    for (auto [gather, spacing] : found)
      rewrite(gather, spacing);
  }
};

} // namespace
