//===- DTypes.h - The element types of Cuvil IR, in one table --*- C++ -*-===//
//
// The one dtype table: every list of element types (Python's accepted dtypes,
// compiled signatures, the bindings) is derived from it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_DTYPES_H
#define CUVIL_DIALECT_CUVIL_IR_DTYPES_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::cuvil {

/// One element type of Cuvil tensors.
struct DType {
  /// The name users and signatures use ("float32"); NumPy's name when NumPy
  /// has the type.
  llvm::StringLiteral name;
  /// The MLIR element type as printed ("f32").
  llvm::StringLiteral mlirName;
  /// Bytes one element occupies in a buffer (`i1` is stored as a byte).
  unsigned byteSize;
  /// False where NumPy has no such dtype (bfloat16).
  bool inNumPy;
  /// True where front ends may produce it and the CPU pipeline compiles it end
  /// to end (tested); the others are admitted by the dialect's type
  /// constraints, but not yet lowered by every pass.
  bool compiled;
  /// Builds the MLIR element type.
  Type (*get)(MLIRContext *context);

  bool matches(Type type) const { return get(type.getContext()) == type; }
};

/// Every element type, in a fixed order (floats, then integers and bool).
llvm::ArrayRef<DType> dtypes();

/// The table entry of an element type, or nullptr when Cuvil has none.
const DType *lookupDType(Type elementType);

/// The table entry named `name` ("float32"), or nullptr.
const DType *lookupDType(llvm::StringRef name);

/// The dtype name ("float32") of an element type; std::nullopt when Cuvil
/// tensors cannot hold it. Compiled signatures and the bindings use this.
std::optional<llvm::StringRef> dtypeName(Type elementType);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_DTYPES_H
