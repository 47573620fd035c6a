//===- RowKernels.h - Row-wise kernels of the CPU schedule -------*- C++
//-*-===//
//
// The parts of cuvil-cpu-schedule that shape row-wise kernels (softmax, layer
// norm, reductions and the elementwise ops between them): reshapes folded
// out of their way, chains of them fused into one row-tiled kernel, and the
// clean-ups after vectorization.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_ROWKERNELS_H
#define CUVIL_TARGET_CPU_ROWKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::cuvil::cpu {

/// Elementwise and row kernels smaller than this many elements run on one
/// thread (chains of them are not grouped, see rowGroupSchedule); larger
/// ones run across threads.
constexpr int64_t kSerialElements = int64_t(1) << 15;

/// The innermost tile an op's vector schedule gives it (0: its whole
/// innermost extent), or nothing when it gets none.
using VectorTileOf =
    llvm::function_ref<std::optional<int64_t>(linalg::GenericOp)>;

/// Two batched GEMMs with row-wise ops between them, fused into one loop
/// over blocks of rows of the second GEMM: attention's softmax(q·kᵀ·scale)·v
/// per head, where each block's scores and probabilities (rows x keys) stay
/// in L1 and the full score matrix is never written.
struct BatchedGemmChain {
  linalg::BatchMatmulOp first, second;
  /// The row ops from the first GEMM's result to the second's left operand
  /// (the sink), consumers before producers.
  linalg::GenericOp sink;
  SmallVector<linalg::GenericOp> producers;
  int64_t rows; ///< rows per block (a multiple of the register rows)
  bool serial;  ///< too little work to share between threads
  SmallVector<linalg::GenericOp> rowOps() const;
};

/// The chains of `module`: a static f32 `linalg.batch_matmul` (filled init)
/// whose left operand is the sink of a group of row ops (see
/// rowGroupSchedule; `tileOf` says which generics the vector schedule will
/// tag) one of which reads another such GEMM element for element, the only
/// use of it; the keys and the second GEMM's columns are whole register
/// tiles (`registerCols`). Call before the GEMM schedules tag epilogues: the
/// first GEMM's epilogue (attention's scale) is one of the chain's row ops.
SmallVector<BatchedGemmChain> findBatchedGemmChains(ModuleOp module,
                                                    int64_t registerRows,
                                                    int64_t registerCols,
                                                    VectorTileOf tileOf);

/// Transform-dialect text fusing each chain into one loop over blocks of
/// rows (across threads unless serial), both GEMMs in register tiles; tags
/// the GEMMs with fresh GEMM ids from `nextId`. The row ops keep their
/// vector ids: their vector schedules must follow this text.
std::string batchedGemmChainSchedule(ArrayRef<BatchedGemmChain> chains,
                                     int64_t registerRows, int64_t registerCols,
                                     int64_t &nextId);

/// Transform-dialect text fusing each chain of row-wise kernels (ops tagged
/// with a vector id whose rows line up, see RowKernels.cpp) into one loop
/// over blocks of rows, across threads when the chain is large. The tagged
/// ops keep their ids: their vector schedules, which must follow this text,
/// then tile and vectorize the fused copies inside each block (`innerTiles`:
/// each tagged op's innermost vector tile, 0 for its whole extent; `lanes`:
/// the vector width in elements). Unit
/// expansions between the ops of a chain are folded into the maps of the
/// ops reading them. The row ops of `claimed` chains are left alone.
std::string rowGroupSchedule(ModuleOp module, int64_t lanes,
                             const llvm::DenseMap<int64_t, int64_t> &innerTiles,
                             ArrayRef<BatchedGemmChain> claimed);

/// Sizes as a transform op's `tile_sizes` list: "1, 16, 0".
std::string joinSizes(ArrayRef<int64_t> sizes);

/// Transform text tiling `%target` by `sizes` with scf.for loops (at least
/// one size not 0): the tiled op is `%tiled`, its loops the group `%loops`.
std::string tileUsingFor(llvm::StringRef target, llvm::StringRef tiled,
                         llvm::StringRef loops, ArrayRef<int64_t> sizes);

/// Transform text tiling `%target` by `sizes` with one scf.forall (thread
/// tasks): the tiled op is `%tiled`, the loop `%forall`.
std::string tileUsingForall(llvm::StringRef target, llvm::StringRef tiled,
                            llvm::StringRef forall, ArrayRef<int64_t> sizes);

/// Thread tiles of a static iteration space of `shape` from 2^15 elements
/// (or `minElements`, if more): its first dimension that is not 1 (with
/// `anyDimension`, the first that splits) cut into 8, 4 or 2 equal tasks,
/// the others whole; empty when smaller, dynamic or no dimension qualifies.
SmallVector<int64_t> threadTiles(ArrayRef<int64_t> shape,
                                 bool anyDimension = false,
                                 int64_t minElements = 0);

/// Transform-dialect text vectorizing each static linalg.transpose, tagged
/// with a fresh vector id from `nextId`: a large one (from 2^15 elements;
/// attention's k transposed) as equal tasks across threads, along its first
/// dimension that splits into 8, 4 or 2, a smaller one on the caller's
/// thread. One keeping the innermost dimension is copied a row of vectors
/// at a time; with 16 or 8 lanes, one taking the input's innermost
/// dimension to the output's second innermost (a swap of the last two,
/// attention's k transposed out of its heads) in square blocks of that many
/// lanes (AVX-512's or AVX2's shuffles). Other transposes stay scalar loops
/// (inside the tasks, when large).
std::string threadedTransposes(ModuleOp module, int64_t lanes, int64_t &nextId);

/// Moves what the schedule's loops compute from values they do not change
/// out of them, reads of such tensors included.
void hoistInvariantTensorReads(ModuleOp module);

/// Float sums and products of a vector as a tree instead of in order.
void reduceAsTrees(ModuleOp module);

/// Transform text removing the dead originals of fused ops, so that the
/// schedules after it match only the fused copies (`name`: a fresh handle).
std::string dropFusedOriginals(llvm::StringRef name);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_ROWKERNELS_H
