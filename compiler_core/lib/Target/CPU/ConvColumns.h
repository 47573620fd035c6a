//===- ConvColumns.h - Convolution columns per GEMM task --------*- C++ -*-===//
//
// A convolution's image-to-column copy computed inside each thread task of
// its GEMM (see ConvColumns.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_CONVCOLUMNS_H
#define CUVIL_TARGET_CPU_CONVCOLUMNS_H

#include "GemmTiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::cuvil::cpu {

/// The image-to-column gather (cuvil-cpu-conv-to-gemm's 6-D generic over
/// [1, C, KH, KW, OH, OW] for one image, [C, KH, KW, N, OH, OW] for a
/// static batch) that `gemm`'s right operand collapses to [C*KH*KW,
/// N*OH*OW], if that is its only use; else null.
linalg::GenericOp columnsOf(linalg::MatmulOp gemm);

/// A convolution's GEMM (static, whole register tiles, not small) whose
/// thread tasks can compute their own columns: its image-to-column gather,
/// with `tiles` set to tasks of whole output rows of one image (columnTile
/// of one image's pixels) and K in one block; or, for a GEMM over pixel
/// rows, its pixel-row gather, with tasks of whole output rows of one image
/// (pixelRowTile) and `rest.rows` set where they end in a partial register
/// tile; else null.
linalg::GenericOp columnTasks(linalg::LinalgOp gemm, bool fullRegisterRows,
                              int64_t registerRows, int64_t registerCols,
                              GemmRemainders &rest, GemmTiles &tiles);

/// The pixel-row gather (cuvil-cpu-conv-to-gemm's 6-D generic over
/// [N, OH, OW, KH, KW, C]) that `gemm`'s left operand collapses to
/// [N*OH*OW, KH*KW*C], if that is its only use; else null.
linalg::GenericOp pixelRowsOf(linalg::MatmulOp gemm);

/// The row tile of a GEMM over `images` images' pixel rows whose tasks
/// gather their own rows: whole output rows (`outWidth` pixels each)
/// dividing an image's `pixels`, at most `maxRows`, whose largest share of
/// the tasks between two threads is least (a row of a partial register
/// tile counted three times), the larger on a tie; 0 if none fits.
int64_t pixelRowTile(int64_t images, int64_t pixels, int64_t outWidth,
                     int64_t registerRows, int64_t colTiles, int64_t maxRows);

/// The column tile (thread task) of a GEMM over `n` = OH x `outWidth`
/// pixels whose register tiles are `registerCols` wide, such that every
/// task covers whole output rows and whole register tiles: the largest
/// multiple of both up to 8 register tiles (or the first such multiple)
/// dividing `n`; 0 if none does.
int64_t columnTile(int64_t n, int64_t outWidth, int64_t registerCols);

/// Transform text fusing the gather tagged `cuvil.gemm_id` = `id` into the
/// thread tasks of its (already tiled) GEMM and vectorizing its tile one
/// output row at a time, or `rowTile` elements of it at a time (0: the whole
/// row). Expects `%tf<id>`, the GEMM's forall, and leaves `%fl<id>`, the
/// forall after fusion.
std::string fuseColumnsIntoTasks(int64_t id, int64_t rowTile = 0);

/// The piece of a gathered row of `extent` elements one vector copy moves:
/// 0 (the whole row) up to 128 elements, else the largest of 64, 32 and 16
/// dividing it. LLVM weighs a copy of a `<512 x float>` as one instruction,
/// so loops of such copies get unrolled whole (a 7 x 7 image's gather of 512
/// channels: 2,016 loads and stores in one block, and a second of machine
/// scheduling).
int64_t gatherRowTile(int64_t extent);

/// Rewrites each thread task's slice of the collapsed columns as the
/// collapse of a slice of the gather (whole output rows of one image, every
/// channel and kernel offset), so that the gather tagged like its GEMM can be
/// fused into the task. Runs between the thread tiling and
/// fuseColumnsIntoTasks.
void sliceColumnsBeforeCollapse(ModuleOp module);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_CONVCOLUMNS_H
