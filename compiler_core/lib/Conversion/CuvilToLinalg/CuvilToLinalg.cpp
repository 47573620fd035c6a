//===- CuvilToLinalg.cpp - The convert-cuvil-to-linalg pass and builders --===//
//
// Drives the dialect conversion and holds the generic builders (broadcast
// maps, elementwise generics, reductions, reshapes) that the op patterns in
// ElementwiseLowering.cpp and StructuredLowering.cpp share.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "cuvil/Conversion/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CONVERTCUVILTOLINALG
#include "cuvil/Conversion/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::lowering;

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

Value lowering::emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                            ValueRange dynamicSizes) {
  return b.create<tensor::EmptyOp>(loc, type, dynamicSizes);
}

Value lowering::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                             TypedAttr value, ValueRange dynamicSizes) {
  Value scalar = b.create<arith::ConstantOp>(loc, value);
  return b
      .create<linalg::FillOp>(loc, scalar,
                              emptyTensor(b, loc, type, dynamicSizes))
      .getResult(0);
}

/// For each dynamic dimension of `type`, an input and its dimension that
/// `maps` address it with and whose size is dynamic too.
static FailureOr<SmallVector<std::pair<Value, int64_t>>>
dynamicSources(RankedTensorType type, ValueRange inputs,
               ArrayRef<AffineMap> maps) {
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    std::optional<std::pair<Value, int64_t>> source;
    AffineExpr dim = getAffineDimExpr(d, type.getContext());
    for (auto [input, map] : llvm::zip(inputs, maps)) {
      auto inType = cast<RankedTensorType>(input.getType());
      for (auto [j, e] : llvm::enumerate(map.getResults()))
        if (!source && e == dim && inType.isDynamicDim(j))
          source = {input, (int64_t)j};
    }
    if (!source)
      return failure();
    sources.push_back(*source);
  }
  return sources;
}

bool lowering::providesDynamicSizes(RankedTensorType type, ValueRange inputs,
                                    ArrayRef<AffineMap> maps) {
  return succeeded(dynamicSources(type, inputs, maps));
}

FailureOr<SmallVector<Value>> lowering::dynamicSizes(OpBuilder &b, Location loc,
                                                     RankedTensorType type,
                                                     ValueRange inputs,
                                                     ArrayRef<AffineMap> maps) {
  auto sources = dynamicSources(type, inputs, maps);
  if (failed(sources))
    return failure();
  SmallVector<Value> sizes;
  for (auto [input, dim] : *sources)
    sizes.push_back(b.create<tensor::DimOp>(loc, input, dim));
  return sizes;
}

SmallVector<AffineMap> lowering::broadcastMaps(MLIRContext *ctx,
                                               RankedTensorType resultType,
                                               ValueRange inputs) {
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(
        broadcastMap(ctx, cast<RankedTensorType>(input.getType()).getShape(),
                     resultType.getShape()));
  return maps;
}

AffineMap lowering::broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> resultShape) {
  unsigned rank = resultShape.size();
  unsigned offset = rank - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (size == 1 && resultShape[i + offset] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(i + offset, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

AffineMap lowering::projectionMap(MLIRContext *ctx, unsigned rank,
                                  ArrayRef<int64_t> droppedDims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(droppedDims, (int64_t)d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value lowering::elementwiseWithMaps(OpBuilder &b, Location loc,
                                    RankedTensorType resultType,
                                    ValueRange inputs,
                                    ArrayRef<AffineMap> inputMaps,
                                    ScalarBody body, ValueRange resultSizes) {
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  // Shape rules only make a dimension dynamic when an operand's is; a
  // caller whose inputs do not span the result passes its sizes.
  SmallVector<Value> sizes(resultSizes);
  if (resultSizes.empty() && resultType.getNumDynamicDims()) {
    auto fromInputs = dynamicSizes(b, loc, resultType, inputs, inputMaps);
    assert(succeeded(fromInputs) && "a dynamic result size no input provides");
    sizes = *fromInputs;
  }
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, inputs,
      ValueRange{emptyTensor(b, loc, resultType, sizes)}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        nb.create<linalg::YieldOp>(nloc, result);
      });
  return generic.getResult(0);
}

Value lowering::elementwise(OpBuilder &b, Location loc,
                            RankedTensorType resultType, ValueRange inputs,
                            ScalarBody body) {
  return elementwiseWithMaps(b, loc, resultType, inputs,
                             broadcastMaps(b.getContext(), resultType, inputs),
                             body);
}

Value lowering::scalarConstant(OpBuilder &b, Location loc, Type type,
                               double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

TypedAttr lowering::reductionInit(Builder &b, Type elementType,
                                  ReduceKind kind) {
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    const llvm::fltSemantics &sem = floatType.getFloatSemantics();
    switch (kind) {
    case ReduceKind::Sum:
      return b.getFloatAttr(floatType, 0.0);
    case ReduceKind::Max:
      return b.getFloatAttr(floatType, APFloat::getInf(sem, /*Negative=*/true));
    case ReduceKind::Min:
      return b.getFloatAttr(floatType, APFloat::getInf(sem, false));
    }
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  switch (kind) {
  case ReduceKind::Sum:
    return b.getIntegerAttr(elementType, 0);
  case ReduceKind::Max:
    return b.getIntegerAttr(elementType, width == 1
                                             ? APInt(1, 0)
                                             : APInt::getSignedMinValue(width));
  case ReduceKind::Min:
    return b.getIntegerAttr(elementType, width == 1
                                             ? APInt(1, 1)
                                             : APInt::getSignedMaxValue(width));
  }
  llvm_unreachable("unknown reduction");
}

Value lowering::reduce(OpBuilder &b, Location loc, Value input,
                       ArrayRef<int64_t> axes, ReduceKind kind) {
  auto inType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> outShape;
  for (auto [d, size] : llvm::enumerate(inType.getShape()))
    if (!llvm::is_contained(axes, (int64_t)d))
      outShape.push_back(size);
  auto outType = RankedTensorType::get(outShape, inType.getElementType());
  unsigned rank = inType.getRank();
  AffineMap kept = projectionMap(b.getContext(), rank, axes);
  SmallVector<Value> sizes;
  for (auto [j, e] : llvm::enumerate(kept.getResults()))
    if (outType.isDynamicDim(j))
      sizes.push_back(b.create<tensor::DimOp>(
          loc, input, cast<AffineDimExpr>(e).getPosition()));
  Value init = filledTensor(
      b, loc, outType, reductionInit(b, inType.getElementType(), kind), sizes);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 projectionMap(b.getContext(), rank, axes)};
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < rank; ++d)
    iterators.push_back(llvm::is_contained(axes, (int64_t)d)
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{outType}, ValueRange{input}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result;
        switch (kind) {
        case ReduceKind::Sum:
          result = scalarAdd(nb, nloc, args[1], args[0]);
          break;
        case ReduceKind::Max:
          result = scalarMax(nb, nloc, args[1], args[0]);
          break;
        case ReduceKind::Min:
          result = scalarMin(nb, nloc, args[1], args[0]);
          break;
        }
        nb.create<linalg::YieldOp>(nloc, result);
      });
  return generic.getResult(0);
}

Value lowering::reshape(OpBuilder &b, Location loc, Value input,
                        RankedTensorType resultType) {
  auto inType = cast<RankedTensorType>(input.getType());
  if (inType == resultType)
    return input;
  if (onlyForgetsSizes(inType, resultType))
    return b.create<tensor::CastOp>(loc, resultType, input);
  // collapse/expand cannot turn dynamic sizes into static ones: those go
  // through a flat vector cast to its static length.
  bool toStatic = !inType.hasStaticShape() && resultType.hasStaticShape();
  if (inType.getRank() > 0 && resultType.getRank() > 0 && !toStatic) {
    if (inType.getRank() > resultType.getRank()) {
      if (auto groups = reshapeGroups(inType, resultType, /*expanding=*/false))
        return b.create<tensor::CollapseShapeOp>(loc, resultType, input,
                                                 *groups);
    } else if (inType.getRank() < resultType.getRank()) {
      if (auto groups = reshapeGroups(resultType, inType, /*expanding=*/true))
        return b.create<tensor::ExpandShapeOp>(loc, resultType, input, *groups);
    }
  }
  // General case: through a flat vector. Rank 0 is reached from and to a
  // one-element vector with an empty reassociation.
  int64_t count =
      inType.hasStaticShape() ? inType.getNumElements() : ShapedType::kDynamic;
  auto flatType = RankedTensorType::get({count}, inType.getElementType());
  auto all = [](int64_t rank) {
    SmallVector<ReassociationIndices> groups;
    if (rank > 0)
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return groups;
  };
  Value flat = input;
  if (inType.getRank() == 0)
    flat = b.create<tensor::ExpandShapeOp>(loc, flatType, input, all(0));
  else if (inType.getRank() > 1)
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, input,
                                             all(inType.getRank()));
  if (toStatic) {
    flatType = RankedTensorType::get({resultType.getNumElements()},
                                     inType.getElementType());
    flat = b.create<tensor::CastOp>(loc, flatType, flat);
  }
  if (resultType.getRank() == 1)
    return flat == input || flat.getType() == resultType
               ? flat
               : b.create<tensor::CastOp>(loc, resultType, flat).getResult();
  if (resultType.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, resultType, flat, all(0));
  return b.create<tensor::ExpandShapeOp>(loc, resultType, flat,
                                         all(resultType.getRank()));
}

//===----------------------------------------------------------------------===//
// Scalar arithmetic by element type
//===----------------------------------------------------------------------===//

static bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value lowering::scalarAdd(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::AddFOp>(loc, l, r);
  if (l.getType().isInteger(1))
    return b.create<arith::OrIOp>(loc, l, r);
  return b.create<arith::AddIOp>(loc, l, r);
}
Value lowering::scalarSub(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::SubFOp>(loc, l, r);
  return b.create<arith::SubIOp>(loc, l, r);
}
Value lowering::scalarMul(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::MulFOp>(loc, l, r);
  if (l.getType().isInteger(1))
    return b.create<arith::AndIOp>(loc, l, r);
  return b.create<arith::MulIOp>(loc, l, r);
}
/// Floor division or C remainder of integers that cannot trap: `l op 0` is 0
/// (NumPy's answer) and `l op -1` is `-l` or 0 (MIN / -1 would overflow).
static Value safeIntegerDivision(OpBuilder &b, Location loc, Value l, Value r,
                                 bool quotient) {
  using Pred = arith::CmpIPredicate;
  Type type = l.getType();
  Value zero = scalarConstant(b, loc, type, 0);
  Value isZero = b.create<arith::CmpIOp>(loc, Pred::eq, r, zero);
  Value isMinusOne = b.create<arith::CmpIOp>(loc, Pred::eq, r,
                                             scalarConstant(b, loc, type, -1));
  Value divisor = b.create<arith::SelectOp>(
      loc, b.create<arith::OrIOp>(loc, isZero, isMinusOne),
      scalarConstant(b, loc, type, 1), r);
  Value rem = b.create<arith::RemSIOp>(loc, l, divisor);
  Value result = rem, byMinusOne = zero;
  if (quotient) {
    // Truncated quotient, one less where an inexact quotient is negative.
    Value inexact = b.create<arith::CmpIOp>(loc, Pred::ne, rem, zero);
    Value signsDiffer = b.create<arith::XOrIOp>(
        loc, b.create<arith::CmpIOp>(loc, Pred::slt, rem, zero),
        b.create<arith::CmpIOp>(loc, Pred::slt, divisor, zero));
    Value adjust = b.create<arith::ExtUIOp>(
        loc, type, b.create<arith::AndIOp>(loc, inexact, signsDiffer));
    result = b.create<arith::SubIOp>(
        loc, b.create<arith::DivSIOp>(loc, l, divisor), adjust);
    byMinusOne = b.create<arith::SubIOp>(loc, zero, l);
  }
  result = b.create<arith::SelectOp>(loc, isMinusOne, byMinusOne, result);
  return b.create<arith::SelectOp>(loc, isZero, zero, result);
}

Value lowering::scalarDiv(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::DivFOp>(loc, l, r);
  return safeIntegerDivision(b, loc, l, r, /*quotient=*/true);
}
Value lowering::scalarRem(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::RemFOp>(loc, l, r);
  return safeIntegerDivision(b, loc, l, r, /*quotient=*/false);
}
Value lowering::scalarMax(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::MaximumFOp>(loc, l, r);
  if (l.getType().isInteger(1))
    return b.create<arith::OrIOp>(loc, l, r);
  return b.create<arith::MaxSIOp>(loc, l, r);
}
Value lowering::scalarMin(OpBuilder &b, Location loc, Value l, Value r) {
  if (isFloat(l))
    return b.create<arith::MinimumFOp>(loc, l, r);
  if (l.getType().isInteger(1))
    return b.create<arith::AndIOp>(loc, l, r);
  return b.create<arith::MinSIOp>(loc, l, r);
}

Value lowering::scalarConvert(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, loc, from, 0.0);
    if (fromFloat)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v, zero);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v, zero);
  }
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return b.create<arith::ExtFOp>(loc, to, v);
    return b.create<arith::TruncFOp>(loc, to, v);
  }
  if (fromFloat)
    return b.create<arith::FPToSIOp>(loc, to, v);
  bool fromBool = from.isInteger(1);
  if (toFloat)
    return fromBool ? b.create<arith::UIToFPOp>(loc, to, v).getResult()
                    : b.create<arith::SIToFPOp>(loc, to, v).getResult();
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return fromBool ? b.create<arith::ExtUIOp>(loc, to, v).getResult()
                    : b.create<arith::ExtSIOp>(loc, to, v).getResult();
  return b.create<arith::TruncIOp>(loc, to, v);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
/// Why `op` cannot be lowered because a tensor it reads or makes is empty
/// (a dimension of size 0: MLIR's tiling divides by it), or "".
std::string emptyTensorRefusal(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && llvm::is_contained(tensor.getShape(), 0))
      return "works on an empty tensor (" + formatShape(tensor.getShape()) +
             "): Cuvil does not compile tensors with a dimension of size 0; "
             "give every dimension a size of at least 1";
  }
  return "";
}

struct ConvertCuvilToLinalgPass
    : public cuvil::impl::ConvertCuvilToLinalgBase<ConvertCuvilToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<CuvilDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           func::FuncDialect>();
    // Name what still needs static sizes, with the op's location, instead
    // of the conversion's bare "failed to legalize".
    WalkResult refused = getOperation()->walk([](Operation *op) {
      if (!isa_and_nonnull<CuvilDialect>(op->getDialect()))
        return WalkResult::advance();
      std::string reason = emptyTensorRefusal(op);
      if (reason.empty())
        reason = dynamicSizeRefusal(op);
      if (reason.empty())
        return WalkResult::advance();
      op->emitOpError() << reason;
      return WalkResult::interrupt();
    });
    if (refused.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    populateElementwisePatterns(patterns);
    populateStructuredPatterns(patterns);
    populateWindowPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
