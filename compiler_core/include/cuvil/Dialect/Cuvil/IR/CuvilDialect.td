//===- CuvilDialect.td - The cuvil dialect definition ------*- tablegen -*-===//
//
// The `cuvil` dialect: an explicit dataflow graph of tensor ops, the IR that
// every Cuvil front end produces and every backend consumes.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_TD
#define CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_TD

include "mlir/IR/OpBase.td"

def Cuvil_Dialect : Dialect {
  let name = "cuvil";
  let cppNamespace = "::mlir::cuvil";
  let summary = "Tensor dataflow graphs for AI inference";
  let description = [{
    The `cuvil` dialect models an inference graph as a dataflow graph of
    value-semantic tensor ops over builtin ranked tensors. It has no control
    flow: loops in the user's program arrive unrolled. Every op carries the
    location of the user source line that created it.
  }];
  let hasConstantMaterializer = 1;
  // cuvil.dim folds to an index constant (arith.constant).
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  // `cuvil.symbols` on function arguments and results.
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // Attributes passes leave on ops and functions for later passes and the
  // driver; declared here so every user spells them through one helper
  // (CuvilDialect::KernelsAttrHelper::getNameStr(), ...).
  let discardableAttrs = (ins
    // cuvil-tag-kernels: [[loc, name], ...] per function.
    "::mlir::ArrayAttr":$kernel_names,
    // cuvil-instrument-kernels: [[name, loc], ...] in hook numbering.
    "::mlir::ArrayAttr":$kernels,
    // cuvil-plan-memory: bytes of the arena and of the unplanned buffers.
    "::mlir::IntegerAttr":$planned_peak_bytes,
    "::mlir::IntegerAttr":$unplanned_bytes,
    // cuvil-to-linalg: the contraction of a cuvil.quantized_matmul, whose
    // weight operand is produced by its dequantization; the CPU schedule
    // fuses that into the GEMM's K loop (elementwise fusion leaves it).
    "::mlir::UnitAttr":$dequantized_gemm,
    // cuvil-cpu-conv-to-gemm: a convolution as a GEMM reading its right
    // operand from the padded image's shifted rows (loops n, fo, fi, pb, j,
    // l, c, kh, kw); cuvil-cpu-schedule gives it register tiles like a
    // GEMM's.
    "::mlir::UnitAttr":$implicit_conv,
    // cuvil-reduce-precision{precision=tf32}, on a function: its float32
    // matmuls may read their operands as TF32 where a target has TF32
    // tensor cores (cuda); elsewhere they stay float32.
    "::mlir::UnitAttr":$tf32_matmuls,
    // cuvil-cpu-schedule: which transform block schedules an op.
    "::mlir::IntegerAttr":$gemm_id,
    "::mlir::IntegerAttr":$epilogue_id,
    "::mlir::IntegerAttr":$vector_id,
    // cuvil-cpu-schedule: a thread-level scf.forall too small to be worth
    // waking the thread team; cuvil-serial-foralls makes it a loop nest.
    "::mlir::UnitAttr":$serial,
    // Symbolic shapes: on a function argument, the name of each dynamic
    // dimension in order (equal names mean equal sizes); on a result, what
    // each dynamic dimension is in terms of them (cuvil-propagate-symbols),
    // e.g. ["N", "N * h // 2"].
    "::mlir::ArrayAttr":$symbols
  );
}

class Cuvil_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cuvil_Dialect, mnemonic, traits>;

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_TD
