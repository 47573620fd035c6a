//===- CuvilOps.cpp - cuvil dialect registration and verifiers ------------===//
//
// Verifiers name both shapes involved in a mismatch, so that a user reading
// the diagnostic at their source line sees what went wrong.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cuvil;

#include "cuvil/Dialect/Cuvil/IR/CuvilOpsDialect.cpp.inc"

void CuvilDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.cpp.inc"
      >();
}

Operation *CuvilDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::cuvil::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t &out = result[rank - 1 - i];
    if (l == r || r == 1)
      out = l;
    else if (l == 1)
      out = r;
    else if (ShapedType::isDynamic(l) || ShapedType::isDynamic(r))
      out = ShapedType::kDynamic;
    else
      return std::nullopt;
  }
  return result;
}

std::string mlir::cuvil::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return text;
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks that `operands` broadcast together to the shape of `result`.
static LogicalResult verifyBroadcastResult(Operation *op, ValueRange operands,
                                           Value result) {
  SmallVector<int64_t> shape;
  for (Value operand : operands) {
    ArrayRef<int64_t> next = tensorType(operand).getShape();
    auto combined = broadcastShapes(shape, next);
    if (!combined)
      return op->emitOpError("operand shapes ")
             << formatShape(shape) << " and " << formatShape(next)
             << " are not broadcast-compatible (NumPy rules: trailing "
                "dimensions must be equal or 1)";
    shape = *combined;
  }
  ArrayRef<int64_t> actual = tensorType(result).getShape();
  if (actual != ArrayRef<int64_t>(shape))
    return op->emitOpError("result shape ")
           << formatShape(actual) << " does not match the broadcast shape "
           << formatShape(shape);
  return success();
}

static LogicalResult verifySameElementType(Operation *op, Value lhs,
                                           Value rhs) {
  Type l = tensorType(lhs).getElementType();
  Type r = tensorType(rhs).getElementType();
  if (l != r)
    return op->emitOpError("operand element types ")
           << l << " and " << r
           << " differ; insert a cuvil.cast to promote one of them";
  return success();
}

static LogicalResult verifyBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (failed(verifySameElementType(op, lhs, rhs)))
    return failure();
  if (tensorType(op->getResult(0)).getElementType() !=
      tensorType(lhs).getElementType())
    return op->emitOpError("result element type ")
           << tensorType(op->getResult(0)).getElementType()
           << " differs from the operand element type "
           << tensorType(lhs).getElementType();
  return verifyBroadcastResult(op, op->getOperands(), op->getResult(0));
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult PowOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }

LogicalResult CompareOp::verify() {
  static constexpr llvm::StringLiteral kPredicates[] = {"eq", "ne", "lt",
                                                        "le", "gt", "ge"};
  if (!llvm::is_contained(kPredicates, getPredicate()))
    return emitOpError("unknown predicate '")
           << getPredicate() << "'; expected one of eq, ne, lt, le, gt, ge";
  if (failed(verifySameElementType(*this, getLhs(), getRhs())))
    return failure();
  return verifyBroadcastResult(*this, getOperands(), getResult());
}

LogicalResult WhereOp::verify() {
  if (failed(verifySameElementType(*this, getTrueValue(), getFalseValue())))
    return failure();
  if (getType().getElementType() != getTrueValue().getType().getElementType())
    return emitOpError("result element type ")
           << getType().getElementType()
           << " differs from the selected values' element type "
           << getTrueValue().getType().getElementType();
  return verifyBroadcastResult(*this, getOperands(), getResult());
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  if (failed(verifySameElementType(*this, getLhs(), getRhs())))
    return failure();
  if (lhs.size() < 2 || rhs.size() < 2)
    return emitOpError("operands must have rank >= 2, got shapes ")
           << formatShape(lhs) << " and " << formatShape(rhs)
           << "; reshape 1-D operands first";
  int64_t k1 = lhs.back(), k2 = rhs[rhs.size() - 2];
  if (k1 != k2 && !ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2))
    return emitOpError("contraction dimensions differ: lhs shape ")
           << formatShape(lhs) << " has K=" << k1 << " but rhs shape "
           << formatShape(rhs) << " has K=" << k2;
  auto batch = broadcastShapes(lhs.drop_back(2), rhs.drop_back(2));
  if (!batch)
    return emitOpError("batch dimensions of ")
           << formatShape(lhs) << " and " << formatShape(rhs)
           << " are not broadcast-compatible";
  SmallVector<int64_t> expected = *batch;
  expected.push_back(lhs[lhs.size() - 2]);
  expected.push_back(rhs.back());
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getType().getShape()) << " does not match "
           << formatShape(expected) << " = " << formatShape(lhs) << " @ "
           << formatShape(rhs);
  if (getType().getElementType() != getLhs().getType().getElementType())
    return emitOpError("result element type differs from the operands'");
  return success();
}

/// Output size of a sliding window along one dimension.
static int64_t windowOutputSize(int64_t in, int64_t padBefore,
                                int64_t padAfter, int64_t window,
                                int64_t stride, int64_t dilation) {
  int64_t effective = dilation * (window - 1) + 1;
  return (in + padBefore + padAfter - effective) / stride + 1;
}

/// Verifies the (strides, padding[, dilations]) attributes of 2-D windows.
static LogicalResult verifyWindowAttrs(Operation *op, ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> dilations) {
  if (strides.size() != 2 || dilations.size() != 2)
    return op->emitOpError("expects 2 strides and 2 dilations, got ")
           << strides.size() << " and " << dilations.size();
  if (padding.size() != 4)
    return op->emitOpError("expects padding (top, left, bottom, right), got ")
           << padding.size() << " values";
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return op->emitOpError("strides and dilations must be >= 1");
  if (llvm::any_of(padding, [](int64_t p) { return p < 0; }))
    return op->emitOpError("padding must be >= 0");
  return success();
}

LogicalResult Conv2dOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  if (in.size() != 4 || w.size() != 4)
    return emitOpError("expects NCHW input and FCHW weight, got shapes ")
           << formatShape(in) << " and " << formatShape(w);
  if (failed(verifyWindowAttrs(*this, getStrides(), getPadding(),
                               getDilations())))
    return failure();
  int64_t groups = getGroups();
  if (groups < 1 || in[1] % groups != 0 || w[0] % groups != 0)
    return emitOpError("groups=")
           << groups << " must divide input channels (" << in[1]
           << ") and output channels (" << w[0] << ")";
  if (w[1] * groups != in[1])
    return emitOpError("weight shape ")
           << formatShape(w) << " expects " << w[1] * groups
           << " input channels but input shape " << formatShape(in)
           << " has " << in[1] << " (groups=" << groups << ")";
  ArrayRef<int64_t> s = getStrides(), p = getPadding(), d = getDilations();
  SmallVector<int64_t> expected = {
      in[0], w[0], windowOutputSize(in[2], p[0], p[2], w[2], s[0], d[0]),
      windowOutputSize(in[3], p[1], p[3], w[3], s[1], d[1])};
  if (expected[2] < 1 || expected[3] < 1)
    return emitOpError("kernel ")
           << formatShape(w.drop_front(2)) << " does not fit input "
           << formatShape(in) << " with this padding and dilation";
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getType().getShape()) << " does not match "
           << formatShape(expected);
  return success();
}

template <typename PoolOp>
static LogicalResult verifyPool(PoolOp op) {
  ArrayRef<int64_t> in = op.getInput().getType().getShape();
  ArrayRef<int64_t> k = op.getKernel();
  if (in.size() != 4)
    return op.emitOpError("expects an NCHW input, got shape ")
           << formatShape(in);
  if (k.size() != 2 || llvm::any_of(k, [](int64_t v) { return v < 1; }))
    return op.emitOpError("expects a kernel of two positive sizes");
  SmallVector<int64_t, 2> ones = {1, 1};
  if (failed(verifyWindowAttrs(op, op.getStrides(), op.getPadding(), ones)))
    return failure();
  ArrayRef<int64_t> s = op.getStrides(), p = op.getPadding();
  if (p[0] >= k[0] || p[2] >= k[0] || p[1] >= k[1] || p[3] >= k[1])
    return op.emitOpError("padding must be smaller than the kernel");
  SmallVector<int64_t> expected = {
      in[0], in[1], windowOutputSize(in[2], p[0], p[2], k[0], s[0], 1),
      windowOutputSize(in[3], p[1], p[3], k[1], s[1], 1)};
  if (op.getType().getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("result shape ")
           << formatShape(op.getType().getShape()) << " does not match "
           << formatShape(expected);
  return success();
}

LogicalResult MaxPool2dOp::verify() { return verifyPool(*this); }
LogicalResult AvgPool2dOp::verify() { return verifyPool(*this); }

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

template <typename ReduceOp>
static LogicalResult verifyReduce(ReduceOp op) {
  ArrayRef<int64_t> in = op.getInput().getType().getShape();
  ArrayRef<int64_t> axes = op.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= (int64_t)in.size())
      return op.emitOpError("axis ")
             << axis << " is out of range for input shape "
             << formatShape(in);
    if (i > 0 && axes[i - 1] >= axis)
      return op.emitOpError("axes must be sorted and unique");
  }
  SmallVector<int64_t> expected;
  for (auto [d, size] : llvm::enumerate(in)) {
    if (!llvm::is_contained(axes, (int64_t)d))
      expected.push_back(size);
    else if (op.getKeepdims())
      expected.push_back(1);
  }
  if (op.getType().getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("result shape ")
           << formatShape(op.getType().getShape()) << " does not match "
           << formatShape(expected) << " (input " << formatShape(in)
           << " reduced over " << formatShape(axes) << ")";
  if (op.getType().getElementType() != op.getInput().getType().getElementType())
    return op.emitOpError("result element type differs from the input's");
  return success();
}

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduce(*this); }

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(getAxis());
  for (Value param : {getGamma(), getBeta()})
    if (tensorType(param).getShape() != normalized)
      return emitOpError("gamma/beta shape ")
             << formatShape(tensorType(param).getShape())
             << " must equal the normalized shape " << formatShape(normalized)
             << " of input " << formatShape(in.getShape());
  if (getType() != in)
    return emitOpError("result type must equal the input type");
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError("epsilon must be >= 0");
  return success();
}

LogicalResult BatchNormOp::verify() {
  RankedTensorType in = getInput().getType();
  if (in.getRank() < 2)
    return emitOpError("expects an input of rank >= 2 (N, C, ...), got ")
           << formatShape(in.getShape());
  for (Value param : {getScale(), getBias(), getMean(), getVariance()})
    if (tensorType(param).getShape() != ArrayRef<int64_t>{in.getDimSize(1)})
      return emitOpError("per-channel parameter shape ")
             << formatShape(tensorType(param).getShape()) << " must be ["
             << in.getDimSize(1) << "] for input "
             << formatShape(in.getShape());
  if (getType() != in)
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (ratio < 0.0 || ratio >= 1.0)
    return emitOpError("ratio ") << ratio << " must be in [0, 1)";
  return success();
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("reshape cannot change the element type");
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << formatShape(in.getShape()) << " (" << in.getNumElements()
           << " elements) into " << formatShape(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> perm = getPermutation();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (perm.size() != in.size())
    return emitOpError("permutation ")
           << formatShape(perm) << " has " << perm.size()
           << " entries for input shape " << formatShape(in);
  llvm::SmallSet<int64_t, 8> seen;
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || !seen.insert(p).second)
      return emitOpError("permutation ")
             << formatShape(perm) << " is not a permutation of 0.."
             << in.size() - 1;
    expected.push_back(in[p]);
  }
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getType().getShape()) << " does not match "
           << formatShape(expected);
  return success();
}

LogicalResult BroadcastToOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  auto combined = broadcastShapes(in, out);
  if (in.size() > out.size() || !combined ||
      ArrayRef<int64_t>(*combined) != out)
    return emitOpError("cannot broadcast shape ")
           << formatShape(in) << " to " << formatShape(out);
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  RankedTensorType first = tensorType(getInputs().front());
  if (failed(verifyAxis(*this, getAxis(), first.getRank())))
    return failure();
  int64_t axis = getAxis(), total = 0;
  for (Value input : getInputs()) {
    RankedTensorType t = tensorType(input);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return emitOpError("inputs must share rank and element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOpError("input shapes ")
               << formatShape(first.getShape()) << " and "
               << formatShape(t.getShape()) << " differ outside axis "
               << axis;
    total += t.getDimSize(axis);
  }
  SmallVector<int64_t> expected(first.getShape());
  expected[axis] = total;
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getType().getShape()) << " does not match "
           << formatShape(expected);
  return success();
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> start = getStart(), limit = getLimit(), step = getStep();
  if (start.size() != in.size() || limit.size() != in.size() ||
      step.size() != in.size())
    return emitOpError("start/limit/step must each have ")
           << in.size() << " entries for input shape " << formatShape(in);
  SmallVector<int64_t> expected;
  for (size_t d = 0; d < in.size(); ++d) {
    if (step[d] < 1)
      return emitOpError("step must be >= 1 in dimension ") << d;
    if (start[d] < 0 || limit[d] > in[d] || start[d] > limit[d])
      return emitOpError("slice [")
             << start[d] << ", " << limit[d] << ") of dimension " << d
             << " is out of bounds for input shape " << formatShape(in);
    expected.push_back((limit[d] - start[d] + step[d] - 1) / step[d]);
  }
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getType().getShape()) << " does not match "
           << formatShape(expected);
  return success();
}

#define GET_OP_CLASSES
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.cpp.inc"
