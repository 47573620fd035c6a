//===- CpuTransformOps.td - Transform ops of the CPU schedule -*- tablegen -*-===//
//
// Transform-dialect ops that `cuvil-cpu-schedule` uses where upstream's do
// more work than the schedule needs.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_TRANSFORMOPS
#define CUVIL_TARGET_CPU_TRANSFORMOPS

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

def Cuvil_FuseIntoContainingOp :
    Op<Transform_Dialect, "cuvil.fuse_into_containing_op",
      [DeclareOpInterfaceMethods<TransformOpInterface>,
       DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
       ReportTrackingListenerFailuresOpTrait]> {
  let summary = "Fuse producers into a loop, building diagnostics only on failure";
  let description = [{
    Fuses each payload op of `producer_op` into the single payload op of
    `containing_op` (an `scf.forall` or `scf.for`), as
    `transform.structured.fuse_into_containing_op` does, in the same order
    and by the same three means:

    1. a `tensor.extract_slice` of the producer's result inside the loop is
       replaced by the producer tiled to that slice (`TilingInterface`); when
       the loop is an `scf.forall` and a `linalg.generic` producer's result
       is also read after the loop, the loop gains an output that carries the
       tiled results, and those readers take it instead;
    2. a producer feeding an `scf.forall`'s `shared_outs` is tiled to the
       slices its block argument's readers take, and the loop's output
       starts from the producer's own destination;
    3. otherwise the producer is cloned before its first reader inside.

    Upstream's op prints the producer and the whole containing loop into a
    remark at every fusion, before it knows whether the fusion fails; on a
    large function the schedule spends most of its time there. This op
    names them only when a producer cannot be fused (a silenceable failure).

    Consumes the producer handle, reads the containing handle; returns the
    fused ops and the (possibly new) containing op.
  }];

  let arguments = (ins TransformHandleTypeInterface:$producer_op,
                       TransformHandleTypeInterface:$containing_op);
  let results = (outs TransformHandleTypeInterface:$fused_op,
                      TransformHandleTypeInterface:$new_containing_op);
  let assemblyFormat = "$producer_op `into` $containing_op attr-dict "
                       " `:` functional-type(operands, results)";
  let cppNamespace = "::mlir::cuvil";
}

def Cuvil_FoldTransposeSlicesOp :
    Op<Transform_Dialect, "cuvil.fold_transpose_slices",
      [DeclareOpInterfaceMethods<TransformOpInterface>,
       DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
       ReportTrackingListenerFailuresOpTrait]> {
  let summary = "Reads slices of a transpose from its input where they are views";
  let description = [{
    Within each payload op of `target`, replaces every unit-stride
    `tensor.extract_slice` of a `linalg.transpose`'s result whose extents
    other than 1 keep the order they have in the transpose's input (the
    transpose only moves dimensions of extent 1 within the slice: a head of
    attention's q or v, `[h, rows, 64]` of a `[1, 0, 2]` transpose of
    `[seq, heads, 64]`) and that keep the input's innermost dimension (the
    view is contiguous along its rows), by the matching slice of the input,
    its unit dimensions dropped, then expanded to the slice's type. The
    slice is then
    a view of the input once bufferized, where it was a read of a copy the
    transpose wrote. A transpose left without readers is erased.

    Returns the payload ops unchanged (as `folded`).
  }];

  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$folded);
  let assemblyFormat = "$target attr-dict `:` functional-type(operands, results)";
  let cppNamespace = "::mlir::cuvil";
}

#endif // CUVIL_TARGET_CPU_TRANSFORMOPS
