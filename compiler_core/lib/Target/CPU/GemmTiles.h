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
  /// A convolution's gather computed per thread task: the tile of its
  /// innermost dimension each vector copy moves (0: the whole row).
  int64_t gatherRow = 0;
  /// K steps per iteration of the register tiles' loop (registerKStep).
  int64_t kStep = 1;
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
/// end in a partial tile. `rhsConstant`: the right operand is a constant
/// (its panels are packed at compile time, whatever their size);
/// `elementBytes`: the size of its elements.
GemmTiles chooseTiles(int64_t m, int64_t n, int64_t k, int64_t registerRows,
                      int64_t registerCols, GemmRemainders &rest,
                      bool rhsConstant = false, int64_t elementBytes = 4);

/// Cuts a static GEMM's single cache tile in two (see GemmTiles.cpp).
void splitLoneTile(int64_t m, int64_t n, int64_t registerRows,
                   int64_t registerCols, const GemmRemainders &rest,
                   GemmTiles &tiles);

/// Makes an odd number of thread tasks under 8 even (see GemmTiles.cpp).
void evenOutTasks(int64_t m, int64_t n, int64_t registerCols,
                  const GemmRemainders &rest, GemmTiles &tiles);

/// The most tasks one thread runs of `tasks` split between the threads the
/// schedule balances for (two).
int64_t largestShare(int64_t tasks);

/// Picks a static GEMM's row tile so that the threads' shares of its tasks
/// are even where an odd count or a partial last row tile left them uneven
/// (see GemmTiles.cpp).
void balanceRowTiles(int64_t m, int64_t n, int64_t registerRows,
                     GemmRemainders &rest, GemmTiles &tiles);

/// Whether a GEMM does too little work to split across threads.
bool isSmallWork(linalg::LinalgOp gemm);

/// Whether a GEMM is worth cutting into more cache tiles than its sizes ask
/// for, so that two threads share it.
bool isWorthSharing(linalg::LinalgOp gemm);

/// Transform text tiling the GEMM `%gemm` (a plain or batched matmul whose
/// init is a fill, no K blocks) into register tiles of `rows` by `cols`
/// with the fill fused into each tile, so the accumulators start at the
/// fill's value instead of a pass writing the result before the GEMM reads
/// it; then vectorizes both. `%out` is the vectorized GEMM and `%out_l` its
/// (rows, columns) loops.
std::string registerTileWithFill(llvm::StringRef gemm, llvm::StringRef out,
                                 bool batched, int64_t rows, int64_t cols,
                                 int64_t kStep = 1);

/// Transform text tiling the register-tile GEMM `%gemm` by `kStep` steps of
/// K (`%out`, its loop `%out_k`) and vectorizing it and its fused fill
/// `%fill`.
std::string vectorizedKSteps(llvm::StringRef gemm, llvm::StringRef fill,
                             llvm::StringRef out, bool batched,
                             int64_t kStep = 1);

/// The K steps a register tile of `accumulators` vectors takes per iteration
/// of its loop: 4 where K (static) is whole K blocks of `blockK`, these are
/// whole steps of 4 and the vectors have 16 float lanes or more (AVX-512),
/// or 8 (AVX2) and the tile at most 8 accumulators, else 1. Four steps per
/// iteration issue the same FMAs with a quarter of the loop's own
/// instructions.
int64_t registerKStep(int64_t k, int64_t blockK, int64_t vectorLanes,
                      int64_t accumulators);

/// Whether a read of `size` rows of a GEMM's right operand is the rows of
/// one iteration of a register tile's K loop (a constant 1 to 8).
bool isRegisterKSteps(OpFoldResult size);

/// Register tiles with their fill read the right operand through a slice of
/// the tile's columns taken per column tile, then the rows of each K step
/// (one to eight at a time).
/// Rewrites such row reads as reads of the block the column slice was cut
/// from (the thread's block), as the other GEMMs' tiles read it, so that
/// cuvil-cpu-pack-gemm-panels finds the block the row tiles share.
void readRowsFromBlocks(ModuleOp module);

/// The op that is the only user of `value` and reads it element by element:
/// an all-parallel linalg.generic with one result, a loop per dimension of
/// `value`, taking it as an input through the identity map; else null.
linalg::GenericOp elementwiseUserOf(Value value);

/// The elementwise op that is the only user of a GEMM (plain or batched)
/// and computes on its result element by element (elementwiseUserOf, with
/// a result of the GEMM's type), if any.
linalg::GenericOp epilogueOf(linalg::LinalgOp gemm);

/// Splits each static GEMM whose columns are not whole vectors into GEMMs
/// of its whole register tiles' columns, one vector of columns and the
/// rest (see GemmTiles.cpp), with the epilogue (`fuseEpilogues`) split
/// alike: the rest, narrower than a vector, gets a register tile of its
/// exact width instead of being done a column at a time.
void splitRemainderColumns(ModuleOp module, int64_t registerRows,
                           int64_t registerCols, int64_t vectorLanes,
                           bool fuseEpilogues);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_GEMMTILES_H
