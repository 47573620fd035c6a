//===- GemmTiles.h - Cache and thread tiles of the CPU's GEMMs --*- C++ -*-===//
//
// The tiling decisions of cuvil-cpu-schedule's GEMMs (see GemmTiles.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_GEMMTILES_H
#define CUVIL_TARGET_CPU_GEMMTILES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::cuvil::cpu {

/// Tile sizes of one GEMM (batch 0 for a plain matmul).
struct GemmTiles {
  int64_t blockM, blockN, blockK;
};

/// Which register loops of a GEMM may end in a partial tile (M or N dynamic
/// or not divided by its tiles), and whether a batched GEMM's batch size is
/// dynamic.
struct GemmRemainders {
  bool rows = false, cols = false, batch = false;
};

/// Largest of `candidates` dividing `size`, or 0.
int64_t largestDivisor(int64_t size, ArrayRef<int64_t> candidates);

/// Chooses the cache tiles of an (m, n, k) GEMM and which register loops
/// end in a partial tile.
GemmTiles chooseTiles(int64_t m, int64_t n, int64_t k, int64_t registerRows,
                      int64_t registerCols, GemmRemainders &rest);

/// Cuts a static GEMM's single cache tile in two (see GemmTiles.cpp).
void splitLoneTile(int64_t m, int64_t n, int64_t registerRows,
                   int64_t registerCols, const GemmRemainders &rest,
                   GemmTiles &tiles);

/// Makes an odd number of thread tasks under 8 even (see GemmTiles.cpp).
void evenOutTasks(int64_t m, int64_t n, int64_t registerCols,
                  const GemmRemainders &rest, GemmTiles &tiles);

/// Whether a GEMM does too little work to split across threads.
bool isSmallWork(linalg::LinalgOp gemm);

/// Whether a GEMM is worth cutting into more cache tiles than its sizes ask
/// for, so that two threads share it.
bool isWorthSharing(linalg::LinalgOp gemm);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_GEMMTILES_H
