//===- CuvilOps.h - Operations of the cuvil dialect --------------*- C++
//-*-===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILOPS_H
#define CUVIL_DIALECT_CUVIL_IR_CUVILOPS_H

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cuvil {

/// NumPy broadcast of two shapes; std::nullopt when incompatible. A dynamic
/// size is assumed equal to the other side's (it never broadcasts itself).
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// The size two dimensions that must be equal share: the static one when one
/// is dynamic; std::nullopt for two different static sizes.
std::optional<int64_t> mergeDims(int64_t lhs, int64_t rhs);

/// Renders a shape as `[4, 3]` for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Whether `out` is `in` with some static sizes made dynamic (same rank, every
/// other size equal): a reshape between them only forgets sizes, a cast.
bool onlyForgetsSizes(RankedTensorType in, RankedTensorType out);

/// The dims of `high` that make up each dim of `low` in a reshape between
/// them (`expanding`: `low` is the input), when the types fix them: every
/// grouping whose sizes fit places each non-unit dim alike. std::nullopt
/// when none fits or several do ([?, 12, ?, 64] into [?, ?, 64] may merge
/// the batch with the heads or the heads with the sequence): then the
/// dynamic sizes of the result must be given, not guessed.
std::optional<llvm::SmallVector<llvm::SmallVector<int64_t, 2>>>
reshapeGroups(RankedTensorType high, RankedTensorType low, bool expanding);

/// The bytes of a dense constant, when it holds them in row-major order (one
/// element for a splat): a dense elements attribute or a resource blob.
std::optional<llvm::ArrayRef<char>> rawConstantBytes(Attribute value);

/// The cuvil dialect's version in bytecode (CuvilBytecode.cpp): raised when
/// an op changes incompatibly, with an upgrade from the older form.
constexpr uint64_t kCuvilDialectVersion = 1;
void registerCuvilBytecodeInterface(CuvilDialect *dialect);

} // namespace mlir::cuvil

#include "cuvil/Dialect/Cuvil/IR/CuvilOpsEnums.h.inc"

#define GET_OP_CLASSES
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h.inc"

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILOPS_H
