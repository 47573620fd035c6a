//===- LoweringUtils.h - Builders shared by the cuvil lowerings -*- C++ -*-===//
#ifndef CUVIL_LIB_CONVERSION_CUVILTOLINALG_LOWERINGUTILS_H
#define CUVIL_LIB_CONVERSION_CUVILTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil::lowering {

using ScalarBody = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// `t`'s element type in `shape`.
inline RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

/// `tensor.empty` of `type`, with the sizes of its dynamic dimensions.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes = {});

/// A tensor of `type` filled with the scalar attribute `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   TypedAttr value, ValueRange dynamicSizes = {});

/// The sizes of `type`'s dynamic dimensions (an iteration space) read from
/// `inputs` whose `maps` address that dimension with a dynamic size of their
/// own; failure when an input does not provide one.
FailureOr<SmallVector<Value>> dynamicSizes(OpBuilder &b, Location loc,
                                           RankedTensorType type,
                                           ValueRange inputs,
                                           ArrayRef<AffineMap> maps);

/// Map from a rank-`resultRank` iteration space to an operand of `shape`
/// broadcast NumPy-style (right-aligned, size-1 dims read index 0).
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape);

/// broadcastMap of each input to `resultType`.
SmallVector<AffineMap>
broadcastMaps(MLIRContext *ctx, RankedTensorType resultType, ValueRange inputs);

/// Whether `inputs` provide every dynamic size of `type` (see dynamicSizes).
bool providesDynamicSizes(RankedTensorType type, ValueRange inputs,
                          ArrayRef<AffineMap> maps);

/// Map that keeps only the iteration dims not in `droppedDims`.
AffineMap projectionMap(MLIRContext *ctx, unsigned rank,
                        ArrayRef<int64_t> droppedDims);

/// A parallel linalg.generic computing `body` over NumPy-broadcast inputs.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ScalarBody body);

/// Like `elementwise` with explicit input maps.
Value elementwiseWithMaps(OpBuilder &b, Location loc,
                          RankedTensorType resultType, ValueRange inputs,
                          ArrayRef<AffineMap> inputMaps, ScalarBody body,
                          ValueRange resultSizes = {});

enum class ReduceKind { Sum, Max, Min };

/// Reduces `input` over sorted `axes`; the result drops those dims.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             ReduceKind kind);

/// Scalar constant of `type` (float or integer) with numeric `value`.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// Identity element of a reduction for an element type.
TypedAttr reductionInit(Builder &b, Type elementType, ReduceKind kind);

/// Reshape with collapse/expand where possible, else through a flat vector;
/// at most one dynamic size per expanded group (its size follows).
Value reshape(OpBuilder &b, Location loc, Value input,
              RankedTensorType resultType);

/// Scalar arithmetic by element type (float or signless integer).
Value scalarAdd(OpBuilder &b, Location loc, Value l, Value r);
Value scalarSub(OpBuilder &b, Location loc, Value l, Value r);
Value scalarMul(OpBuilder &b, Location loc, Value l, Value r);
Value scalarDiv(OpBuilder &b, Location loc, Value l, Value r);
Value scalarRem(OpBuilder &b, Location loc, Value l, Value r);
Value scalarMax(OpBuilder &b, Location loc, Value l, Value r);
Value scalarMin(OpBuilder &b, Location loc, Value l, Value r);
Value scalarConvert(OpBuilder &b, Location loc, Value v, Type to);

/// `rows` (M x K) times an int4 weight (see cuvil.quantized_matmul):
/// dequantization and contraction as linalg generics, M x N.
Value dequantizedGemm(OpBuilder &b, Location loc, Value rows, Value packed,
                      Value scales, int64_t group);

void populateElementwisePatterns(RewritePatternSet &patterns);
void populateStructuredPatterns(RewritePatternSet &patterns);
void populateWindowPatterns(RewritePatternSet &patterns);

/// Why `op` cannot be lowered with its dynamic sizes (which size must be
/// static, and how to get there), or an empty string when it can.
std::string dynamicSizeRefusal(Operation *op);

} // namespace mlir::cuvil::lowering

#endif // CUVIL_LIB_CONVERSION_CUVILTOLINALG_LOWERINGUTILS_H
