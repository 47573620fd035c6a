// RUN: cuvil-opt %s --transform-interpreter --split-input-file --verify-diagnostics | FileCheck %s

// transform.cuvil.fuse_into_containing_op, the CPU schedule's producer
// fusion: the three ways a producer enters a loop, the loop rebuilt when the
// producer is also read after it, and the failures it names.

#relu = affine_map<(d0, d1) -> (d0, d1)>
// A GEMM and its fill fused into the loop of the epilogue's tiles, each
// through the slice its consumer reads.
// CHECK-LABEL: func.func @epilogue
// CHECK: scf.forall
// CHECK: linalg.fill {{.*}} -> tensor<32x16xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<32x16xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<32x16xf32>)
// CHECK: tensor.parallel_insert_slice
func.func @epilogue(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#relu, #relu], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.maximumf %in, %zero : f32
    linalg.yield %y : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %fill = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %epi = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %forall = transform.structured.tile_using_forall %epi tile_sizes [32, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fm, %l1 = transform.cuvil.fuse_into_containing_op %mm into %forall : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %ff, %l2 = transform.cuvil.fuse_into_containing_op %fill into %l1 : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A fill that initializes the loop's shared output: each task fills its own
// share, and the loop starts from the fill's destination.
// CHECK-LABEL: func.func @shared_out
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x64xf32>
// CHECK: scf.forall {{.*}} shared_outs(%[[ARG:.*]] = %[[E]])
// CHECK: %[[S:.*]] = tensor.extract_slice %[[ARG]]
// CHECK: %[[F:.*]] = linalg.fill {{.*}} outs(%[[S]] : tensor<32x32xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[F]] : tensor<32x32xf32>)
func.func @shared_out(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %fill = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %forall = transform.structured.tile_using_forall %mm tile_sizes [32, 32, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %ff, %l = transform.cuvil.fuse_into_containing_op %fill into %forall : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

#id = affine_map<(d0) -> (d0)>
// A producer also read after the loop: the loop gains an output collecting
// its tiles, and the reader after the loop takes that instead.
// CHECK-LABEL: func.func @read_after
// CHECK: %[[L:.*]]:2 = scf.forall
// CHECK: arith.negf
// CHECK: arith.addf
// CHECK: scf.forall.in_parallel
// CHECK-COUNT-2: tensor.parallel_insert_slice
// CHECK: return %[[L]]#0, %[[L]]#1
func.func @read_after(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %c, %p : tensor<64xf32>, tensor<64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %p, %c = transform.split_handle %g : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %forall = transform.structured.tile_using_forall %c tile_sizes [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fp, %l = transform.cuvil.fuse_into_containing_op %p into %forall : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    // The handle follows the rebuilt loop.
    transform.annotate %l "rebuilt" : !transform.any_op
    transform.yield
  }
}

// -----

#id = affine_map<(d0) -> (d0)>
// A producer read whole inside a loop (no slice to tile it to): copied
// before its reader.
// CHECK-LABEL: func.func @cloned
// CHECK: scf.for
// CHECK-NEXT: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.negf
// CHECK: tensor.extract
func.func @cloned(%x: tensor<8xf32>, %n: index) -> f32 {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%x : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = tensor.extract %p[%i] : tensor<8xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %p = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %loop = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    %fp, %l = transform.cuvil.fuse_into_containing_op %p into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A producer nothing inside the loop reads.
func.func @unread(%x: tensor<8xf32>, %n: index) -> (tensor<8xf32>, index) {
  %e = tensor.empty() : tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @below {{containing op}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> index {
    %s = arith.addi %acc, %i : index
    scf.yield %s : index
  }
  return %f, %r : tensor<8xf32>, index
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %fill = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %loop = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{could not find next producer to fuse into container}}
    %ff, %l = transform.cuvil.fuse_into_containing_op %fill into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A producer only the loop itself reads (its initial value): no slice to
// tile, and a copy cannot go inside. The op is named only now.
func.func @loop_init(%n: index) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  // expected-note @below {{the producer}}
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @below {{the containing op}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %f) -> tensor<8xf32> {
    scf.yield %acc : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %fill = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %loop = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{could not fuse a 'linalg.fill' into the containing op}}
    %ff, %l = transform.cuvil.fuse_into_containing_op %fill into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Two containing ops.
func.func @two_loops(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
  }
  scf.for %j = %c0 to %n step %c1 {
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %c = transform.structured.match ops{["arith.constant"]} in %root : (!transform.any_op) -> !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{requires exactly one containing_op handle (got 2)}}
    %fc, %l = transform.cuvil.fuse_into_containing_op %c into %loops : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
