//===- WidenF16.cpp - The cuvil-widen-f16 pass ----------------------------===//
//
// float16 computed in float32: every f16 tensor in a function becomes f32,
// signature included. Shape rules do not depend on the float type, so
// retyping in place keeps every op valid.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_WIDENF16
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// `type` with f32 elements when it is an f16 tensor, else null.
Type widened(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isF16())
    return {};
  return tensor.clone(Float32Type::get(type.getContext()));
}

struct WidenF16Pass : public cuvil::impl::WidenF16Base<WidenF16Pass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool changed = false;
    for (BlockArgument argument : func.getArguments())
      if (Type wide = widened(argument.getType())) {
        argument.setType(wide);
        changed = true;
      }
    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        if (Type wide = widened(result.getType())) {
          result.setType(wide);
          changed = true;
        }
      auto constant = dyn_cast<ConstantOp>(op);
      auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue())
                            : DenseFPElementsAttr();
      if (dense && dense.getElementType().isF16()) {
        // f16 values are exact in f32.
        auto type = cast<ShapedType>(constant.getType());
        constant.setValueAttr(
            dense.mapValues(type.getElementType(), [](const APFloat &value) {
              bool lost = false;
              APFloat wide = value;
              wide.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                           &lost);
              return wide.bitcastToAPInt();
            }));
      }
    });
    if (!changed)
      return markAllAnalysesPreserved();
    SmallVector<Type> results;
    for (Type type : func.getResultTypes()) {
      Type wide = widened(type);
      results.push_back(wide ? wide : type);
    }
    func.setType(FunctionType::get(&getContext(),
                                   func.getBody().getArgumentTypes(), results));
    // Casts that became f32 to f32.
    func.walk([](CastOp cast) {
      if (cast.getInput().getType() == cast.getType()) {
        cast.replaceAllUsesWith(cast.getInput());
        cast.erase();
      }
    });
  }
};
} // namespace
