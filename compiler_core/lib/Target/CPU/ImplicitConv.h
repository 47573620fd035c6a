//===- ImplicitConv.h - Convolutions as GEMMs over shifted rows -*- C++ -*-===//
//
// A unit-stride convolution computed as one GEMM whose right operand is
// read straight from the padded image (see ImplicitConv.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_IMPLICITCONV_H
#define CUVIL_TARGET_CPU_IMPLICITCONV_H

#include "GemmTiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace mlir::cuvil::cpu {

/// The thread tasks of an implicit convolution GEMM over `images` images,
/// `filters` rows (a multiple of `registerRows`) and `cols` columns (a
/// multiple of `registerCols`) whose right operand has `channelBytes` per
/// column and reaches `span` columns past each: rows `blockM` (whole
/// register tiles dividing `filters`) by columns `blockN` (whole register
/// tiles dividing `cols`), such that the largest thread's share of the work
/// is least; blockK is the whole reduction. A zero blockN: no tile fits.
GemmTiles implicitConvTiles(int64_t images, int64_t filters, int64_t cols,
                            int64_t channelBytes, int64_t span,
                            int64_t registerRows, int64_t registerCols);

/// The dense constant `value` with its elements moved into `type` (as many
/// elements): element i of the result is element `sourceIndex(i)` of
/// `value` in row-major order. Null when `value` is no dense constant of
/// whole bytes.
Value permutedConstant(OpBuilder &b, Location loc, Value value,
                       RankedTensorType type,
                       llvm::function_ref<int64_t(int64_t)> sourceIndex);

/// Rewrites `conv` (unit strides, static sizes, a kernel larger than 1x1,
/// filters in whole `registerRows`, initialized by `fill`) as an implicit
/// GEMM, its weights packed by `registerRows` filters, where the columns it
/// computes beyond the image's width (rounded up to whole register tiles of
/// implicitConvPieces vectors of `vectorLanes`, or fewer) cost at most a
/// sixth more work; fails, leaving the IR as it was, elsewhere.
LogicalResult convAsImplicitGemm(RewriterBase &rewriter,
                                 linalg::Conv2DNchwFchwOp conv,
                                 linalg::FillOp fill, int64_t registerRows,
                                 int64_t vectorLanes);

/// The vectors of `vectorLanes` lanes in a register tile's row of an
/// implicit convolution GEMM of `element`s, at most: fewer where the
/// columns would waste too much.
int64_t implicitConvPieces(int64_t vectorLanes, Type element);

/// Transform text for the thread stage of cuvil-cpu-schedule: the
/// implicit convolution GEMM tagged `cuvil.gemm_id` = `id` (loops n, fo, fi,
/// pb, j, l, c, kh, kw over `channels` channels) cut into thread tasks of
/// `tiles` with its fill fused into each, its channels into blocks, then into
/// register tiles of one row of packed filters (`registerRows`, fi) by
/// `registerCols` columns accumulated one channel and kernel offset at a
/// time.
std::string implicitConvTasks(int64_t id, const GemmTiles &tiles,
                              int64_t registerRows, int64_t registerCols,
                              int64_t channels);

/// Rewrites each register tile implicitConvTasks left (loops of extent 1
/// but the filters fi and the columns j, l) as a contraction over
/// (m, j, l, k) of the packed weights' row [rows, 1] by the image's shifted
/// row [1, pieces, lanes] into the accumulators [rows, pieces, lanes]
/// (rank-reducing slices, so the accumulators stay a subset of the task's
/// tile that the K loops carry in registers, as vectors of `lanes`), tagged
/// like the convolution; a tile it cannot rewrite loses its tag and runs as
/// loops. Runs between the thread stage and the main schedule.
void implicitConvRegisterContractions(ModuleOp module);

/// Transform text of the main stage unrolling, before the register tiles
/// (implicitConvRegisterContractions) are vectorized, the loops over a
/// small kernel's `kernelHeight` x `kernelWidth` offsets; empty for a larger
/// kernel.
std::string implicitConvKernelUnroll(int64_t id, int64_t kernelHeight,
                                     int64_t kernelWidth);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_IMPLICITCONV_H
