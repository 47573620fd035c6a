//===- UnaliasGemmRows.cpp - The cuvil-cpu-unalias-gemm-rows pass ---------===//
//
// Rows a multiple of 4 KiB apart put one column of every row in the same L1
// set (the set index is address bits 6-11 here): a GEMM walking down such an
// operand evicts its own rows. Copying the operand into rows one cache line
// longer spreads them over the sets. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUUNALIASGEMMROWS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr int64_t kAliasBytes = 4096;
constexpr int64_t kLineBytes = 64;

/// The copy of a static `[rows, cols]` matrix `source` in rows one cache line
/// longer, as a `[rows, cols]` tensor over that buffer.
Value copyWithLongerRows(OpBuilder &b, Location loc, Value source) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  auto padded = RankedTensorType::get({rows, cols + kLineBytes / bytes},
                                      type.getElementType());
  Value buffer =
      b.create<bufferization::AllocTensorOp>(loc, padded, ValueRange{});
  Value view = b.create<tensor::ExtractSliceOp>(
      loc, type, buffer,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(cols)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  // A generic, not linalg.copy: the schedule vectorizes generics.
  MLIRContext *ctx = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, ctx);
  auto copy = b.create<linalg::GenericOp>(
      loc, type, ValueRange{source}, ValueRange{view},
      ArrayRef<AffineMap>{identity, identity},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::parallel},
      [](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, args[0]);
      });
  return copy.getResult(0);
}

/// Whether `operand` (a static 2-D float matrix) has rows a multiple of
/// 4 KiB apart and is large enough, with `reuse` result rows or columns
/// reading it, for its copy to pay.
bool worthCopying(Value operand, int64_t reuse, int64_t minReuse,
                  int64_t minBytes) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  if (!type || !type.hasStaticShape() || type.getRank() != 2 ||
      !isa<FloatType>(type.getElementType()) ||
      type.getElementTypeBitWidth() % 8 != 0)
    return false;
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  int64_t rowBytes = type.getDimSize(1) * bytes;
  return rowBytes % kAliasBytes == 0 && reuse >= minReuse &&
         type.getNumElements() * bytes >= minBytes;
}

struct UnaliasGemmRowsPass
    : public cuvil::impl::CpuUnaliasGemmRowsBase<UnaliasGemmRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> gemms;
    getOperation().walk([&](linalg::MatmulOp gemm) { gemms.push_back(gemm); });
    OpBuilder b(&getContext());
    for (linalg::MatmulOp gemm : gemms) {
      auto out = dyn_cast<RankedTensorType>(gemm.getDpsInits()[0].getType());
      if (!out || !out.hasStaticShape())
        continue;
      // Only the right operand: its rows are what a register tile walks down
      // (one row per K step, two cache lines each). The left one is read 16
      // K steps per cache line from the same 8 rows, which stay in the set's
      // ways; copying it cost more than it gained (2048^3: 47 ms with the
      // right operand copied, 61 ms with both). Every result row reuses it.
      OpOperand *right = gemm.getDpsInputOperand(1);
      if (!worthCopying(right->get(), out.getDimSize(0), minReuse, minBytes))
        continue;
      b.setInsertionPoint(gemm);
      right->set(copyWithLongerRows(b, gemm.getLoc(), right->get()));
    }
  }
};

} // namespace
