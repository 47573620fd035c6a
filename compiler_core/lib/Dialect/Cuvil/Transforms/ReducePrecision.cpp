//===- ReducePrecision.cpp - The cuvil-reduce-precision pass --------------===//
//
// Mixed precision for matmuls: bf16 or fp16 operands, f32 accumulation and
// result. Constant weights are converted here, once; other operands get one
// cast per value, shared by every matmul that reads it. TF32 only marks the
// function: its operands are float32 rounded where they are read.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_REDUCEPRECISION
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// `dense` (float) rounded to `type` (round to nearest even).
DenseElementsAttr convertFloats(DenseElementsAttr dense, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  return cast<DenseFPElementsAttr>(dense).mapValues(
      type, [&](const APFloat &value) {
        APFloat converted = value;
        bool lost = false;
        converted.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
        return converted.bitcastToAPInt();
      });
}

struct ReducePrecisionPass
    : public cuvil::impl::ReducePrecisionBase<ReducePrecisionPass> {
  using ReducePrecisionBase::ReducePrecisionBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    if (precision == "tf32")
      return allowTf32();
    FloatType narrow;
    if (precision == "bf16")
      narrow = FloatType::getBF16(context);
    else if (precision == "fp16")
      narrow = FloatType::getF16(context);
    else {
      getOperation().emitError("cuvil-reduce-precision: precision '")
          << precision << "' is not one of bf16, fp16, tf32";
      return signalPassFailure();
    }
    FloatType f32 = FloatType::getF32(context);
    // One narrow value per f32 value, however many matmuls read it.
    llvm::DenseMap<Value, Value> narrowed;
    auto narrowOf = [&](OpBuilder &b, Value value) {
      Value &slot = narrowed[value];
      if (slot)
        return slot;
      auto type = cast<RankedTensorType>(value.getType());
      auto narrowType = RankedTensorType::get(type.getShape(), narrow);
      OpBuilder::InsertionGuard guard(b);
      if (auto constant = value.getDefiningOp<ConstantOp>()) {
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
          b.setInsertionPointAfter(constant);
          return slot = b.create<ConstantOp>(constant.getLoc(),
                                             convertFloats(dense, narrow));
        }
      }
      b.setInsertionPointAfterValue(value);
      return slot = b.create<CastOp>(value.getLoc(), narrowType, value);
    };
    bool changed = false;
    getOperation().walk([&](MatmulOp matmul) {
      auto type = matmul.getType();
      if (type.getElementType() != f32 ||
          matmul.getLhs().getType().getElementType() != f32)
        return;
      OpBuilder b(matmul);
      Value lhs = narrowOf(b, matmul.getLhs());
      Value rhs = narrowOf(b, matmul.getRhs());
      b.setInsertionPoint(matmul);
      auto replacement = b.create<MatmulOp>(matmul.getLoc(), type, lhs, rhs);
      matmul.replaceAllUsesWith(replacement.getResult());
      matmul.erase();
      changed = true;
    });
    // Constants whose every reader now takes the narrow copy (only those:
    // other unused constants are not this pass's business).
    for (auto [value, narrow] : narrowed)
      if (auto constant = value.getDefiningOp<ConstantOp>();
          constant && constant->use_empty())
        constant.erase();
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// TF32 changes no type: the function is marked, and a target with TF32
  /// tensor cores reads its float32 matmuls' operands as TF32.
  void allowTf32() {
    func::FuncOp func = getOperation();
    bool any = false;
    func.walk([&](MatmulOp matmul) {
      any |= matmul.getType().getElementType().isF32() &&
             matmul.getLhs().getType().getElementType().isF32();
    });
    StringRef name = CuvilDialect::Tf32MatmulsAttrHelper::getNameStr();
    if (!any || func->hasAttr(name))
      return markAllAnalysesPreserved();
    func->setAttr(name, UnitAttr::get(&getContext()));
  }
};
} // namespace
