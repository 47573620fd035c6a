//===- CuvilShapeRules.cpp - Result types of cuvil ops (InferTypeOpInterface) //
//
// The one place where the shape rules of the cuvil ops live. Verifiers call
// these rules and compare, builders call them to fill in result types, and
// the Python front ends ask them (through the bindings) while tracing. Errors
// read like emitOpError ("'cuvil.add' op ...") and name every shape involved.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// An op error raised during inference, printed like emitOpError; nothing is
/// reported when inference runs without a location.
class OpError {
public:
  OpError(std::optional<Location> loc, StringRef opName) {
    if (loc) {
      diag.emplace(emitError(*loc));
      *diag << "'" << opName << "' op ";
    }
  }
  template <typename T> OpError &operator<<(T &&value) {
    if (diag)
      *diag << std::forward<T>(value);
    return *this;
  }
  operator LogicalResult() const { return failure(); }

private:
  std::optional<InFlightDiagnostic> diag;
};

} // namespace

/// The ranked tensor type of `value`, or an error naming the operand.
static FailureOr<RankedTensorType> rankedOperand(std::optional<Location> loc,
                                                 StringRef op, Value value,
                                                 unsigned index) {
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    return type;
  OpError(loc, op) << "operand #" << index << " has type " << value.getType()
                   << ", expected a ranked tensor";
  return failure();
}

/// The ranked tensor types of all operands.
static FailureOr<SmallVector<RankedTensorType>>
rankedOperands(std::optional<Location> loc, StringRef op, ValueRange values) {
  SmallVector<RankedTensorType> types;
  for (auto [i, value] : llvm::enumerate(values)) {
    FailureOr<RankedTensorType> type = rankedOperand(loc, op, value, i);
    if (failed(type))
      return failure();
    types.push_back(*type);
  }
  return types;
}

static LogicalResult sameElementType(std::optional<Location> loc, StringRef op,
                                     RankedTensorType lhs,
                                     RankedTensorType rhs) {
  if (lhs.getElementType() == rhs.getElementType())
    return success();
  return OpError(loc, op) << "operand element types " << lhs.getElementType()
                          << " and " << rhs.getElementType()
                          << " differ; insert a cuvil.cast to promote one of "
                             "them";
}

/// NumPy broadcast of all `types`' shapes.
static FailureOr<SmallVector<int64_t>>
broadcastAll(std::optional<Location> loc, StringRef op,
             ArrayRef<RankedTensorType> types) {
  SmallVector<int64_t> shape;
  for (RankedTensorType type : types) {
    auto combined = broadcastShapes(shape, type.getShape());
    if (!combined) {
      OpError(loc, op) << "operand shapes " << formatShape(shape) << " and "
                       << formatShape(type.getShape())
                       << " are not broadcast-compatible (NumPy rules: "
                          "trailing dimensions must be equal or 1)";
      return failure();
    }
    shape = *combined;
  }
  return shape;
}

/// Elementwise ops: operands share an element type and broadcast.
static LogicalResult inferElementwise(std::optional<Location> loc, StringRef op,
                                      ValueRange operands, Type resultElement,
                                      SmallVectorImpl<Type> &results) {
  auto types = rankedOperands(loc, op, operands);
  if (failed(types))
    return failure();
  RankedTensorType lhs = (*types)[types->size() - 2];
  RankedTensorType rhs = (*types)[types->size() - 1];
  if (failed(sameElementType(loc, op, lhs, rhs)))
    return failure();
  auto shape = broadcastAll(loc, op, *types);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(
      *shape, resultElement ? resultElement : lhs.getElementType()));
  return success();
}

#define CUVIL_BINARY_RULE(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &r) {    \
    return inferElementwise(l, getOperationName(), a.getOperands(), {}, r);    \
  }
CUVIL_BINARY_RULE(AddOp)
CUVIL_BINARY_RULE(SubOp)
CUVIL_BINARY_RULE(MulOp)
CUVIL_BINARY_RULE(DivOp)
CUVIL_BINARY_RULE(PowOp)
CUVIL_BINARY_RULE(MaxOp)
CUVIL_BINARY_RULE(MinOp)
CUVIL_BINARY_RULE(RemOp)
#undef CUVIL_BINARY_RULE

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferElementwise(loc, getOperationName(), adaptor.getOperands(),
                          IntegerType::get(context, 1), results);
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  return inferElementwise(loc, getOperationName(), adaptor.getOperands(), {},
                          results);
}

//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getOperands());
  if (failed(types))
    return failure();
  RankedTensorType lhsType = (*types)[0], rhsType = (*types)[1];
  if (failed(sameElementType(loc, op, lhsType, rhsType)))
    return failure();
  ArrayRef<int64_t> lhs = lhsType.getShape(), rhs = rhsType.getShape();
  if (lhs.size() < 2 || rhs.size() < 2)
    return OpError(loc, op)
           << "operands must have rank >= 2, got shapes " << formatShape(lhs)
           << " and " << formatShape(rhs) << "; reshape 1-D operands first";
  int64_t k1 = lhs.back(), k2 = rhs[rhs.size() - 2];
  if (k1 != k2 && !ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2))
    return OpError(loc, op)
           << "contraction dimensions differ: lhs shape " << formatShape(lhs)
           << " has K=" << k1 << " but rhs shape " << formatShape(rhs)
           << " has K=" << k2;
  auto batch = broadcastShapes(lhs.drop_back(2), rhs.drop_back(2));
  if (!batch)
    return OpError(loc, op)
           << "batch dimensions of " << formatShape(lhs) << " and "
           << formatShape(rhs) << " are not broadcast-compatible";
  SmallVector<int64_t> shape = *batch;
  shape.push_back(lhs[lhs.size() - 2]);
  shape.push_back(rhs.back());
  results.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

LogicalResult
QuantizedMatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getOperands());
  if (failed(types))
    return failure();
  RankedTensorType input = (*types)[0], packed = (*types)[1],
                   scales = (*types)[2];
  if (input.getElementType() != scales.getElementType())
    return OpError(loc, op)
           << "scales are " << scales.getElementType() << " but the input is "
           << input.getElementType() << "; both must have one float type";
  int64_t group = adaptor.getGroupSize();
  if (input.getRank() < 2 || packed.getRank() != 2 || scales.getRank() != 2)
    return OpError(loc, op) << "expects an input of rank >= 2 and a 2-D packed "
                               "weight and scales, got shapes "
                            << formatShape(input.getShape()) << ", "
                            << formatShape(packed.getShape()) << " and "
                            << formatShape(scales.getShape());
  if (!packed.hasStaticShape() || !scales.hasStaticShape() ||
      ShapedType::isDynamic(input.getShape().back()))
    return OpError(loc, op) << "the weight, its scales and K must be static";
  int64_t k = input.getShape().back(), half = packed.getDimSize(1);
  if (group <= 0 || k % group != 0)
    return OpError(loc, op)
           << "group_size " << group << " must be positive and divide K=" << k;
  if (packed.getDimSize(0) != k || scales.getDimSize(0) != k / group ||
      scales.getDimSize(1) != 2 * half)
    return OpError(loc, op)
           << "for input " << formatShape(input.getShape())
           << " the packed weight must be " << k << "x" << half
           << " and the scales " << k / group << "x" << 2 * half << ", got "
           << formatShape(packed.getShape()) << " and "
           << formatShape(scales.getShape());
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = 2 * half;
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// Output size of a sliding window along one dimension (dynamic for a
/// dynamic input).
static int64_t windowOutputSize(int64_t in, int64_t padBefore, int64_t padAfter,
                                int64_t window, int64_t stride,
                                int64_t dilation) {
  if (ShapedType::isDynamic(in))
    return ShapedType::kDynamic;
  int64_t effective = dilation * (window - 1) + 1;
  return (in + padBefore + padAfter - effective) / stride + 1;
}

/// Checks the (strides, padding, dilations) attributes of 2-D windows.
static LogicalResult checkWindowAttrs(std::optional<Location> loc, StringRef op,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations) {
  if (strides.size() != 2 || dilations.size() != 2)
    return OpError(loc, op) << "expects 2 strides and 2 dilations, got "
                            << strides.size() << " and " << dilations.size();
  if (padding.size() != 4)
    return OpError(loc, op)
           << "expects padding (top, left, bottom, right), got "
           << padding.size() << " values";
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return OpError(loc, op) << "strides and dilations must be >= 1";
  if (llvm::any_of(padding, [](int64_t p) { return p < 0; }))
    return OpError(loc, op) << "padding must be >= 0";
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getOperands());
  if (failed(types))
    return failure();
  ArrayRef<int64_t> in = (*types)[0].getShape(), w = (*types)[1].getShape();
  if (in.size() != 4 || w.size() != 4)
    return OpError(loc, op) << "expects NCHW input and FCHW weight, got shapes "
                            << formatShape(in) << " and " << formatShape(w);
  ArrayRef<int64_t> s = adaptor.getStrides(), p = adaptor.getPadding(),
                    d = adaptor.getDilations();
  if (failed(checkWindowAttrs(loc, op, s, p, d)))
    return failure();
  int64_t groups = adaptor.getGroups();
  if (ShapedType::isDynamic(in[1]) || ShapedType::isDynamicShape(w))
    return OpError(loc, op)
           << "channels and kernel sizes must be static, got "
              "input shape "
           << formatShape(in) << " and weight shape " << formatShape(w);
  if (groups < 1 || in[1] % groups != 0 || w[0] % groups != 0)
    return OpError(loc, op)
           << "groups=" << groups << " must divide input channels (" << in[1]
           << ") and output channels (" << w[0] << ")";
  if (w[1] * groups != in[1])
    return OpError(loc, op)
           << "weight shape " << formatShape(w) << " expects " << w[1] * groups
           << " input channels but input shape " << formatShape(in) << " has "
           << in[1] << " (groups=" << groups << ")";
  SmallVector<int64_t> shape = {
      in[0], w[0], windowOutputSize(in[2], p[0], p[2], w[2], s[0], d[0]),
      windowOutputSize(in[3], p[1], p[3], w[3], s[1], d[1])};
  if ((shape[2] < 1 && !ShapedType::isDynamic(shape[2])) ||
      (shape[3] < 1 && !ShapedType::isDynamic(shape[3])))
    return OpError(loc, op) << "kernel " << formatShape(w.drop_front(2))
                            << " does not fit input " << formatShape(in)
                            << " with this padding and dilation";
  results.push_back(RankedTensorType::get(shape, (*types)[0].getElementType()));
  return success();
}

template <typename PoolOp>
static LogicalResult inferPool(std::optional<Location> loc, Value input,
                               typename PoolOp::Adaptor adaptor,
                               SmallVectorImpl<Type> &results) {
  StringRef op = PoolOp::getOperationName();
  FailureOr<RankedTensorType> type = rankedOperand(loc, op, input, 0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> in = type->getShape(), k = adaptor.getKernel();
  if (in.size() != 4)
    return OpError(loc, op)
           << "expects an NCHW input, got shape " << formatShape(in);
  if (k.size() != 2 || llvm::any_of(k, [](int64_t v) { return v < 1; }))
    return OpError(loc, op) << "expects a kernel of two positive sizes";
  ArrayRef<int64_t> s = adaptor.getStrides(), p = adaptor.getPadding();
  SmallVector<int64_t, 2> ones = {1, 1};
  if (failed(checkWindowAttrs(loc, op, s, p, ones)))
    return failure();
  if (p[0] >= k[0] || p[2] >= k[0] || p[1] >= k[1] || p[3] >= k[1])
    return OpError(loc, op) << "padding must be smaller than the kernel";
  SmallVector<int64_t> shape = {
      in[0], in[1], windowOutputSize(in[2], p[0], p[2], k[0], s[0], 1),
      windowOutputSize(in[3], p[1], p[3], k[1], s[1], 1)};
  if ((shape[2] < 1 && !ShapedType::isDynamic(shape[2])) ||
      (shape[3] < 1 && !ShapedType::isDynamic(shape[3])))
    return OpError(loc, op) << "kernel " << formatShape(k)
                            << " does not fit input " << formatShape(in);
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool<MaxPool2dOp>(loc, adaptor.getInput(), adaptor, results);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool<AvgPool2dOp>(loc, adaptor.getInput(), adaptor, results);
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

template <typename ReduceOp>
static LogicalResult inferReduce(std::optional<Location> loc,
                                 typename ReduceOp::Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  StringRef op = ReduceOp::getOperationName();
  auto type = rankedOperand(loc, op, adaptor.getInput(), 0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> in = type->getShape(), axes = adaptor.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= (int64_t)in.size())
      return OpError(loc, op)
             << "axis " << axis << " is out of range for input shape "
             << formatShape(in);
    if (i > 0 && axes[i - 1] >= axis)
      return OpError(loc, op) << "axes must be sorted and unique";
  }
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(in)) {
    if (!llvm::is_contained(axes, (int64_t)d))
      shape.push_back(size);
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

#define CUVIL_REDUCE_RULE(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &r) {    \
    return inferReduce<OP>(l, a, r);                                           \
  }
CUVIL_REDUCE_RULE(ReduceSumOp)
CUVIL_REDUCE_RULE(ReduceMeanOp)
CUVIL_REDUCE_RULE(ReduceMaxOp)
CUVIL_REDUCE_RULE(ReduceMinOp)
#undef CUVIL_REDUCE_RULE

static LogicalResult checkAxis(std::optional<Location> loc, StringRef op,
                               int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return OpError(loc, op)
           << "axis " << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getOperands());
  if (failed(types))
    return failure();
  RankedTensorType in = (*types)[0];
  if (failed(checkAxis(loc, op, adaptor.getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(adaptor.getAxis());
  for (RankedTensorType param : ArrayRef(*types).drop_front())
    if (failed(verifyCompatibleShape(param.getShape(), normalized)))
      return OpError(loc, op)
             << "gamma/beta shape " << formatShape(param.getShape())
             << " must equal the normalized shape " << formatShape(normalized)
             << " of input " << formatShape(in.getShape());
  results.push_back(in);
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getOperands());
  if (failed(types))
    return failure();
  RankedTensorType in = (*types)[0];
  if (in.getRank() < 2)
    return OpError(loc, op) << "expects an input of rank >= 2 (N, C, ...), got "
                            << formatShape(in.getShape());
  for (RankedTensorType param : ArrayRef(*types).drop_front())
    if (failed(verifyCompatibleShape(param.getShape(),
                                     ArrayRef<int64_t>{in.getDimSize(1)})))
      return OpError(loc, op)
             << "per-channel parameter shape " << formatShape(param.getShape())
             << " must be [" << in.getDimSize(1) << "] for input "
             << formatShape(in.getShape());
  results.push_back(in);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto type = rankedOperand(loc, op, adaptor.getInput(), 0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation(), in = type->getShape();
  if (perm.size() != in.size())
    return OpError(loc, op)
           << "permutation " << formatShape(perm) << " has " << perm.size()
           << " entries for input shape " << formatShape(in);
  llvm::SmallSet<int64_t, 8> seen;
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || !seen.insert(p).second)
      return OpError(loc, op)
             << "permutation " << formatShape(perm)
             << " is not a permutation of 0.." << in.size() - 1;
    shape.push_back(in[p]);
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getInputs());
  if (failed(types))
    return failure();
  if (types->empty())
    return OpError(loc, op) << "expects at least one input";
  RankedTensorType first = types->front();
  int64_t axis = adaptor.getAxis(), total = 0;
  if (failed(checkAxis(loc, op, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (RankedTensorType t : *types) {
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return OpError(loc, op) << "inputs must share rank and element type";
    for (int64_t d = 0; d < t.getRank(); ++d) {
      std::optional<int64_t> merged = mergeDims(shape[d], t.getDimSize(d));
      if (d != axis && !merged)
        return OpError(loc, op)
               << "input shapes " << formatShape(first.getShape()) << " and "
               << formatShape(t.getShape()) << " differ outside axis " << axis;
      if (d != axis)
        shape[d] = *merged;
    }
    // A dynamic part makes the concatenated axis dynamic.
    total = ShapedType::isDynamic(total) || t.isDynamicDim(axis)
                ? ShapedType::kDynamic
                : total + t.getDimSize(axis);
  }
  shape[axis] = total;
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto type = rankedOperand(loc, op, adaptor.getInput(), 0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> in = type->getShape(), start = adaptor.getStart(),
                    limit = adaptor.getLimit(), step = adaptor.getStep();
  if (start.size() != in.size() || limit.size() != in.size() ||
      step.size() != in.size())
    return OpError(loc, op) << "start/limit/step must each have " << in.size()
                            << " entries for input shape " << formatShape(in);
  int64_t dynamicLimits = llvm::count_if(limit, ShapedType::isDynamic);
  if (dynamicLimits != (int64_t)adaptor.getDynamicLimits().size())
    return OpError(loc, op) << "has " << adaptor.getDynamicLimits().size()
                            << " run-time limits for the " << dynamicLimits
                            << " dynamic entries of its limit list";
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < in.size(); ++d) {
    if (step[d] < 1)
      return OpError(loc, op) << "step must be >= 1 in dimension " << d;
    if (ShapedType::isDynamic(limit[d])) {
      // Clamped to the dimension at run time; only the start is checked.
      if (start[d] < 0 || (!ShapedType::isDynamic(in[d]) && start[d] > in[d]))
        return OpError(loc, op)
               << "start " << start[d] << " of dimension " << d
               << " is out of bounds for input shape " << formatShape(in);
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (ShapedType::isDynamic(in[d]))
      return OpError(loc, op)
             << "cannot slice dimension " << d << " of dynamic size in "
             << formatShape(in)
             << " with a static limit; give the limit as an index (cuvil.dim "
                "of the tensor whose size it is)";
    if (start[d] < 0 || limit[d] > in[d] || start[d] > limit[d])
      return OpError(loc, op)
             << "slice [" << start[d] << ", " << limit[d] << ") of dimension "
             << d << " is out of bounds for input shape " << formatShape(in);
    shape.push_back((limit[d] - start[d] + step[d] - 1) / step[d]);
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef op = getOperationName();
  auto types = rankedOperands(loc, op, adaptor.getOperands());
  if (failed(types))
    return failure();
  RankedTensorType data = (*types)[0], indices = (*types)[1];
  if (data.getRank() == 0)
    return OpError(loc, op) << "expects data of rank >= 1 to gather from, got "
                               "a scalar; reshape it to [1] first";
  if (!indices.getElementType().isSignlessInteger(32) &&
      !indices.getElementType().isSignlessInteger(64))
    return OpError(loc, op)
           << "indices must be i32 or i64, got " << indices.getElementType()
           << "; insert a cuvil.cast to i64";
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, op, axis, data.getRank())))
    return failure();
  ArrayRef<int64_t> in = data.getShape();
  SmallVector<int64_t> shape(in.take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, in.drop_front(axis + 1));
  results.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}
