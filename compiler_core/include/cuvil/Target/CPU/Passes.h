//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef CUVIL_TARGET_CPU_PASSES_H
#define CUVIL_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

class PipelineBuilder;

/// The largest block of a GEMM's right operand cuvil-cpu-pack-gemm-panels
/// copies onto a thread's stack (its `max-bytes` by default). The schedule
/// keeps a GEMM whose operand is packed at run time in K blocks no larger
/// (see GemmTiles.cpp): a block must be packed inside its K loop.
constexpr int64_t kMaxStackPanelBytes = 256 * 1024;

#define GEN_PASS_DECL
#include "cuvil/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Target/CPU/Passes.h.inc"

/// The transform-dialect schedule the pass applies to `module` (first
/// splitting static GEMMs whose columns are not whole vectors by columns,
/// then tagging the scheduled matmuls with `cuvil.gemm_id`). With
/// `threadStage`, convolutions' GEMMs may compute their columns per thread
/// task: their tiling across threads is then set there, a schedule the pass
/// applies first.
std::string buildCpuSchedule(ModuleOp module, int vectorLanes,
                             bool fuseEpilogues = true, int registerRows = 8,
                             std::string *threadStage = nullptr);

/// Registers the passes above once per process: the cpu and wasm targets
/// both run them.
void registerCpuCodegenPasses();

/// Appends the CPU's Schedule phase to `pipeline`: kernel tags, convolutions
/// as GEMMs, then the tiling and vectorization schedule for vectors of
/// `vectorLanes` f32 (GEMM epilogues fused unless `fuseEpilogues` is off),
/// register tiles of `registerRows` rows (0: registerRowsFor(vectorLanes));
/// with `unaliasRows`, GEMM operands whose rows are a multiple of 4 KiB
/// apart are first copied into longer rows (cuvil-cpu-unalias-gemm-rows:
/// the host's L1 cache sets).
void addCpuSchedule(PipelineBuilder &pipeline, int vectorLanes,
                    bool fuseEpilogues, int registerRows = 0,
                    bool unaliasRows = false);

/// f32 lanes of AVX-512's vectors (32 vector registers) and of AVX2's (16
/// registers): what register tiles are sized for.
constexpr int kAvx512Lanes = 16;
constexpr int kAvx2Lanes = 8;

/// Host vector width in f32 lanes (16 with AVX-512F, 8 with AVX2+FMA).
int hostVectorLanes();

/// The rows of a GEMM's register tile (two vectors wide) for vectors of
/// `vectorLanes` f32: 8 with AVX-512's (its 32 vector registers hold the 16
/// accumulators, two vectors of B and a broadcast), 4 with narrower ones,
/// whose ISAs have 16 (AVX2, SSE, and V8's simd128 on x86), where 8 rows
/// spill: 19 registers live per K step.
int registerRowsFor(int vectorLanes);

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_CPU_PASSES_H
