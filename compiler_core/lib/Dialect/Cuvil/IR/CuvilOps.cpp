//===- CuvilOps.cpp - cuvil dialect registration and verifiers ------------===//
//
// Verifiers compare each op with its shape rule (CuvilShapeRules.cpp) and
// check what the rule does not cover (predicates, epsilon, ratio).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cuvil;

#include "cuvil/Dialect/Cuvil/IR/CuvilOpsDialect.cpp.inc"
#include "cuvil/Dialect/Cuvil/IR/CuvilOpsEnums.cpp.inc"

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

/// The op's result type must be the one its shape rule (CuvilShapeRules.cpp)
/// infers; the rule itself reports operand errors.
static LogicalResult verifyInferredType(Operation *op) {
  auto rule = cast<InferTypeOpInterface>(op);
  SmallVector<Type, 1> inferred;
  if (failed(rule.inferReturnTypes(
          op->getContext(), op->getLoc(), op->getOperands(),
          op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
          op->getRegions(), inferred)))
    return failure();
  auto expected = cast<RankedTensorType>(inferred.front());
  auto actual = cast<RankedTensorType>(op->getResult(0).getType());
  if (actual.getShape() != expected.getShape())
    return op->emitOpError("result shape ")
           << formatShape(actual.getShape()) << " does not match "
           << formatShape(expected.getShape())
           << ", the shape inferred from the operands";
  if (actual.getElementType() != expected.getElementType())
    return op->emitOpError("result element type ")
           << actual.getElementType() << " differs from the inferred element "
           << "type " << expected.getElementType();
  return success();
}

LogicalResult AddOp::verify() { return verifyInferredType(*this); }
LogicalResult SubOp::verify() { return verifyInferredType(*this); }
LogicalResult MulOp::verify() { return verifyInferredType(*this); }
LogicalResult DivOp::verify() { return verifyInferredType(*this); }
LogicalResult PowOp::verify() { return verifyInferredType(*this); }
LogicalResult MaxOp::verify() { return verifyInferredType(*this); }
LogicalResult MinOp::verify() { return verifyInferredType(*this); }

LogicalResult CompareOp::verify() { return verifyInferredType(*this); }

LogicalResult WhereOp::verify() { return verifyInferredType(*this); }
LogicalResult MatmulOp::verify() { return verifyInferredType(*this); }
LogicalResult Conv2dOp::verify() { return verifyInferredType(*this); }
LogicalResult MaxPool2dOp::verify() { return verifyInferredType(*this); }
LogicalResult AvgPool2dOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceSumOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceMinOp::verify() { return verifyInferredType(*this); }
LogicalResult BatchNormOp::verify() { return verifyInferredType(*this); }
LogicalResult TransposeOp::verify() { return verifyInferredType(*this); }
LogicalResult ConcatOp::verify() { return verifyInferredType(*this); }
LogicalResult SliceOp::verify() { return verifyInferredType(*this); }
LogicalResult GatherOp::verify() { return verifyInferredType(*this); }

LogicalResult LayerNormOp::verify() {
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError("epsilon must be >= 0");
  return verifyInferredType(*this);
}

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getType().getRank(), axis = getAxis();
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return emitOpError("axis ") << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (ratio < 0.0 || ratio >= 1.0)
    return emitOpError("ratio ") << ratio << " must be in [0, 1)";
  return success();
}

//===----------------------------------------------------------------------===//
// Ops whose result type is their parameter
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

#define GET_OP_CLASSES
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.cpp.inc"
