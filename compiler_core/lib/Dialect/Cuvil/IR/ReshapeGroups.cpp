//===- ReshapeGroups.cpp - Which dims a reshape merges, when types say so -===//
//
// A reshape between shapes of different ranks collapses groups of adjacent
// dims of the higher-rank shape into the dims of the lower-rank one. With
// static sizes the products fix the groups; with dynamic sizes several
// groupings can fit the same types, and each gives the dynamic results other
// sizes. The lowering and the symbol propagation take a grouping only when
// every one that fits agrees; otherwise the sizes must be given.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace {

/// Enumerates the groupings of `high` into `low` that fit the types and
/// stops at the second one that places a non-unit dim elsewhere.
class GroupSearch {
public:
  GroupSearch(ArrayRef<int64_t> high, ArrayRef<int64_t> low, bool expanding)
      : high(high), low(low), expanding(expanding) {}

  /// The grouping, when exactly one fits up to where unit dims go.
  std::optional<SmallVector<ReassociationIndices>> run() {
    place(0, 0);
    if (ambiguous || !first)
      return std::nullopt;
    return first;
  }

private:
  /// Whether `high[begin, end)` can make up `low[group]`.
  bool fits(size_t begin, size_t end, size_t group) const {
    int64_t product = 1, dynamic = 0;
    for (size_t d = begin; d < end; ++d) {
      if (ShapedType::isDynamic(high[d]))
        ++dynamic;
      else
        product *= high[d];
    }
    if (!ShapedType::isDynamic(low[group]))
      return dynamic == 0 && product == low[group];
    // A dynamic result needs a dynamic part; expand_shape derives one
    // dynamic size per group (the low size over the static rest).
    return dynamic > 0 && (!expanding || dynamic == 1);
  }

  void place(size_t begin, size_t group) {
    if (ambiguous)
      return;
    if (group == low.size()) {
      if (begin == high.size())
        record();
      return;
    }
    size_t groupsLeft = low.size() - group - 1;
    for (size_t end = begin + 1; end + groupsLeft <= high.size(); ++end) {
      if (!fits(begin, end, group))
        continue;
      current.push_back(llvm::to_vector<2>(llvm::seq<int64_t>(begin, end)));
      place(end, group + 1);
      current.pop_back();
    }
  }

  /// The group of every non-unit dim: what decides the result sizes.
  SmallVector<int64_t> key() const {
    SmallVector<int64_t> groupOf;
    for (auto [g, dims] : llvm::enumerate(current))
      for (int64_t d : dims)
        if (high[d] != 1)
          groupOf.push_back(g);
    return groupOf;
  }

  void record() {
    if (!first) {
      first = current;
      firstKey = key();
    } else if (key() != firstKey) {
      ambiguous = true;
    }
  }

  ArrayRef<int64_t> high, low;
  bool expanding;
  SmallVector<ReassociationIndices> current;
  std::optional<SmallVector<ReassociationIndices>> first;
  SmallVector<int64_t> firstKey;
  bool ambiguous = false;
};

} // namespace

std::optional<SmallVector<ReassociationIndices>>
mlir::cuvil::reshapeGroups(RankedTensorType high, RankedTensorType low,
                           bool expanding) {
  if (high.getRank() <= low.getRank() || low.getRank() == 0)
    return std::nullopt;
  if (high.hasStaticShape() && low.hasStaticShape())
    return getReassociationIndicesForReshape(high, low);
  return GroupSearch(high.getShape(), low.getShape(), expanding).run();
}
