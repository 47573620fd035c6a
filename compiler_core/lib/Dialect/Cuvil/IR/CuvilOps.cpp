//===- CuvilOps.cpp - cuvil dialect registration and verifiers ------------===//
//
// Verifiers compare each op with its shape rule (CuvilShapeRules.cpp) and
// check what the rule does not cover (predicates, epsilon, ratio).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cuvil;

#include "cuvil/Dialect/Cuvil/IR/CuvilOpsDialect.cpp.inc"
#include "cuvil/Dialect/Cuvil/IR/CuvilOpsEnums.cpp.inc"

llvm::DenseMap<Location, StringAttr>
mlir::cuvil::taggedKernelNames(Operation *op) {
  llvm::DenseMap<Location, StringAttr> names;
  auto table = op->getAttrOfType<ArrayAttr>(
      CuvilDialect::KernelNamesAttrHelper::getNameStr());
  if (!table)
    return names;
  for (Attribute entry : table) {
    auto pair = dyn_cast<ArrayAttr>(entry);
    if (!pair || pair.size() != 2)
      continue;
    auto loc = dyn_cast<LocationAttr>(pair[0]);
    auto name = dyn_cast<StringAttr>(pair[1]);
    if (loc && name)
      names[loc] = name;
  }
  return names;
}

void CuvilDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.cpp.inc"
      >();
  registerCuvilBytecodeInterface(this);
}

Operation *CuvilDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  // cuvil.dim of a static dimension.
  if (auto size = dyn_cast<IntegerAttr>(value); size && type.isIndex())
    return builder.create<arith::ConstantOp>(loc, type, size);
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

/// `cuvil.symbols` on a function argument or result: one non-empty string
/// per dynamic dimension of its tensor type.
static LogicalResult verifySymbolsAttr(Operation *op, Type type,
                                       NamedAttribute attr, StringRef what) {
  if (attr.getName() != CuvilDialect::SymbolsAttrHelper::getNameStr())
    return success();
  // After bufferization the argument is a memref or a descriptor's parts;
  // the names then only document the signature.
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success();
  auto names = dyn_cast<ArrayAttr>(attr.getValue());
  if (!names)
    return op->emitError("'") << attr.getName().getValue() << "' on " << what
                              << " must be an array of strings";
  if ((int64_t)names.size() != tensor.getNumDynamicDims())
    return op->emitError("'") << attr.getName().getValue() << "' on " << what
                              << " names " << names.size() << " dimensions but "
                              << type << " has " << tensor.getNumDynamicDims()
                              << " dynamic ones; name each '?' once, in order";
  for (Attribute name : names) {
    auto text = dyn_cast<StringAttr>(name);
    if (!text || text.getValue().empty())
      return op->emitError("'") << attr.getName().getValue() << "' on " << what
                                << " must hold non-empty strings, got " << name;
  }
  return success();
}

LogicalResult CuvilDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  return verifySymbolsAttr(op, func.getArgumentTypes()[argIndex], attr,
                           "argument #" + std::to_string(argIndex));
}

LogicalResult CuvilDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  return verifySymbolsAttr(op, func.getResultTypes()[resultIndex], attr,
                           "result #" + std::to_string(resultIndex));
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
    // A dynamic size meets a static one only as that size (or as 1, which
    // the static side then broadcasts); two dynamic sizes stay dynamic.
    if (l == r || r == 1)
      out = l;
    else if (l == 1)
      out = r;
    else if (ShapedType::isDynamic(l))
      out = r;
    else if (ShapedType::isDynamic(r))
      out = l;
    else
      return std::nullopt;
  }
  return result;
}

std::optional<ArrayRef<char>> mlir::cuvil::rawConstantBytes(Attribute value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.getRawData();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
  return std::nullopt;
}

std::optional<int64_t> mlir::cuvil::mergeDims(int64_t lhs, int64_t rhs) {
  if (lhs == rhs || ShapedType::isDynamic(rhs))
    return lhs;
  if (ShapedType::isDynamic(lhs))
    return rhs;
  return std::nullopt;
}

bool mlir::cuvil::onlyForgetsSizes(RankedTensorType in, RankedTensorType out) {
  if (in.getRank() != out.getRank())
    return false;
  for (auto [i, o] : llvm::zip(in.getShape(), out.getShape()))
    if (i != o && !ShapedType::isDynamic(o))
      return false;
  return true;
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
/// Whether a matmul of `operand` elements may accumulate in and return
/// `result` elements: the same type, or bf16/f16 in f32, i8 in i32.
static bool accumulatesIn(Type operand, Type result) {
  if (operand == result)
    return true;
  if (operand.isBF16() || operand.isF16())
    return result.isF32();
  return operand.isInteger(8) && result.isInteger(32);
}

bool MatmulOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != 1 || actual.size() != 1)
    return false;
  auto expected = dyn_cast<RankedTensorType>(inferred.front());
  auto given = dyn_cast<RankedTensorType>(actual.front());
  return expected && given && expected.getShape() == given.getShape() &&
         accumulatesIn(expected.getElementType(), given.getElementType());
}

/// Checks the result type against the op's shape rule; `widens` allows a
/// wider result element type (a mixed-precision matmul).
static LogicalResult verifyInferredType(Operation *op, bool widens = false) {
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
  if (actual.getElementType() != expected.getElementType() &&
      !(widens &&
        accumulatesIn(expected.getElementType(), actual.getElementType())))
    return op->emitOpError("result element type ")
           << actual.getElementType() << " differs from the inferred element "
           << "type " << expected.getElementType()
           << (widens ? " (a matmul may widen bf16 or f16 to f32, i8 to i32)"
                      : "");
  return success();
}

LogicalResult AddOp::verify() { return verifyInferredType(*this); }
LogicalResult SubOp::verify() { return verifyInferredType(*this); }
LogicalResult MulOp::verify() { return verifyInferredType(*this); }
LogicalResult DivOp::verify() { return verifyInferredType(*this); }
LogicalResult PowOp::verify() { return verifyInferredType(*this); }
LogicalResult MaxOp::verify() { return verifyInferredType(*this); }
LogicalResult MinOp::verify() { return verifyInferredType(*this); }
LogicalResult RemOp::verify() { return verifyInferredType(*this); }

LogicalResult CompareOp::verify() { return verifyInferredType(*this); }

LogicalResult WhereOp::verify() { return verifyInferredType(*this); }
LogicalResult MatmulOp::verify() {
  return verifyInferredType(*this, /*widens=*/true);
}
LogicalResult QuantizedMatmulOp::verify() { return verifyInferredType(*this); }
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
  if (!getSizes().empty() &&
      (int64_t)getSizes().size() != out.getNumDynamicDims())
    return emitOpError("has ")
           << getSizes().size() << " sizes for the " << out.getNumDynamicDims()
           << " dynamic dimensions of " << formatShape(out.getShape())
           << "; give one index per '?', or none to derive them";
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << formatShape(in.getShape()) << " (" << in.getNumElements()
           << " elements) into " << formatShape(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

LogicalResult DimOp::verify() {
  RankedTensorType type = getInput().getType();
  if (getAxis() < 0 || getAxis() >= type.getRank())
    return emitOpError("axis ") << getAxis() << " is out of range for input "
                                << "shape " << formatShape(type.getShape());
  return success();
}

LogicalResult RangeOp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() != 1)
    return emitOpError("result must be 1-D, got ")
           << formatShape(type.getShape());
  if (type.getElementType().isInteger(1))
    return emitOpError("result element type must be a number, not i1");
  if (getStep() < 1)
    return emitOpError("step must be >= 1, got ") << getStep();
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
  if (Value like = getLike()) {
    ArrayRef<int64_t> likeShape =
        cast<RankedTensorType>(like.getType()).getShape();
    if (failed(verifyCompatibleShape(likeShape, out)))
      return emitOpError("'like' has shape ")
             << formatShape(likeShape) << " but the result has "
             << formatShape(out);
    return success();
  }
  for (size_t i = 0; i < out.size(); ++i) {
    size_t offset = out.size() - in.size();
    if (ShapedType::isDynamic(out[i]) &&
        (i < offset || !ShapedType::isDynamic(in[i - offset])))
      return emitOpError("result dimension ")
             << i << " is dynamic but the input's is not; pass a tensor of "
             << "the result's shape as 'like'";
  }
  return success();
}

#define GET_OP_CLASSES
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.cpp.inc"
