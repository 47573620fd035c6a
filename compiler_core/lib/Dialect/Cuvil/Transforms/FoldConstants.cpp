//===- FoldConstants.cpp - The cuvil-fold-constants pass ------------------===//
//
// Compile-time evaluation of float subgraphs whose inputs are all constants.
// Values are computed in double precision and rounded once to the result's
// element type, as NumPy would for the same expression on the weights.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

namespace mlir::cuvil {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// A dense float tensor being evaluated.
struct Tensor {
  SmallVector<int64_t> shape;
  std::vector<double> values;
};

std::optional<Tensor> readConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  Tensor t;
  t.shape.assign(dense.getType().getShape().begin(),
                 dense.getType().getShape().end());
  t.values.reserve(dense.getNumElements());
  for (const APFloat &value : dense.getValues<APFloat>())
    t.values.push_back(value.convertToDouble());
  return t;
}

/// Row-major strides of `shape`, with 0 for dims broadcast to `outShape`.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> strides(outShape.size(), 0);
  int64_t stride = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    int64_t o = i + (outShape.size() - shape.size());
    strides[o] = (shape[i] == 1 && outShape[o] != 1) ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

/// Calls `fn(outIndex, operandIndices)` for every element of `outShape`.
template <typename Fn>
void forEachBroadcast(ArrayRef<int64_t> outShape,
                      ArrayRef<SmallVector<int64_t>> strides, Fn fn) {
  int64_t count = 1;
  for (int64_t d : outShape)
    count *= d;
  SmallVector<int64_t> index(outShape.size(), 0);
  SmallVector<int64_t> offsets(strides.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(linear, ArrayRef<int64_t>(offsets));
    for (int64_t d = outShape.size() - 1; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < strides.size(); ++k)
        offsets[k] += strides[k][d];
      if (index[d] < outShape[d])
        break;
      for (size_t k = 0; k < strides.size(); ++k)
        offsets[k] -= strides[k][d] * outShape[d];
      index[d] = 0;
    }
  }
}

std::optional<double (*)(double)> unaryFunction(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<double (*)(double)>>(op)
      .Case([](NegOp) { return [](double x) { return -x; }; })
      .Case([](AbsOp) { return [](double x) { return std::fabs(x); }; })
      .Case([](ExpOp) { return [](double x) { return std::exp(x); }; })
      .Case([](LogOp) { return [](double x) { return std::log(x); }; })
      .Case([](TanhOp) { return [](double x) { return std::tanh(x); }; })
      .Case([](SqrtOp) { return [](double x) { return std::sqrt(x); }; })
      .Case([](RsqrtOp) { return [](double x) { return 1.0 / std::sqrt(x); }; })
      .Case([](ErfOp) { return [](double x) { return std::erf(x); }; })
      .Case([](SinOp) { return [](double x) { return std::sin(x); }; })
      .Case([](CosOp) { return [](double x) { return std::cos(x); }; })
      .Case([](FloorOp) { return [](double x) { return std::floor(x); }; })
      .Case([](CeilOp) { return [](double x) { return std::ceil(x); }; })
      .Case([](TruncOp) { return [](double x) { return std::trunc(x); }; })
      // The default rounding mode rounds ties to even, as the lowering does.
      .Case([](RoundOp) { return [](double x) { return std::nearbyint(x); }; })
      .Case([](SigmoidOp) {
        return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
      })
      .Case([](ReluOp) {
        // NaN-propagating, like the lowering (arith.maximumf) and np.maximum.
        return [](double x) { return std::isnan(x) || x > 0 ? x : 0.0; };
      })
      .Case([](GeluOp) {
        return [](double x) {
          return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440));
        };
      })
      .Case([](CastOp) { return [](double x) { return x; }; })
      .Case([](BroadcastToOp) { return [](double x) { return x; }; })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<double (*)(double, double)> binaryFunction(Operation *op) {
  using Fn = std::optional<double (*)(double, double)>;
  return llvm::TypeSwitch<Operation *, Fn>(op)
      .Case([](AddOp) { return [](double a, double b) { return a + b; }; })
      .Case([](SubOp) { return [](double a, double b) { return a - b; }; })
      .Case([](MulOp) { return [](double a, double b) { return a * b; }; })
      .Case([](DivOp) { return [](double a, double b) { return a / b; }; })
      .Case([](RemOp) {
        return [](double a, double b) { return std::fmod(a, b); };
      })
      .Case([](PowOp) {
        return [](double a, double b) { return std::pow(a, b); };
      })
      .Case([](MaxOp) {
        return [](double a, double b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
        };
      })
      .Case([](MinOp) {
        return [](double a, double b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
        };
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Evaluates `op` on constant operands; nullopt when not foldable here.
std::optional<std::vector<double>> evaluate(Operation *op,
                                            ArrayRef<Tensor> operands,
                                            RankedTensorType resultType) {
  ArrayRef<int64_t> outShape = resultType.getShape();
  int64_t count = resultType.getNumElements();
  std::vector<double> out(count);
  if (auto fn = unaryFunction(op); fn && operands.size() == 1) {
    SmallVector<SmallVector<int64_t>> strides = {
        broadcastStrides(operands[0].shape, outShape)};
    forEachBroadcast(outShape, strides, [&](int64_t i, ArrayRef<int64_t> at) {
      out[i] = (*fn)(operands[0].values[at[0]]);
    });
    return out;
  }
  if (auto fn = binaryFunction(op); fn && operands.size() == 2) {
    SmallVector<SmallVector<int64_t>> strides = {
        broadcastStrides(operands[0].shape, outShape),
        broadcastStrides(operands[1].shape, outShape)};
    forEachBroadcast(outShape, strides, [&](int64_t i, ArrayRef<int64_t> at) {
      out[i] = (*fn)(operands[0].values[at[0]], operands[1].values[at[1]]);
    });
    return out;
  }
  if (isa<ReshapeOp>(op))
    return operands[0].values;
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    // Output dim d reads input dim perm[d]: gather with permuted strides.
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> inStrides(perm.size(), 1);
    for (int64_t d = (int64_t)perm.size() - 2; d >= 0; --d)
      inStrides[d] = inStrides[d + 1] * operands[0].shape[d + 1];
    SmallVector<SmallVector<int64_t>> strides(1);
    for (int64_t p : perm)
      strides[0].push_back(inStrides[p]);
    forEachBroadcast(outShape, strides, [&](int64_t i, ArrayRef<int64_t> at) {
      out[i] = operands[0].values[at[0]];
    });
    return out;
  }
  return std::nullopt;
}

DenseElementsAttr toAttr(RankedTensorType type,
                         const std::vector<double> &values) {
  Type elementType = type.getElementType();
  if (elementType.isF64())
    return DenseElementsAttr::get(type, llvm::ArrayRef<double>(values));
  if (elementType.isF32()) {
    std::vector<float> narrowed(values.begin(), values.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef<float>(narrowed));
  }
  return {};
}

struct FoldConstantsPass
    : public cuvil::impl::FoldConstantsBase<FoldConstantsPass> {
  using FoldConstantsBase::FoldConstantsBase;

  void runOnOperation() override {
    bool changed = false;
    // Program order: a folded op's users see a constant when visited.
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() != op->getContext()->getLoadedDialect("cuvil") ||
          isa<ConstantOp>(op) || op->getNumResults() != 1 ||
          op->getNumOperands() == 0)
        return;
      auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (!resultType || !resultType.hasStaticShape() ||
          resultType.getNumElements() > maxElements ||
          !isa<FloatType>(resultType.getElementType()))
        return;
      SmallVector<Tensor> operands;
      for (Value operand : op->getOperands()) {
        std::optional<Tensor> t = readConstant(operand);
        if (!t)
          return;
        operands.push_back(std::move(*t));
      }
      std::optional<std::vector<double>> values =
          evaluate(op, operands, resultType);
      if (!values)
        return;
      DenseElementsAttr attr = toAttr(resultType, *values);
      if (!attr)
        return;
      OpBuilder builder(op);
      Value constant =
          builder.create<ConstantOp>(op->getLoc(), resultType, attr);
      op->getResult(0).replaceAllUsesWith(constant);
      op->erase();
      changed = true;
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
