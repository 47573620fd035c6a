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
/// of one image's pixels) and K in one block; else null.
linalg::GenericOp columnTasks(linalg::LinalgOp gemm, bool fullRegisterRows,
                              int64_t registerCols, const GemmRemainders &rest,
                              GemmTiles &tiles);

/// The column tile (thread task) of a GEMM over `n` = OH x `outWidth`
/// pixels whose register tiles are `registerCols` wide, such that every
/// task covers whole output rows and whole register tiles: the largest
/// multiple of both up to 8 register tiles (or the first such multiple)
/// dividing `n`; 0 if none does.
int64_t columnTile(int64_t n, int64_t outWidth, int64_t registerCols);

/// Transform text fusing the gather tagged `cuvil.gemm_id` = `id` into the
/// thread tasks of its (already tiled) GEMM and vectorizing its tile one
/// output row at a time. Expects `%tf<id>`, the GEMM's forall, and leaves
/// `%fl<id>`, the forall after fusion.
std::string fuseColumnsIntoTasks(int64_t id);

/// Rewrites each thread task's slice of the collapsed columns as the
/// collapse of a slice of the gather (whole output rows of one image, every
/// channel and kernel offset), so that the gather tagged like its GEMM can be
/// fused into the task. Runs between the thread tiling and
/// fuseColumnsIntoTasks.
void sliceColumnsBeforeCollapse(ModuleOp module);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_CONVCOLUMNS_H
