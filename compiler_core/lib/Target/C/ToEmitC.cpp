//===- ToEmitC.cpp - Loop-level IR with static buffers to EmitC -----------===//
//
// The last pass of the C target: cuvil-c-to-emitc (MLIR's arith, SCF,
// memref and func patterns, plus memref function arguments and math ops,
// which MLIR 19's conversions leave out), run on loops over the static
// buffers cuvil-static-buffers made.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/C/Passes.h"

#include "mlir/Conversion/ArithToEmitC/ArithToEmitC.h"
#include "mlir/Conversion/FuncToEmitC/FuncToEmitC.h"
#include "mlir/Conversion/MemRefToEmitC/MemRefToEmitC.h"
#include "mlir/Conversion/SCFToEmitC/SCFToEmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CTOEMITC
#include "cuvil/Target/C/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// cuvil-c-to-emitc
//===----------------------------------------------------------------------===//

/// The <math.h> function computing a math op, by op name; f32 adds "f".
const llvm::StringMap<StringRef> &mathFunctions() {
  static const llvm::StringMap<StringRef> table = {
      {"math.exp", "exp"},        {"math.log", "log"},
      {"math.tanh", "tanh"},      {"math.erf", "erf"},
      {"math.sqrt", "sqrt"},      {"math.sin", "sin"},
      {"math.cos", "cos"},        {"math.floor", "floor"},
      {"math.ceil", "ceil"},      {"math.trunc", "trunc"},
      {"math.roundeven", "rint"}, {"math.round", "round"},
      {"math.absf", "fabs"},      {"math.fma", "fma"},
      {"math.powf", "pow"},       {"math.exp2", "exp2"},
      {"math.log2", "log2"},      {"math.log1p", "log1p"},
      {"math.expm1", "expm1"},    {"math.atan", "atan"},
      {"math.atan2", "atan2"},    {"math.copysign", "copysign"},
  };
  return table;
}

/// A float math op as a call of its <math.h> function (`rsqrt` as 1/sqrt).
struct MathToCall : ConversionPattern {
  MathToCall(TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getDialect()->getNamespace() != "math" || op->getNumResults() != 1)
      return failure();
    Type resultType = op->getResult(0).getType();
    if (isa<math::AbsIOp>(op) && resultType.isInteger(32)) {
      rewriter.replaceOpWithNewOp<emitc::CallOpaqueOp>(
          op, TypeRange{resultType}, "abs", operands);
      return success();
    }
    if (isa<math::AbsIOp>(op) && resultType.isInteger(64)) {
      rewriter.replaceOpWithNewOp<emitc::CallOpaqueOp>(
          op, TypeRange{resultType}, "llabs", operands);
      return success();
    }
    auto type = dyn_cast<FloatType>(resultType);
    if (!type || !(type.isF32() || type.isF64()))
      return rewriter.notifyMatchFailure(op, "not an f32 or f64 op");
    StringRef suffix = type.isF32() ? "f" : "";
    StringRef name = op->getName().getStringRef();
    Location loc = op->getLoc();
    if (name == "math.rsqrt") {
      Value root =
          rewriter
              .create<emitc::CallOpaqueOp>(loc, TypeRange{type},
                                           ("sqrt" + suffix).str(), operands)
              .getResult(0);
      Value one = rewriter.create<emitc::ConstantOp>(
          loc, type, rewriter.getFloatAttr(type, 1.0));
      rewriter.replaceOpWithNewOp<emitc::DivOp>(op, type, one, root);
      return success();
    }
    auto found = mathFunctions().find(name);
    if (found == mathFunctions().end())
      return rewriter.notifyMatchFailure(op, "no <math.h> function");
    rewriter.replaceOpWithNewOp<emitc::CallOpaqueOp>(
        op, TypeRange{type}, (found->second + suffix).str(), operands);
    return success();
  }
};

/// Integer arithmetic on `index` (address computations from folded views
/// and affine maps, gather indices), which MLIR 19's arith-to-emitc leaves
/// out: the same EmitC operator on `index`, printed as size_t. Addition,
/// subtraction and multiplication wrap alike signed or not; signed division
/// and remainder (of a negative gather index) go through ptrdiff_t.
Value asSigned(ConversionPatternRewriter &rewriter, Location loc, Value v) {
  return rewriter.create<emitc::CastOp>(
      loc, emitc::PtrDiffTType::get(rewriter.getContext()), v);
}

template <typename ArithOp, typename EmitCOp, bool Signed = false>
struct IndexArithmetic : OpConversionPattern<ArithOp> {
  // Before MLIR's own patterns, which take some of these ops on index as
  // unsigned.
  IndexArithmetic(TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern<ArithOp>(converter, context, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(ArithOp op, typename ArithOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isIndex())
      return rewriter.notifyMatchFailure(op, "not on index");
    Location loc = op.getLoc();
    if (!Signed) {
      rewriter.replaceOpWithNewOp<EmitCOp>(op, op.getType(), adaptor.getLhs(),
                                           adaptor.getRhs());
      return success();
    }
    Value lhs = asSigned(rewriter, loc, adaptor.getLhs());
    Value rhs = asSigned(rewriter, loc, adaptor.getRhs());
    Value result = rewriter.create<EmitCOp>(loc, lhs.getType(), lhs, rhs);
    rewriter.replaceOpWithNewOp<emitc::CastOp>(op, op.getType(), result);
    return success();
  }
};

/// `arith.cmpi` on `index`, the signed predicates through ptrdiff_t.
struct IndexCompare : OpConversionPattern<arith::CmpIOp> {
  IndexCompare(TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::CmpIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getLhs().getType().isIndex())
      return rewriter.notifyMatchFailure(op, "not on index");
    using P = arith::CmpIPredicate;
    using E = emitc::CmpPredicate;
    P predicate = op.getPredicate();
    bool isSigned = predicate == P::slt || predicate == P::sle ||
                    predicate == P::sgt || predicate == P::sge;
    E result = llvm::StringSwitch<E>(arith::stringifyCmpIPredicate(predicate))
                   .Case("eq", E::eq)
                   .Case("ne", E::ne)
                   .Cases("slt", "ult", E::lt)
                   .Cases("sle", "ule", E::le)
                   .Cases("sgt", "ugt", E::gt)
                   .Default(E::ge);
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    if (isSigned) {
      lhs = asSigned(rewriter, op.getLoc(), lhs);
      rhs = asSigned(rewriter, op.getLoc(), rhs);
    }
    rewriter.replaceOpWithNewOp<emitc::CmpOp>(op, op.getType(), result, lhs,
                                              rhs);
    return success();
  }
};

void populateIndexArithmeticPatterns(TypeConverter &converter,
                                     RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<IndexArithmetic<arith::AddIOp, emitc::AddOp>,
               IndexArithmetic<arith::SubIOp, emitc::SubOp>,
               IndexArithmetic<arith::MulIOp, emitc::MulOp>,
               IndexArithmetic<arith::DivSIOp, emitc::DivOp, true>,
               IndexArithmetic<arith::DivUIOp, emitc::DivOp>,
               IndexArithmetic<arith::RemSIOp, emitc::RemOp, true>,
               IndexArithmetic<arith::RemUIOp, emitc::RemOp>, IndexCompare>(
      converter, context);
}

/// Conversions between floats, and between integers and `index`, as C casts
/// (MLIR 19's arith-to-emitc has neither).
template <typename ArithOp>
struct CastConversion : OpConversionPattern<ArithOp> {
  using OpConversionPattern<ArithOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArithOp op, typename ArithOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type)
      return failure();
    rewriter.replaceOpWithNewOp<emitc::CastOp>(op, type, adaptor.getIn());
    return success();
  }
};

/// `arith.remf` as <math.h>'s fmod (the dividend's sign, as arith.remf).
struct RemFConversion : OpConversionPattern<arith::RemFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::RemFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return rewriter.notifyMatchFailure(op, "not f32 or f64");
    rewriter.replaceOpWithNewOp<emitc::CallOpaqueOp>(
        op, TypeRange{type}, type.isF32() ? "fmodf" : "fmod",
        adaptor.getOperands());
    return success();
  }
};

/// The first op `module` still holds outside EmitC, for the error.
Operation *firstUnconverted(ModuleOp module) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (found || isa<ModuleOp, UnrealizedConversionCastOp>(op) ||
        isa<emitc::EmitCDialect>(op->getDialect()))
      return;
    found = op;
  });
  return found;
}

/// `memref<f32>` as `memref<1xf32>`, since C arrays (and EmitC's) have at
/// least one dimension: globals, function arguments and what reads them,
/// loads and stores getting the index 0. After views were folded into the
/// accesses, these are the only ops that see a rank-0 buffer.
LogicalResult promoteScalarBuffers(ModuleOp module) {
  auto promoted = [](Type type) -> Type {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || memref.getRank() != 0)
      return type;
    return MemRefType::get({1}, memref.getElementType());
  };
  LogicalResult result = success();
  module.walk([&](Operation *op) {
    if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      MemRefType type = global.getType();
      if (type.getRank() != 0)
        return;
      global.setType(cast<MemRefType>(promoted(type)));
      if (auto value =
              dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr()))
        global.setInitialValueAttr(
            value.reshape(RankedTensorType::get({1}, type.getElementType())));
      return;
    }
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      SmallVector<Type> inputs, outputs;
      for (Type type : func.getArgumentTypes())
        inputs.push_back(promoted(type));
      for (Type type : func.getResultTypes())
        outputs.push_back(promoted(type));
      func.setFunctionType(
          FunctionType::get(func.getContext(), inputs, outputs));
      if (!func.isDeclaration())
        for (BlockArgument argument : func.getArguments())
          argument.setType(promoted(argument.getType()));
      return;
    }
    if (isa<memref::GetGlobalOp>(op)) {
      op->getResult(0).setType(promoted(op->getResult(0).getType()));
      return;
    }
    OpBuilder builder(op);
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && load.getIndices().empty()) {
      Value zero = builder.create<arith::ConstantIndexOp>(op->getLoc(), 0);
      load.getIndicesMutable().assign(zero);
    } else if (auto store = dyn_cast<memref::StoreOp>(op);
               store && store.getIndices().empty()) {
      Value zero = builder.create<arith::ConstantIndexOp>(op->getLoc(), 0);
      store.getIndicesMutable().assign(zero);
    }
  });
  module.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (auto type = dyn_cast<MemRefType>(operand.getType());
          type && type.getRank() == 0 && succeeded(result))
        result = op->emitError()
                 << "the c target cannot express '"
                 << op->getName().getStringRef() << "' on a scalar buffer in C";
  });
  return result;
}

struct CToEmitCPass : cuvil::impl::CToEmitCBase<CToEmitCPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (failed(promoteScalarBuffers(module)))
      return signalPassFailure();

    // Functions, calls and returns first, with their memref types as they
    // are: MLIR 19's func-to-emitc converts no types.
    {
      RewritePatternSet patterns(context);
      populateFuncToEmitCPatterns(patterns);
      ConversionTarget target(*context);
      target.addIllegalDialect<func::FuncDialect>();
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(applyPartialConversion(module, target, std::move(patterns))))
        return signalPassFailure();
    }

    // Then everything else, memref function arguments becoming arrays.
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    populateMemRefToEmitCTypeConversion(converter);
    auto materialize = [](OpBuilder &builder, Type type, ValueRange inputs,
                          Location loc) -> Value {
      return builder.create<UnrealizedConversionCastOp>(loc, type, inputs)
          .getResult(0);
    };
    converter.addSourceMaterialization(materialize);
    converter.addTargetMaterialization(materialize);

    RewritePatternSet patterns(context);
    populateArithToEmitCPatterns(converter, patterns);
    // `index` stays `index` (printed as size_t): SCF's patterns convert no
    // types, so loop variables keep it. After the arith patterns, which add
    // index -> size_t, so that this one is tried first.
    converter.addConversion([](IndexType type) { return type; });
    populateMemRefToEmitCConversionPatterns(patterns, converter);
    populateSCFToEmitCConversionPatterns(patterns);
    populateFunctionOpInterfaceTypeConversionPattern<emitc::FuncOp>(patterns,
                                                                    converter);
    patterns.add<MathToCall>(converter, context);
    populateIndexArithmeticPatterns(converter, patterns);
    patterns.add<CastConversion<arith::ExtFOp>, CastConversion<arith::TruncFOp>,
                 CastConversion<arith::IndexCastOp>,
                 CastConversion<arith::IndexCastUIOp>, RemFConversion>(
        converter, context);

    // Partial: an op no pattern converts stays, and is named below with its
    // source location (a full conversion would roll everything back first).
    ConversionTarget target(*context);
    target.addLegalDialect<emitc::EmitCDialect>();
    target.addLegalOp<ModuleOp>();
    target.addDynamicallyLegalOp<emitc::FuncOp>([&](emitc::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType());
    });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    if (Operation *op = firstUnconverted(module)) {
      op->emitError() << "the c target cannot express '"
                      << op->getName().getStringRef()
                      << "' in C; fix: use target='cpu' for this model";
      return signalPassFailure();
    }
    // The functions are the file's kernels; its entry points call them.
    auto isStatic =
        ArrayAttr::get(context, {StringAttr::get(context, "static")});
    module.walk([&](emitc::FuncOp func) { func.setSpecifiersAttr(isStatic); });
  }
};

} // namespace
