//===- MergeSiblingMatmuls.cpp - The cuvil-merge-sibling-matmuls pass -----===//
//
// Products of one value with several constant weights (attention's query,
// key and value projections) become one product with the weights side by
// side, its column slices replacing the results. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_MERGESIBLINGMATMULS
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// A matmul's constant 2-D weight with its bytes in row-major order.
struct Weight {
  mutable MatmulOp matmul; // an op handle: calling it changes nothing here
  RankedTensorType type;
  ArrayRef<char> bytes;
};

/// The weight of `matmul` when it can join a merge: a static, non-splat 2-D
/// constant right operand, and a static result.
std::optional<Weight> constantWeight(MatmulOp matmul) {
  auto constant = matmul.getRhs().getDefiningOp<ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
  if (!constant || !type || type.getRank() != 2 || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      !matmul.getType().hasStaticShape())
    return std::nullopt;
  std::optional<ArrayRef<char>> bytes = rawConstantBytes(constant.getValue());
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  if (!bytes || elementBytes * type.getNumElements() != (int64_t)bytes->size())
    return std::nullopt; // a splat, or bytes not laid out plainly
  return Weight{matmul, type, *bytes};
}

/// Whether `b` can share a merged weight with `a`: same rows, element type
/// and result element type.
bool compatible(const Weight &a, const Weight &b) {
  return a.type.getDimSize(0) == b.type.getDimSize(0) &&
         a.type.getElementType() == b.type.getElementType() &&
         a.matmul.getType().getElementType() ==
             b.matmul.getType().getElementType();
}

/// The weights side by side: row r of the result is row r of each weight
/// in turn.
std::vector<char> concatenateColumns(ArrayRef<Weight> weights) {
  int64_t rows = weights.front().type.getDimSize(0), total = 0;
  for (const Weight &w : weights)
    total += w.bytes.size();
  std::vector<char> merged;
  merged.reserve(total);
  for (int64_t r = 0; r < rows; ++r)
    for (const Weight &w : weights) {
      size_t rowBytes = w.bytes.size() / rows;
      ArrayRef<char> row = w.bytes.slice(r * rowBytes, rowBytes);
      merged.insert(merged.end(), row.begin(), row.end());
    }
  return merged;
}

/// Replaces the matmuls of `weights` (first in program order) by one
/// product with their weights side by side and a column slice each.
void merge(ArrayRef<Weight> weights) {
  MatmulOp first = weights.front().matmul;
  RankedTensorType rowType = weights.front().type;
  int64_t columns = 0;
  for (const Weight &w : weights)
    columns += w.type.getDimSize(1);
  auto weightType = RankedTensorType::get({rowType.getDimSize(0), columns},
                                          rowType.getElementType());
  std::vector<char> bytes = concatenateColumns(weights);
  OpBuilder b(first);
  SmallVector<Location> locs;
  for (const Weight &w : weights)
    locs.push_back(w.matmul.getLoc());
  Location loc = b.getFusedLoc(locs);
  Value weight = b.create<ConstantOp>(
      loc, weightType, DenseElementsAttr::getFromRawBuffer(weightType, bytes));
  SmallVector<int64_t> shape(first.getType().getShape());
  shape.back() = columns;
  auto productType =
      RankedTensorType::get(shape, first.getType().getElementType());
  Value product =
      b.create<MatmulOp>(loc, productType, first.getLhs(), weight).getResult();
  int64_t offset = 0;
  for (const Weight &w : weights) {
    RankedTensorType type = w.matmul.getType();
    SmallVector<int64_t> start(type.getRank(), 0), step(type.getRank(), 1);
    SmallVector<int64_t> limit(type.getShape());
    start.back() = offset;
    limit.back() = offset + type.getDimSize(type.getRank() - 1);
    offset = limit.back();
    Value slice = b.create<SliceOp>(w.matmul.getLoc(), type, product,
                                    ValueRange(), start, limit, step);
    w.matmul.getResult().replaceAllUsesWith(slice);
  }
  // Last: the builder inserts before the first of them.
  for (const Weight &w : weights)
    w.matmul->erase();
}

struct MergeSiblingMatmulsPass
    : public cuvil::impl::MergeSiblingMatmulsBase<MergeSiblingMatmulsPass> {
  using MergeSiblingMatmulsBase::MergeSiblingMatmulsBase;

  void runOnOperation() override {
    // Matmuls by left operand, in program order (a value's users in one
    // block: the merged product goes where the first of them was).
    llvm::MapVector<std::pair<Value, Block *>, SmallVector<Weight>> byOperand;
    getOperation().walk([&](MatmulOp matmul) {
      if (std::optional<Weight> w = constantWeight(matmul))
        byOperand[{matmul.getLhs(), matmul->getBlock()}].push_back(*w);
    });
    bool changed = false;
    for (auto &[key, weights] : byOperand) {
      llvm::sort(weights, [](const Weight &a, const Weight &b) {
        return a.matmul->isBeforeInBlock(b.matmul);
      });
      // Those like the first, within the byte limit.
      SmallVector<Weight> group;
      int64_t bytes = 0;
      for (const Weight &w : weights) {
        std::optional<int64_t> total =
            llvm::checkedAdd<int64_t>(bytes, w.bytes.size());
        if (!compatible(weights.front(), w) || !total || *total > maxBytes)
          continue;
        bytes = *total;
        group.push_back(w);
      }
      if (group.size() < 2)
        continue;
      merge(group);
      changed = true;
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
