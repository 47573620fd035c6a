//===- ElementwiseLowering.cpp - cuvil elementwise ops to linalg.generic --===//
//
// Each elementwise op becomes one parallel linalg.generic whose indexing maps
// encode NumPy broadcasting; fusion later merges chains of them.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::lowering;

namespace {

/// Lowers an op whose result is `body` applied to its broadcast operands.
template <typename OpTy>
struct ElementwiseLowering : public OpConversionPattern<OpTy> {
  using Body = Value (*)(OpTy, OpBuilder &, Location, ValueRange);
  ElementwiseLowering(MLIRContext *ctx, Body body)
      : OpConversionPattern<OpTy>(ctx), body(body) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    ValueRange operands = adaptor.getOperands();
    if (!providesDynamicSizes(
            resultType, operands,
            broadcastMaps(op.getContext(), resultType, operands)))
      return rewriter.notifyMatchFailure(
          op, "a dynamic result size that no operand has");
    Value result =
        elementwise(rewriter, op.getLoc(), resultType, adaptor.getOperands(),
                    [&](OpBuilder &b, Location loc, ValueRange args) {
                      return body(op, b, loc, args);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }

  Body body;
};

template <typename OpTy>
void add(RewritePatternSet &patterns,
         typename ElementwiseLowering<OpTy>::Body body) {
  patterns.add<ElementwiseLowering<OpTy>>(patterns.getContext(), body);
}

/// A cuvil unary op that is one `math` op on each element.
template <typename OpTy, typename MathOp>
void addMath(RewritePatternSet &patterns) {
  add<OpTy>(patterns, [](OpTy, OpBuilder &b, Location l, ValueRange a) {
    return b.create<MathOp>(l, a[0]).getResult();
  });
}

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

arith::CmpFPredicate floatPredicate(ComparePredicate p) {
  switch (p) {
  case ComparePredicate::eq:
    return arith::CmpFPredicate::OEQ;
  case ComparePredicate::ne:
    return arith::CmpFPredicate::UNE;
  case ComparePredicate::lt:
    return arith::CmpFPredicate::OLT;
  case ComparePredicate::le:
    return arith::CmpFPredicate::OLE;
  case ComparePredicate::gt:
    return arith::CmpFPredicate::OGT;
  case ComparePredicate::ge:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown compare predicate");
}

/// Booleans compare unsigned (true > false), other integers signed.
arith::CmpIPredicate integerPredicate(ComparePredicate p, bool isBool) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case ComparePredicate::eq:
    return P::eq;
  case ComparePredicate::ne:
    return P::ne;
  case ComparePredicate::lt:
    return isBool ? P::ult : P::slt;
  case ComparePredicate::le:
    return isBool ? P::ule : P::sle;
  case ComparePredicate::gt:
    return isBool ? P::ugt : P::sgt;
  case ComparePredicate::ge:
    return isBool ? P::uge : P::sge;
  }
  llvm_unreachable("unknown compare predicate");
}

Value compare(CompareOp op, OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0]))
    return b.create<arith::CmpFOp>(loc, floatPredicate(op.getPredicate()),
                                   args[0], args[1]);
  bool isBool = args[0].getType().isInteger(1);
  return b.create<arith::CmpIOp>(
      loc, integerPredicate(op.getPredicate(), isBool), args[0], args[1]);
}

Value power(PowOp, OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0]))
    return b.create<math::PowFOp>(loc, args[0], args[1]);
  return b.create<math::IPowIOp>(loc, args[0], args[1]);
}

Value negate(NegOp, OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0]))
    return b.create<arith::NegFOp>(loc, args[0]);
  return b.create<arith::SubIOp>(
      loc, scalarConstant(b, loc, args[0].getType(), 0), args[0]);
}

Value absolute(AbsOp, OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0]))
    return b.create<math::AbsFOp>(loc, args[0]);
  if (args[0].getType().isInteger(1))
    return args[0];
  return b.create<math::AbsIOp>(loc, args[0]);
}

Value sigmoid(SigmoidOp, OpBuilder &b, Location loc, ValueRange args) {
  Type t = args[0].getType();
  Value negExp =
      b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, args[0]));
  Value one = scalarConstant(b, loc, t, 1.0);
  return b.create<arith::DivFOp>(loc, one,
                                 b.create<arith::AddFOp>(loc, one, negExp));
}

Value relu(ReluOp, OpBuilder &b, Location loc, ValueRange args) {
  Value zero = scalarConstant(b, loc, args[0].getType(), 0.0);
  if (isFloat(args[0]))
    return b.create<arith::MaximumFOp>(loc, args[0], zero);
  return scalarMax(b, loc, args[0], zero);
}

Value gelu(GeluOp, OpBuilder &b, Location loc, ValueRange args) {
  Type t = args[0].getType();
  Value x = args[0];
  Value scaled = b.create<arith::MulFOp>(
      loc, x, scalarConstant(b, loc, t, 0.70710678118654752440));
  Value erf = b.create<math::ErfOp>(loc, scaled);
  Value onePlus =
      b.create<arith::AddFOp>(loc, scalarConstant(b, loc, t, 1.0), erf);
  Value half = b.create<arith::MulFOp>(loc, x, scalarConstant(b, loc, t, 0.5));
  return b.create<arith::MulFOp>(loc, half, onePlus);
}

/// cuvil.constant -> arith.constant (same dense payload).
struct ConstantLowering : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "constant is not typed");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// cuvil.dropout is the identity outside training.
struct DropoutLowering : public OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

} // namespace

void lowering::populateElementwisePatterns(RewritePatternSet &patterns) {
  add<AddOp>(patterns, [](AddOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarAdd(b, l, a[0], a[1]);
  });
  add<SubOp>(patterns, [](SubOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarSub(b, l, a[0], a[1]);
  });
  add<MulOp>(patterns, [](MulOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarMul(b, l, a[0], a[1]);
  });
  add<DivOp>(patterns, [](DivOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarDiv(b, l, a[0], a[1]);
  });
  add<MaxOp>(patterns, [](MaxOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarMax(b, l, a[0], a[1]);
  });
  add<MinOp>(patterns, [](MinOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarMin(b, l, a[0], a[1]);
  });
  add<RemOp>(patterns, [](RemOp, OpBuilder &b, Location l, ValueRange a) {
    return scalarRem(b, l, a[0], a[1]);
  });
  add<PowOp>(patterns, power);
  add<CompareOp>(patterns, compare);
  add<WhereOp>(patterns, [](WhereOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<arith::SelectOp>(l, a[0], a[1], a[2]).getResult();
  });
  add<NegOp>(patterns, negate);
  add<AbsOp>(patterns, absolute);
  addMath<ExpOp, math::ExpOp>(patterns);
  addMath<LogOp, math::LogOp>(patterns);
  addMath<TanhOp, math::TanhOp>(patterns);
  addMath<SqrtOp, math::SqrtOp>(patterns);
  addMath<RsqrtOp, math::RsqrtOp>(patterns);
  addMath<ErfOp, math::ErfOp>(patterns);
  addMath<SinOp, math::SinOp>(patterns);
  addMath<CosOp, math::CosOp>(patterns);
  addMath<FloorOp, math::FloorOp>(patterns);
  addMath<CeilOp, math::CeilOp>(patterns);
  addMath<TruncOp, math::TruncOp>(patterns);
  addMath<RoundOp, math::RoundEvenOp>(patterns);
  add<SigmoidOp>(patterns, sigmoid);
  add<ReluOp>(patterns, relu);
  add<GeluOp>(patterns, gelu);
  add<CastOp>(patterns, [](CastOp op, OpBuilder &b, Location l, ValueRange a) {
    return scalarConvert(b, l, a[0], op.getType().getElementType());
  });
  add<BroadcastToOp>(patterns, [](BroadcastToOp, OpBuilder &, Location,
                                  ValueRange a) { return a[0]; });
  patterns.add<ConstantLowering, DropoutLowering>(patterns.getContext());
}
