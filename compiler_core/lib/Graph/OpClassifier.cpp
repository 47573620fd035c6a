//===- OpClassifier.cpp - Op kinds from interfaces and traits -------------===//
//
// What an op does, asked of the op itself: linalg's structured-op interfaces
// (contraction, convolution, iterator types), the Elementwise trait,
// memory effects, control-flow and call interfaces, view and cast
// interfaces. A few ops whose meaning no interface states are named by
// class (tensor reshapes, vector shuffles, fused multiply-adds), and the
// cuvil dialect's ops, which declare no such traits (its binary ops
// broadcast, so the Elementwise trait's same-shape rule does not hold), are
// classified by a table of their classes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Graph/GraphBuilder.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/CopyOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/VectorInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

using namespace mlir;

namespace cuvil::graph {
namespace {

std::optional<OpKind> cuvilKind(Operation *op) {
  namespace cv = mlir::cuvil;
  if (isa<cv::MatmulOp, cv::Conv2dOp>(op))
    return OpKind::Contraction;
  if (isa<cv::ReduceSumOp, cv::ReduceMeanOp, cv::ReduceMaxOp, cv::ReduceMinOp,
          cv::SoftmaxOp, cv::LayerNormOp, cv::MaxPool2dOp, cv::AvgPool2dOp>(op))
    return OpKind::Reduction;
  // Inference-time batch norm and dropout act on each element on its own.
  if (isa<cv::AddOp, cv::SubOp, cv::MulOp, cv::DivOp, cv::PowOp, cv::MaxOp,
          cv::MinOp, cv::RemOp, cv::CompareOp, cv::WhereOp, cv::NegOp,
          cv::AbsOp, cv::ExpOp, cv::LogOp, cv::TanhOp, cv::SqrtOp, cv::RsqrtOp,
          cv::ErfOp, cv::SinOp, cv::CosOp, cv::FloorOp, cv::CeilOp, cv::TruncOp,
          cv::RoundOp, cv::SigmoidOp, cv::ReluOp, cv::GeluOp, cv::CastOp,
          cv::BatchNormOp, cv::DropoutOp>(op))
    return OpKind::Elementwise;
  if (isa<cv::ReshapeOp, cv::TransposeOp, cv::BroadcastToOp, cv::ConcatOp,
          cv::SliceOp, cv::GatherOp>(op))
    return OpKind::Shape;
  return std::nullopt;
}

/// Whether a structured op's body multiplies (a convolution does, a pooling
/// op, which linalg also files under ConvolutionOpInterface, does not).
bool bodyMultiplies(linalg::LinalgOp op) {
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<arith::MulFOp, arith::MulIOp, complex::MulOp>(inner);
  });
}

std::optional<OpKind> structuredKind(Operation *op) {
  if (isa<linalg::SoftmaxOp>(op))
    return OpKind::Reduction;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return std::nullopt;
  if (isa<linalg::FillOpInterface, CopyOpInterface>(op))
    return OpKind::Memory;
  if (isa<linalg::ContractionOpInterface>(op))
    return OpKind::Contraction;
  if (isa<linalg::ConvolutionOpInterface>(op))
    return bodyMultiplies(linalgOp) ? OpKind::Contraction : OpKind::Reduction;
  if (linalgOp.getNumReductionLoops() > 0) {
    // A generic that reduces: a generalized matmul or convolution when its
    // maps and body say so (the convolution matcher alone also accepts
    // additions, hence the multiply).
    bool contracts = linalg::isaContractionOpInterface(linalgOp) ||
                     (linalg::isaConvolutionOpInterface(linalgOp) &&
                      bodyMultiplies(linalgOp));
    return contracts ? OpKind::Contraction : OpKind::Reduction;
  }
  // All loops parallel: a body that only yields moves data (transpose,
  // broadcast, a generalized copy); one that computes is elementwise.
  if (linalgOp.getBlock()->getOperations().size() == 1)
    return OpKind::Shape;
  return OpKind::Elementwise;
}

/// Ops whose meaning no interface states, named by class.
std::optional<OpKind> namedKind(Operation *op) {
  // A multiply-add is the inner step of a lowered contraction.
  if (isa<math::FmaOp, vector::FMAOp, LLVM::FMAOp, LLVM::FMulAddOp,
          vector::ContractionOp, vector::OuterProductOp>(op))
    return OpKind::Contraction;
  // scf.reduce is scf.parallel's terminator, but what it does is combine.
  if (isa<vector::ReductionOp, vector::MultiDimReductionOp, scf::ReduceOp>(op))
    return OpKind::Reduction;
  if (isa<tensor::EmptyOp, bufferization::AllocTensorOp,
          VectorTransferOpInterface>(op))
    return OpKind::Memory;
  if (isa<gpu::LaunchFuncOp>(op))
    return OpKind::Call;
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp,
          tensor::PadOp, tensor::ConcatOp, tensor::ExtractOp, tensor::InsertOp,
          tensor::FromElementsOp, tensor::SplatOp, vector::BroadcastOp,
          vector::TransposeOp, vector::ShapeCastOp, vector::ExtractOp,
          vector::InsertOp, vector::ExtractElementOp, vector::InsertElementOp,
          vector::ShuffleOp, vector::SplatOp, vector::ExtractStridedSliceOp,
          vector::InsertStridedSliceOp>(op))
    return OpKind::Shape;
  return std::nullopt;
}

bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

/// Pointers and aggregates (memref descriptors) of lowered IR.
bool isAddressOrAggregate(Type type) {
  return isa<LLVM::LLVMPointerType, LLVM::LLVMStructType, LLVM::LLVMArrayType>(
      type);
}

/// Scalar or vector operands and results, the vectors all of one shape:
/// the Elementwise trait's rule, for ops that do not declare it (the LLVM
/// dialect's arithmetic).
bool actsPerElement(Operation *op) {
  std::optional<ArrayRef<int64_t>> shape;
  auto fits = [&](Type type) {
    if (isScalar(type))
      return true;
    auto vector = dyn_cast<VectorType>(type);
    if (!vector || !isScalar(vector.getElementType()))
      return false;
    if (!shape)
      shape = vector.getShape();
    return *shape == vector.getShape();
  };
  return llvm::all_of(op->getOperandTypes(), fits) &&
         llvm::all_of(op->getResultTypes(), fits);
}

bool hasMemoryEffects(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && !effects.hasNoEffect();
}

bool anyTypeIs(Operation *op, bool (*predicate)(Type)) {
  return llvm::any_of(op->getOperandTypes(), predicate) ||
         llvm::any_of(op->getResultTypes(), predicate);
}

/// What the generic interfaces and traits say, for ops not named above.
OpKind interfaceKind(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() ||
      isa<RegionBranchOpInterface, LoopLikeOpInterface, BranchOpInterface>(
          op) ||
      op->getNumRegions() > 0)
    return OpKind::Control;
  if (op->hasTrait<OpTrait::Elementwise>())
    return OpKind::Elementwise;
  if (hasMemoryEffects(op) || anyTypeIs(op, isAddressOrAggregate))
    return OpKind::Memory;
  if (isa<ViewLikeOpInterface, OffsetSizeAndStrideOpInterface, CastOpInterface>(
          op))
    return OpKind::Shape;
  // EmitC's C expressions declare no effects; all but opaque calls compute.
  if (op->hasTrait<OpTrait::emitc::CExpression>() &&
      !isa<emitc::CallOpaqueOp>(op) && actsPerElement(op))
    return OpKind::Elementwise;
  if (!isMemoryEffectFree(op) || op->getNumResults() == 0)
    return OpKind::Other;
  // Index-valued computations (affine.apply, dims, thread ids) compute
  // shapes and offsets; other pure scalar arithmetic is elementwise.
  if (llvm::all_of(op->getResultTypes(),
                   [](Type type) { return type.isIndex(); }))
    return OpKind::Shape;
  if (actsPerElement(op))
    return OpKind::Elementwise;
  return OpKind::Other;
}

} // namespace

OpKind classifyOp(Operation *op) {
  if (op->hasTrait<OpTrait::ConstantLike>())
    return OpKind::Constant;
  if (isa<CallOpInterface>(op))
    return OpKind::Call;
  if (std::optional<OpKind> kind = cuvilKind(op))
    return *kind;
  if (std::optional<OpKind> kind = structuredKind(op))
    return *kind;
  if (std::optional<OpKind> kind = namedKind(op))
    return *kind;
  return interfaceKind(op);
}

} // namespace cuvil::graph
