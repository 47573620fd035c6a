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
    Value result = elementwise(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
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

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }


Value compare(CompareOp op, OpBuilder &b, Location loc, ValueRange args) {
  StringRef p = op.getPredicate();
  if (isFloat(args[0])) {
    auto pred = llvm::StringSwitch<arith::CmpFPredicate>(p)
                    .Case("eq", arith::CmpFPredicate::OEQ)
                    .Case("ne", arith::CmpFPredicate::UNE)
                    .Case("lt", arith::CmpFPredicate::OLT)
                    .Case("le", arith::CmpFPredicate::OLE)
                    .Case("gt", arith::CmpFPredicate::OGT)
                    .Default(arith::CmpFPredicate::OGE);
    return b.create<arith::CmpFOp>(loc, pred, args[0], args[1]);
  }
  bool isBool = args[0].getType().isInteger(1);
  auto pred = llvm::StringSwitch<arith::CmpIPredicate>(p)
                  .Case("eq", arith::CmpIPredicate::eq)
                  .Case("ne", arith::CmpIPredicate::ne)
                  .Case("lt", isBool ? arith::CmpIPredicate::ult
                                     : arith::CmpIPredicate::slt)
                  .Case("le", isBool ? arith::CmpIPredicate::ule
                                     : arith::CmpIPredicate::sle)
                  .Case("gt", isBool ? arith::CmpIPredicate::ugt
                                     : arith::CmpIPredicate::sgt)
                  .Default(isBool ? arith::CmpIPredicate::uge
                                  : arith::CmpIPredicate::sge);
  return b.create<arith::CmpIOp>(loc, pred, args[0], args[1]);
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
  add<PowOp>(patterns, power);
  add<CompareOp>(patterns, compare);
  add<WhereOp>(patterns, [](WhereOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<arith::SelectOp>(l, a[0], a[1], a[2]).getResult();
  });
  add<NegOp>(patterns, negate);
  add<AbsOp>(patterns, absolute);
  add<ExpOp>(patterns, [](ExpOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<math::ExpOp>(l, a[0]).getResult();
  });
  add<LogOp>(patterns, [](LogOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<math::LogOp>(l, a[0]).getResult();
  });
  add<TanhOp>(patterns, [](TanhOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<math::TanhOp>(l, a[0]).getResult();
  });
  add<SqrtOp>(patterns, [](SqrtOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<math::SqrtOp>(l, a[0]).getResult();
  });
  add<RsqrtOp>(patterns, [](RsqrtOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<math::RsqrtOp>(l, a[0]).getResult();
  });
  add<ErfOp>(patterns, [](ErfOp, OpBuilder &b, Location l, ValueRange a) {
    return b.create<math::ErfOp>(l, a[0]).getResult();
  });
  add<SigmoidOp>(patterns, sigmoid);
  add<ReluOp>(patterns, relu);
  add<GeluOp>(patterns, gelu);
  add<CastOp>(patterns, [](CastOp op, OpBuilder &b, Location l, ValueRange a) {
    return scalarConvert(b, l, a[0], op.getType().getElementType());
  });
  add<BroadcastToOp>(patterns,
                     [](BroadcastToOp, OpBuilder &, Location, ValueRange a) {
                       return a[0];
                     });
  patterns.add<ConstantLowering, DropoutLowering>(patterns.getContext());
}
