//===- LowerStridedGathers.cpp - Gathers LLVM cannot take as they are -----===//
//
// cuvil-lower-strided-gathers: LLVM's masked gather (what convert-vector-to-
// llvm makes of a vector.gather) reads from a memref whose innermost
// dimension is contiguous. Vectorizing a kernel over a strided view (every
// other column of a tensor, say) can produce a gather from a memref with
// another innermost stride, which the conversion leaves alone and
// translation to LLVM IR then rejects. Those gathers, and only those, are
// flattened to one dimension (MLIR's patterns) and turned into conditional
// scalar loads along the innermost dimension.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_LOWERSTRIDEDGATHERS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Whether LLVM's gather can read `gather`'s base as it is.
bool hasContiguousInnermost(vector::GatherOp gather) {
  auto type = dyn_cast<MemRefType>(gather.getBase().getType());
  if (!type) // a tensor: bufferization has not run, nothing to do here
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return strides.empty() || strides.back() == 1;
}

/// `gather` (1-D, from a strided memref) as one conditional scalar load per
/// lane where its mask bit is set, keeping the pass-through value
/// elsewhere. A gather's index is an element offset from base[offsets...]
/// in the row-major order of the base's shape (what the vectorizer
/// linearized); on strided memory it is taken apart into indices again.
void scalarize(vector::GatherOp gather) {
  OpBuilder b(gather);
  Location loc = gather.getLoc();
  Value base = gather.getBase();
  Value result = gather.getPassThru();
  int64_t rank = cast<MemRefType>(base.getType()).getRank();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.createOrFold<memref::DimOp>(loc, base, d));
  // The offsets' row-major position.
  Value start = b.create<arith::ConstantIndexOp>(loc, 0);
  for (int64_t d = 0; d < rank; ++d)
    start = b.createOrFold<arith::AddIOp>(
        loc, b.createOrFold<arith::MulIOp>(loc, start, sizes[d]),
        gather.getIndices()[d]);
  int64_t lanes = gather.getVectorType().getNumElements();
  for (int64_t lane = 0; lane < lanes; ++lane) {
    Value bit = b.create<vector::ExtractOp>(loc, gather.getMask(), lane);
    Value index = b.create<vector::ExtractOp>(loc, gather.getIndexVec(), lane);
    if (!index.getType().isIndex())
      index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), index);
    Value flat = b.createOrFold<arith::AddIOp>(loc, start, index);
    SmallVector<Value> at(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      at[d] =
          d == 0 ? flat : b.createOrFold<arith::RemUIOp>(loc, flat, sizes[d]);
      if (d > 0)
        flat = b.createOrFold<arith::DivUIOp>(loc, flat, sizes[d]);
    }
    Value current = result;
    auto branch = b.create<scf::IfOp>(
        loc, bit,
        [&](OpBuilder &then, Location l) {
          Value value = then.create<memref::LoadOp>(l, base, at);
          then.create<scf::YieldOp>(
              l, then.create<vector::InsertOp>(l, value, current, lane)
                     .getResult());
        },
        [&](OpBuilder &otherwise, Location l) {
          otherwise.create<scf::YieldOp>(l, current);
        });
    result = branch.getResult(0);
  }
  gather.replaceAllUsesWith(result);
  gather.erase();
}

struct LowerStridedGathersPass
    : cuvil::impl::LowerStridedGathersBase<LowerStridedGathersPass> {
  void runOnOperation() override {
    auto strided = [&] {
      SmallVector<vector::GatherOp> found;
      getOperation().walk([&](vector::GatherOp gather) {
        if (!hasContiguousInnermost(gather))
          found.push_back(gather);
      });
      return found;
    };
    SmallVector<Operation *> nd;
    for (vector::GatherOp gather : strided())
      if (gather.getVectorType().getRank() > 1)
        nd.push_back(gather);
    if (!nd.empty()) {
      // MLIR's patterns flatten them to 1-D gathers (new ops, rewritten
      // too); its conditional loads need a contiguous innermost dimension.
      RewritePatternSet patterns(&getContext());
      vector::populateVectorGatherLoweringPatterns(patterns);
      GreedyRewriteConfig config;
      config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
      if (failed(applyOpPatternsAndFold(nd, std::move(patterns), config)))
        return signalPassFailure();
    }
    for (vector::GatherOp gather : strided())
      if (gather.getVectorType().getRank() == 1)
        scalarize(gather);
  }
};

} // namespace
