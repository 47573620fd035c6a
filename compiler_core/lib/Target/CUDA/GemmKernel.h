//===- GemmKernel.h - Building the cuda target's GEMM kernels ----*- C++
//-*-===//
//
// What cuvil-cuda-tile-matmul's two kernels share: the contraction's loop
// dimensions, the ops a kernel absorbs around it, staging slices of the
// operands in shared memory and storing results through the epilogue. The
// float32 kernel (TileMatmul.cpp) multiplies with FMAs on register tiles;
// the bf16/f16 kernel (MmaMatmul.cpp) with tensor cores (mma.sync).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_LIB_TARGET_CUDA_GEMMKERNEL_H
#define CUVIL_LIB_TARGET_CUDA_GEMMKERNEL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::cuvil::cuda {

/// How a contraction's products are computed.
enum class GemmKind {
  F32,        ///< float32 operands: FMAs on register tiles
  TensorCore, ///< bf16 or f16 operands, float32 sums: mma.sync
  TF32,       ///< float32 operands read as TF32 (allowed): mma.sync
};

/// The loop dimensions of a contraction Cuvil tiles: one each of m, n, k
/// and at most one batch dimension.
struct GemmDims {
  std::optional<unsigned> batch;
  unsigned m, n, k;
  GemmKind kind = GemmKind::F32;
  /// TensorCore: the operands' 16-bit type (bf16 or f16). A float32 left
  /// operand holding widened values of it (Cuvil's lowering widens a mixed
  /// matmul's left operand once) is narrowed back on its way to the MMAs,
  /// which is exact.
  Type narrow;
  /// The op that widened the left operand when it did nothing else (one
  /// 16-bit input read at the same indices): the kernel reads that input
  /// instead, and the widening goes when nothing else reads its result.
  linalg::GenericOp widening;
};

/// The dimensions of `op` if it is a contraction one of the kernels takes.
std::optional<GemmDims> tileableDims(linalg::LinalgOp op);

/// What a GEMM kernel absorbs around its contraction: the fill giving the
/// output its initial value, and the elementwise op reading the output
/// right after (bias, activation), computed on the sums in registers.
struct FusedOps {
  linalg::FillOp fill;        ///< null: the output's values are loaded
  linalg::GenericOp epilogue; ///< null: the sums are stored as they are
  unsigned epilogueInput = 0; ///< the epilogue's input reading the output
  bool storeOutput = true;    ///< the output is still read after all this
};

FusedOps findFused(linalg::LinalgOp op);

/// Builds the kernel of one contraction in place of it (and of the ops it
/// absorbs).
class GemmKernelBuilder {
public:
  GemmKernelBuilder(linalg::LinalgOp op, GemmDims dims, FusedOps fused)
      : op(op), dims(dims), fused(fused) {}

  /// FMAs on 4 x 4 register tiles (float32).
  void buildF32(RewriterBase &rewriter);
  /// Warp-level mma.sync (bf16/f16 operands, or TF32; float32 sums).
  void buildTensorCore(RewriterBase &rewriter);

private:
  Value index(OpBuilder &b, int64_t value) {
    return b.create<arith::ConstantIndexOp>(op.getLoc(), value);
  }
  Location loc() { return op.getLoc(); }
  /// The indices of `operand` at loop position `ivs` (one per loop).
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> ivs);
  /// The contraction's sizes along m, n and k.
  struct Extents {
    Value M, N, K;
  };
  /// A launch, in place of the contraction, of `threadsX x threadsY`
  /// threads per `rows x cols` tile of the result (batches on z) with
  /// shared memrefs `tiles` ({rows, cols} each, of `element`); the builder
  /// is left inside it.
  struct Launch {
    gpu::LaunchOp op;
    Extents size;
    Value m0, n0, batchIv, tid; ///< the block's tile, the thread's number
  };
  Launch launchOverTiles(OpBuilder &b, int64_t rows, int64_t cols,
                         int64_t threadsX, int64_t threadsY, Type element,
                         ArrayRef<std::pair<int64_t, int64_t>> tiles);
  /// True when loop dimension `dim` is the operand's innermost dimension.
  bool contiguousIn(OpOperand &operand, unsigned dim);

  /// A `rows x cols` slice of an operand, each of `threads` threads (`tid`)
  /// taking `rows * cols / threads` elements; neighbouring threads take
  /// neighbouring elements along the operand's contiguous dimension.
  struct Slice {
    OpOperand *operand;
    unsigned rowDim, colDim; ///< loop dimensions of the rows and columns
    Value rowSize, colSize;  ///< the operand's extent along them
    int64_t rows, cols, threads;
    /// Read instead of the operand's buffer (same shape and indices).
    Value source = nullptr;
  };
  /// Position (row, column) within the slice of the `q`th element of `tid`.
  std::pair<Value, Value> slicePosition(OpBuilder &b, const Slice &slice,
                                        Value tid, int64_t q);
  /// Loads the slice at (`row0`, `col0`) into registers, zeros past the
  /// operand's edges.
  SmallVector<Value> loadSlice(OpBuilder &b, const Slice &slice, Value row0,
                               Value col0, Value tid, Value batchIv);
  /// Stores what loadSlice returned into shared-memory `tile`.
  void storeSlice(OpBuilder &b, const Slice &slice, Value tile, Value tid,
                  ArrayRef<Value> values);

  /// Stores the result of element `at` of the output, whose sum over the
  /// contraction is `sum`: through the fill's value or the output's, the
  /// epilogue, into the output and/or the epilogue's result.
  void storeResult(OpBuilder &b, Location l, Value sum, ArrayRef<Value> at);
  /// storeResult at output row `m`, column `n`, when both are inside.
  void storeIfInside(OpBuilder &b, Value sum, Value m, Value n, Value M,
                     Value N, Value batchIv);
  /// Erases the contraction and the ops its kernel absorbed.
  void eraseAbsorbed(RewriterBase &rewriter);

  linalg::LinalgOp op;
  GemmDims dims;
  FusedOps fused;
};

} // namespace mlir::cuvil::cuda

#endif // CUVIL_LIB_TARGET_CUDA_GEMMKERNEL_H
