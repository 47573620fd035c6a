//===- QuantizedLowering.cpp - cuvil.quantized_matmul to linalg -----------===//
//
// An int4 weight-only GEMM as two linalg.generic ops over views that keep
// every indexing map a projected permutation (so both vectorize):
//
//   B4[kg, kk, h, j]  = nibble_h(packed3[kg, kk, j]) * scales3[kg, h, j]
//   out3[m, h, j]    += A3[m, kg, kk] * B4[kg, kk, h, j]
//
// with K = (kg, kk) split by the group size, N = (h, j) split in halves (the
// low and high nibble of a byte), A3, packed3, scales3 and out3 expanded
// views of the operands and result. The contraction carries
// `cuvil.dequantized_gemm`: the CPU schedule fuses the dequantization into
// its K loop, one group of rows at a time, so the weight is never
// materialized in float32.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::lowering;

namespace {

/// `v` (static except maybe dim 0) expanded by `groups` into `shape`.
Value expand(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape,
             ArrayRef<ReassociationIndices> groups) {
  auto type = cast<RankedTensorType>(v.getType());
  auto expanded = RankedTensorType::get(shape, type.getElementType());
  SmallVector<OpFoldResult> sizes;
  for (auto [d, size] : llvm::enumerate(shape))
    sizes.push_back(
        ShapedType::isDynamic(size)
            ? OpFoldResult(b.create<tensor::DimOp>(loc, v, 0).getResult())
            : OpFoldResult(b.getIndexAttr(size)));
  return b.create<tensor::ExpandShapeOp>(loc, expanded, v, groups, sizes);
}

AffineMap mapOf(MLIRContext *ctx, unsigned loops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(loops, 0, exprs, ctx);
}

/// B4[kg, kk, h, j] from packed3 (kg, kk, j) and scales3 (kg, h, j).
Value dequantize(OpBuilder &b, Location loc, Value packed3, Value scales3,
                 RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {mapOf(ctx, 4, {0, 1, 3}),
                                 mapOf(ctx, 4, {0, 2, 3}),
                                 AffineMap::getMultiDimIdentityMap(4, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  Type element = type.getElementType();
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, ValueRange{packed3, scales3},
          ValueRange{emptyTensor(b, loc, type)}, maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value four = nb.create<arith::ConstantIntOp>(l, 4, 8);
            Value low = nb.create<arith::ShRSIOp>(
                l, nb.create<arith::ShLIOp>(l, a[0], four), four);
            Value high = nb.create<arith::ShRSIOp>(l, a[0], four);
            Value h = nb.create<linalg::IndexOp>(l, 2);
            Value zero = nb.create<arith::ConstantIndexOp>(l, 0);
            Value isHigh =
                nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, h, zero);
            Value code = nb.create<arith::SelectOp>(l, isHigh, high, low);
            Value value = nb.create<arith::SIToFPOp>(l, element, code);
            nb.create<linalg::YieldOp>(
                l, nb.create<arith::MulFOp>(l, value, a[1]).getResult());
          })
      .getResult(0);
}

} // namespace

Value lowering::dequantizedGemm(OpBuilder &b, Location loc, Value rows,
                                Value packed, Value scales, int64_t group) {
  MLIRContext *ctx = b.getContext();
  auto rowsType = cast<RankedTensorType>(rows.getType());
  auto packedType = cast<RankedTensorType>(packed.getType());
  Type element = rowsType.getElementType();
  int64_t m = rowsType.getDimSize(0), k = rowsType.getDimSize(1);
  int64_t half = packedType.getDimSize(1), groups = k / group;
  Value a3 = expand(b, loc, rows, {m, groups, group}, {{0}, {1, 2}});
  Value packed3 = expand(b, loc, packed, {groups, group, half}, {{0, 1}, {2}});
  Value scales3 = expand(b, loc, scales, {groups, 2, half}, {{0}, {1, 2}});
  auto b4Type = RankedTensorType::get({groups, group, 2, half}, element);
  Value b4 = dequantize(b, loc, packed3, scales3, b4Type);

  auto out3Type = RankedTensorType::get({m, 2, half}, element);
  SmallVector<Value> sizes;
  if (ShapedType::isDynamic(m))
    sizes.push_back(b.create<tensor::DimOp>(loc, rows, 0));
  Value init = filledTensor(b, loc, out3Type,
                            reductionInit(b, element, ReduceKind::Sum), sizes);
  // Loops (m, h, j, kg, kk).
  SmallVector<AffineMap> maps = {mapOf(ctx, 5, {0, 3, 4}),
                                 mapOf(ctx, 5, {3, 4, 1, 2}),
                                 mapOf(ctx, 5, {0, 1, 2})};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto gemm = b.create<linalg::GenericOp>(
      loc, TypeRange{out3Type}, ValueRange{a3, b4}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange a) {
        // `contract`: one fused multiply-add per step, as the GEMMs of
        // unquantized weights get from their vector contraction.
        auto contract = arith::FastMathFlags::contract;
        Value product = nb.create<arith::MulFOp>(l, a[0], a[1], contract);
        nb.create<linalg::YieldOp>(
            l,
            nb.create<arith::AddFOp>(l, a[2], product, contract).getResult());
      });
  gemm->setAttr(CuvilDialect::DequantizedGemmAttrHelper::getNameStr(),
                b.getUnitAttr());
  return b.create<tensor::CollapseShapeOp>(
      loc, gemm.getResult(0), SmallVector<ReassociationIndices>{{0}, {1, 2}});
}
