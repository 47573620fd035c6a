//===- PropagateSymbols.cpp - The cuvil-propagate-symbols pass ------------===//
//
// Named dynamic dimensions: each value's dimensions as affine expressions of
// the argument symbols (a null expression for an unknown size). An `index`
// value (cuvil.dim, a constant) is a size: one expression. Ops that need
// equal dimensions check them here, where the names are known; the shape
// rules only see `?`.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_PROPAGATESYMBOLS
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

using Dims = SmallVector<AffineExpr>;

bool isOne(AffineExpr e) {
  auto c = dyn_cast_or_null<AffineConstantExpr>(e);
  return c && c.getValue() == 1;
}

/// Product of `dims`, or null when one is unknown.
AffineExpr product(MLIRContext *ctx, ArrayRef<AffineExpr> dims) {
  AffineExpr p = getAffineConstantExpr(1, ctx);
  for (AffineExpr d : dims) {
    if (!d)
      return {};
    p = p * d;
  }
  return p;
}

class Propagation {
public:
  explicit Propagation(func::FuncOp func) : func(func) {}

  LogicalResult run();

private:
  std::string print(AffineExpr e) const;
  Dims fromType(Value v) const;
  Dims fromType(RankedTensorType type) const;
  Dims of(Value v) const {
    auto it = dims.find(v);
    if (it != dims.end())
      return it->second;
    return v.getType().isIndex() ? Dims{sizeOf(v)} : fromType(v);
  }
  AffineExpr sizeOf(Value index) const;
  FailureOr<AffineExpr> merge(Operation *op, AffineExpr a, AffineExpr b,
                              bool broadcast, StringRef what);
  FailureOr<Dims> broadcastAll(Operation *op);
  FailureOr<Dims> resultDims(Operation *op);
  FailureOr<Dims> matmulDims(MatmulOp op);
  Dims reshapeDims(Value input, RankedTensorType result);
  Dims reshapeDims(ReshapeOp op);
  Dims sliceDims(SliceOp op);
  Dims windowDims(Operation *op, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                  ArrayRef<int64_t> dilations, int64_t channels);

  func::FuncOp func;
  SmallVector<std::string> names;
  llvm::StringMap<unsigned> positions;
  DenseMap<Value, Dims> dims;
};

/// Python syntax over the symbol names, which the Python runtime evaluates.
std::string Propagation::print(AffineExpr e) const {
  if (!e)
    return "?";
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return std::to_string(c.getValue());
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return names[s.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  auto operand = [&](AffineExpr x) {
    std::string text = print(x);
    return isa<AffineBinaryOpExpr>(x) ? "(" + text + ")" : text;
  };
  std::string l = operand(bin.getLHS()), r = operand(bin.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return l + " + " + r;
  case AffineExprKind::Mul:
    return l + " * " + r;
  case AffineExprKind::FloorDiv:
    return l + " // " + r;
  case AffineExprKind::CeilDiv:
    return "-(-" + l + " // " + r + ")";
  case AffineExprKind::Mod:
    return l + " % " + r;
  default:
    return "?";
  }
}

Dims Propagation::fromType(Value v) const {
  return fromType(cast<RankedTensorType>(v.getType()));
}

Dims Propagation::fromType(RankedTensorType type) const {
  Dims result;
  for (int64_t d : type.getShape())
    result.push_back(ShapedType::isDynamic(d)
                         ? AffineExpr()
                         : getAffineConstantExpr(d, type.getContext()));
  return result;
}

/// An index operand's expression: its propagated size, a constant's value,
/// size arithmetic (arith.addi ... on indexes, as front ends compute sizes
/// like `N * 4`) over such expressions, or unknown.
AffineExpr Propagation::sizeOf(Value index) const {
  auto it = dims.find(index);
  if (it != dims.end())
    return it->second.front();
  APInt value;
  if (matchPattern(index, m_ConstantInt(&value)))
    return getAffineConstantExpr(value.getSExtValue(), index.getContext());
  Operation *op = index.getDefiningOp();
  if (!op || op->getNumOperands() != 2)
    return {};
  AffineExpr l = sizeOf(op->getOperand(0)), r = sizeOf(op->getOperand(1));
  if (!l || !r)
    return {};
  auto constant = dyn_cast<AffineConstantExpr>(r);
  return llvm::TypeSwitch<Operation *, AffineExpr>(op)
      .Case([&](arith::AddIOp) { return l + r; })
      .Case([&](arith::SubIOp) { return l - r; })
      .Case([&](arith::MulIOp) { return l * r; })
      .Case<arith::FloorDivSIOp, arith::DivSIOp>([&](Operation *) {
        return constant && constant.getValue() > 0 ? l.floorDiv(r)
                                                   : AffineExpr();
      })
      .Case([&](arith::RemSIOp) {
        return constant && constant.getValue() > 0 ? l % r : AffineExpr();
      })
      .Default([](Operation *) { return AffineExpr(); });
}

/// The dimension `a` and `b` share: equal, either unknown, or (when
/// broadcasting) one of them 1. Different names or sizes are an error.
FailureOr<AffineExpr> Propagation::merge(Operation *op, AffineExpr a,
                                         AffineExpr b, bool broadcast,
                                         StringRef what) {
  if (broadcast && isOne(a))
    return b;
  if (broadcast && isOne(b))
    return a;
  if (!a || a == b)
    return b;
  if (!b)
    return a;
  op->emitOpError("dimensions ")
      << print(a) << " and " << print(b) << " of " << what
      << " differ; they must be equal" << (broadcast ? " (or 1)" : "")
      << ", and equal symbol names are how equal sizes are declared";
  return failure();
}

FailureOr<Dims> Propagation::broadcastAll(Operation *op) {
  Dims result;
  for (Value operand : op->getOperands()) {
    const Dims &d = of(operand);
    if (d.size() > result.size())
      result.insert(result.begin(), d.size() - result.size(),
                    getAffineConstantExpr(1, op->getContext()));
    size_t offset = result.size() - d.size();
    for (auto [i, e] : llvm::enumerate(d)) {
      auto merged = merge(op, result[offset + i], e, true, "the operands");
      if (failed(merged))
        return failure();
      result[offset + i] = *merged;
    }
  }
  return result;
}

FailureOr<Dims> Propagation::matmulDims(MatmulOp op) {
  Dims lhs = of(op.getLhs()), rhs = of(op.getRhs());
  auto k =
      merge(op, lhs.back(), rhs[rhs.size() - 2], false, "the contraction (K)");
  if (failed(k))
    return failure();
  Dims batch;
  ArrayRef<AffineExpr> lb = ArrayRef(lhs).drop_back(2),
                       rb = ArrayRef(rhs).drop_back(2);
  size_t rank = std::max(lb.size(), rb.size());
  AffineExpr one = getAffineConstantExpr(1, op.getContext());
  for (size_t i = 0; i < rank; ++i) {
    AffineExpr l = i + lb.size() >= rank ? lb[i + lb.size() - rank] : one;
    AffineExpr r = i + rb.size() >= rank ? rb[i + rb.size() - rank] : one;
    auto merged = merge(op, l, r, true, "the batch dimensions");
    if (failed(merged))
      return failure();
    batch.push_back(*merged);
  }
  batch.push_back(lhs[lhs.size() - 2]);
  batch.push_back(rhs.back());
  return batch;
}

/// Result dimensions of a reshape, grouped as the lowering's collapse or
/// expand groups them: a collapsed dimension is the product of its group, an
/// expanded group's one dynamic size the source divided by the static rest.
/// Without such a grouping a single dynamic size is the element count
/// divided by the static sizes (`reshape(2, -1)`); more stay unknown.
Dims Propagation::reshapeDims(Value input, RankedTensorType result) {
  Dims in = of(input);
  auto inType = cast<RankedTensorType>(input.getType());
  if (onlyForgetsSizes(inType, result))
    return in;
  MLIRContext *ctx = result.getContext();
  Dims out = fromType(result);
  auto divideRest = [&](AffineExpr total, ArrayRef<int64_t> group,
                        size_t first) {
    SmallVector<size_t> dynamic;
    int64_t rest = 1;
    for (auto [i, size] : llvm::enumerate(group)) {
      if (ShapedType::isDynamic(size))
        dynamic.push_back(first + i);
      else
        rest *= size;
    }
    if (dynamic.size() == 1 && total && rest > 0)
      out[dynamic[0]] = total.floorDiv(rest);
  };
  bool collapse = inType.getRank() > result.getRank();
  auto groups = collapse ? reshapeGroups(inType, result, /*expanding=*/false)
                         : reshapeGroups(result, inType, /*expanding=*/true);
  if (!groups || inType.getRank() == result.getRank()) {
    divideRest(product(ctx, in), result.getShape(), 0);
    return out;
  }
  for (auto [i, group] : llvm::enumerate(*groups)) {
    if (collapse) {
      SmallVector<AffineExpr> parts;
      for (int64_t d : group)
        parts.push_back(in[d]);
      if (result.isDynamicDim(i))
        out[i] = product(ctx, parts);
      continue;
    }
    divideRest(in[i], result.getShape().slice(group.front(), group.size()),
               group.front());
  }
  return out;
}

/// Given sizes name the result's dynamic dimensions; without them the sizes
/// are derived from the input.
Dims Propagation::reshapeDims(ReshapeOp op) {
  if (op.getSizes().empty())
    return reshapeDims(op.getInput(), op.getType());
  Dims out = fromType(op.getType());
  auto given = op.getSizes().begin();
  for (AffineExpr &e : out)
    if (!e)
      e = sizeOf(*given++);
  return out;
}

/// A run-time limit L gives ceil((L - start) / step) elements.
Dims Propagation::sliceDims(SliceOp op) {
  Dims out = fromType(op.getType());
  auto limit = op.getDynamicLimits().begin();
  for (auto [d, e] : llvm::enumerate(out)) {
    if (!ShapedType::isDynamic(op.getLimit()[d]))
      continue;
    AffineExpr l = sizeOf(*limit++);
    if (l)
      e = (l - op.getStart()[d]).ceilDiv(op.getStep()[d]);
  }
  return out;
}

Dims Propagation::windowDims(Operation *op, ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides,
                             ArrayRef<int64_t> padding,
                             ArrayRef<int64_t> dilations, int64_t channels) {
  Dims in = of(op->getOperand(0));
  MLIRContext *ctx = op->getContext();
  Dims result = {in[0],
                 channels < 0 ? in[1] : getAffineConstantExpr(channels, ctx)};
  for (int d = 0; d < 2; ++d) {
    if (!in[2 + d]) {
      result.push_back({});
      continue;
    }
    int64_t effective = dilations[d] * (kernel[d] - 1) + 1;
    result.push_back((in[2 + d] + (padding[d] + padding[d + 2] - effective))
                         .floorDiv(strides[d]) +
                     1);
  }
  return result;
}

template <typename ReduceOp> Dims reduceDims(ReduceOp op, const Dims &in) {
  Dims result;
  ArrayRef<int64_t> axes = op.getAxes();
  for (auto [d, e] : llvm::enumerate(in)) {
    if (!llvm::is_contained(axes, (int64_t)d))
      result.push_back(e);
    else if (op.getKeepdims())
      result.push_back(getAffineConstantExpr(1, op.getContext()));
  }
  return result;
}

FailureOr<Dims> Propagation::resultDims(Operation *op) {
  auto inputDims = [&](unsigned i) { return of(op->getOperand(i)); };
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>())
    return inputDims(0);
  return llvm::TypeSwitch<Operation *, FailureOr<Dims>>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp,
            WhereOp>([&](Operation *) { return broadcastAll(op); })
      .Case<CastOp, LayerNormOp, BatchNormOp, SoftmaxOp, DropoutOp>(
          [&](Operation *) -> FailureOr<Dims> { return inputDims(0); })
      .Case([&](MatmulOp m) { return matmulDims(m); })
      .Case([&](TransposeOp t) -> FailureOr<Dims> {
        Dims in = inputDims(0), result;
        for (int64_t p : t.getPermutation())
          result.push_back(in[p]);
        return result;
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
          [&](auto r) -> FailureOr<Dims> {
            return reduceDims(r, inputDims(0));
          })
      .Case([&](ConcatOp c) -> FailureOr<Dims> {
        Dims result = inputDims(0);
        int64_t axis = c.getAxis();
        for (Value input : c.getInputs().drop_front()) {
          const Dims &d = of(input);
          for (auto [i, e] : llvm::enumerate(d)) {
            if ((int64_t)i == axis) {
              result[i] = result[i] && e ? result[i] + e : AffineExpr();
              continue;
            }
            auto merged = merge(op, result[i], e, false, "the inputs");
            if (failed(merged))
              return failure();
            result[i] = *merged;
          }
        }
        return result;
      })
      .Case([&](GatherOp g) -> FailureOr<Dims> {
        Dims data = inputDims(0), indices = inputDims(1);
        int64_t axis = g.getAxis();
        Dims result(data.begin(), data.begin() + axis);
        result.append(indices.begin(), indices.end());
        result.append(data.begin() + axis + 1, data.end());
        return result;
      })
      .Case([&](ReshapeOp r) -> FailureOr<Dims> { return reshapeDims(r); })
      .Case([&](SliceOp s) -> FailureOr<Dims> { return sliceDims(s); })
      .Case([&](DimOp d) -> FailureOr<Dims> {
        return Dims{inputDims(0)[d.getAxis()]};
      })
      .Case([&](RangeOp r) -> FailureOr<Dims> {
        AffineExpr limit = sizeOf(r.getLimit());
        if (!limit)
          return fromType(r.getResult());
        return Dims{(limit - r.getStart()).ceilDiv(r.getStep())};
      })
      .Case([&](BroadcastToOp b) -> FailureOr<Dims> {
        // As the lowering sizes it: a dynamic input dim gives its own size,
        // `like` the sizes the input broadcasts from 1.
        Dims in = inputDims(0), result = fromType(b.getResult());
        if (b.getLike())
          result = of(b.getLike());
        ArrayRef<int64_t> inShape = b.getInput().getType().getShape();
        size_t offset = result.size() - in.size();
        for (auto [i, e] : llvm::enumerate(in))
          if (b.getLike() ? ShapedType::isDynamic(inShape[i])
                          : !result[offset + i] && !isOne(e))
            result[offset + i] = e;
        return result;
      })
      .Case([&](Conv2dOp c) -> FailureOr<Dims> {
        auto w = cast<RankedTensorType>(c.getWeight().getType()).getShape();
        return windowDims(op, w.drop_front(2), c.getStrides(), c.getPadding(),
                          c.getDilations(), w[0]);
      })
      .Case<MaxPool2dOp, AvgPool2dOp>([&](auto p) -> FailureOr<Dims> {
        SmallVector<int64_t> ones = {1, 1};
        return windowDims(op, p.getKernel(), p.getStrides(), p.getPadding(),
                          ones, -1);
      })
      .Default([&](Operation *) -> FailureOr<Dims> {
        return fromType(op->getResult(0));
      });
}

LogicalResult Propagation::run() {
  StringRef attrName = CuvilDialect::SymbolsAttrHelper::getNameStr();
  MLIRContext *ctx = func.getContext();
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (!isa<RankedTensorType>(arg.getType()))
      return success();
    Dims d = fromType(arg);
    auto symbols = func.getArgAttrOfType<ArrayAttr>(i, attrName);
    unsigned next = 0;
    for (AffineExpr &e : d) {
      if (e || !symbols || next >= symbols.size())
        continue;
      StringRef name = cast<StringAttr>(symbols[next++]).getValue();
      auto [it, inserted] = positions.try_emplace(name, names.size());
      if (inserted)
        names.push_back(name.str());
      e = getAffineSymbolExpr(it->second, ctx);
    }
    dims[arg] = d;
  }
  auto isSizeOrTensor = [](Type t) {
    return t.isIndex() || isa<RankedTensorType>(t);
  };
  WalkResult walk = func.walk([&](Operation *op) {
    if (op->getNumResults() != 1 ||
        !isa_and_nonnull<CuvilDialect>(op->getDialect()) ||
        !isSizeOrTensor(op->getResult(0).getType()) ||
        !llvm::all_of(op->getOperandTypes(), isSizeOrTensor))
      return WalkResult::advance();
    FailureOr<Dims> result = resultDims(op);
    if (failed(result))
      return WalkResult::interrupt();
    if (op->getResult(0).getType().isIndex()) {
      AffineExpr e = result->front();
      dims[op->getResult(0)] = {e ? simplifyAffineExpr(e, 0, names.size())
                                  : AffineExpr()};
      return WalkResult::advance();
    }
    // Static sizes in the type win over the derived expressions.
    Dims typed = fromType(op->getResult(0));
    for (auto [t, e] : llvm::zip(typed, *result))
      if (!t && e)
        t = simplifyAffineExpr(e, 0, names.size());
    dims[op->getResult(0)] = typed;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.hasStaticShape() || !dims.count(value))
      continue;
    SmallVector<Attribute> exprs;
    for (auto [size, e] : llvm::zip(type.getShape(), dims[value]))
      if (ShapedType::isDynamic(size))
        exprs.push_back(StringAttr::get(ctx, print(e)));
    func.setResultAttr(i, attrName, ArrayAttr::get(ctx, exprs));
  }
  return success();
}

struct PropagateSymbolsPass
    : public cuvil::impl::PropagateSymbolsBase<PropagateSymbolsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool dynamic = llvm::any_of(func.getArgumentTypes(), [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && !tensor.hasStaticShape();
    });
    if (!dynamic || func.isExternal())
      return markAllAnalysesPreserved();
    if (failed(Propagation(func).run()))
      signalPassFailure();
  }
};

} // namespace
