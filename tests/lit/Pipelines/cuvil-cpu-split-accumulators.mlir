// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-cpu-split-accumulators{registers=8 vector-bits=256}))" | FileCheck %s

// A remainder row of a GEMM (two 8-lane vectors' worth) adding four K steps
// per iteration to one sum: the steps go to four sums side by side (2 x 4 =
// 8 registers), the extra ones starting at zero, added up after the loop.
// CHECK-LABEL: func.func @one_row
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[R:.*]]:4 = scf.for {{.*}} iter_args(%[[P0:.*]] = %arg0, %[[P1:.*]] = %[[ZERO]], %[[P2:.*]] = %[[ZERO]], %[[P3:.*]] = %[[ZERO]])
// CHECK: %[[F0:.*]] = vector.fma %arg1, %arg2, %[[P0]]
// CHECK: %[[F1:.*]] = vector.fma %arg1, %arg3, %[[P1]]
// CHECK: %[[F2:.*]] = vector.fma %arg2, %arg3, %[[P2]]
// CHECK: %[[F3:.*]] = vector.fma %arg3, %arg3, %[[P3]]
// CHECK: scf.yield %[[F0]], %[[F1]], %[[F2]], %[[F3]]
// CHECK: %[[S01:.*]] = arith.addf %[[R]]#0, %[[R]]#1 : vector<16xf32>
// CHECK: %[[S23:.*]] = arith.addf %[[R]]#2, %[[R]]#3 : vector<16xf32>
// CHECK: %[[S:.*]] = arith.addf %[[S01]], %[[S23]] : vector<16xf32>
// CHECK: return %[[S]]
func.func @one_row(%init: vector<16xf32>, %a: vector<16xf32>, %b: vector<16xf32>, %c: vector<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %r = scf.for %k = %c0 to %c128 step %c4 iter_args(%acc = %init) -> (vector<16xf32>) {
    %0 = vector.fma %a, %b, %acc : vector<16xf32>
    %1 = vector.fma %a, %c, %0 : vector<16xf32>
    %2 = vector.fma %b, %c, %1 : vector<16xf32>
    %3 = vector.fma %c, %c, %2 : vector<16xf32>
    scf.yield %3 : vector<16xf32>
  }
  return %r : vector<16xf32>
}

// -----

// The same row as the schedule leaves it, a 1 x 16 tile taken apart by
// vector.extract and yielded by a broadcast; two K steps, so two sums.
// CHECK-LABEL: func.func @tile_row
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} -> (vector<1x16xf32>, vector<1x16xf32>)
// CHECK: %[[E1:.*]] = vector.extract %{{.*}}[0] : vector<16xf32> from vector<1x16xf32>
// CHECK: %[[E0:.*]] = vector.extract %{{.*}}[0] : vector<16xf32> from vector<1x16xf32>
// CHECK: %[[F0:.*]] = vector.fma %arg1, %arg2, %[[E0]]
// CHECK: %[[F1:.*]] = vector.fma %arg2, %arg1, %[[E1]]
// CHECK: %[[Y0:.*]] = vector.broadcast %[[F0]] : vector<16xf32> to vector<1x16xf32>
// CHECK: %[[Y1:.*]] = vector.insert %[[F1]], %{{.*}} [0] : vector<16xf32> into vector<1x16xf32>
// CHECK: scf.yield %[[Y0]], %[[Y1]]
// CHECK: arith.addf %[[R]]#0, %[[R]]#1 : vector<1x16xf32>
func.func @tile_row(%init: vector<1x16xf32>, %a: vector<16xf32>, %b: vector<16xf32>) -> vector<1x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %r = scf.for %k = %c0 to %c128 step %c2 iter_args(%acc = %init) -> (vector<1x16xf32>) {
    %row = vector.extract %acc[0] : vector<16xf32> from vector<1x16xf32>
    %0 = vector.fma %a, %b, %row : vector<16xf32>
    %1 = vector.fma %b, %a, %0 : vector<16xf32>
    %y = vector.broadcast %1 : vector<16xf32> to vector<1x16xf32>
    scf.yield %y : vector<1x16xf32>
  }
  return %r : vector<1x16xf32>
}

// -----

// A full 4 x 16 tile already fills the 8 registers; a single K step has no
// chain to spread; a sum also read inside the loop is not a chain's own.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: arith.addf
// CHECK: return
func.func @left_alone(%tile: vector<4x16xf32>, %init: vector<16xf32>, %a: vector<16xf32>, %b: vector<16xf32>, %out: memref<16xf32>) -> (vector<4x16xf32>, vector<16xf32>, vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %full = scf.for %k = %c0 to %c128 step %c4 iter_args(%acc = %tile) -> (vector<4x16xf32>) {
    %r0 = vector.extract %acc[0] : vector<16xf32> from vector<4x16xf32>
    %r1 = vector.extract %acc[1] : vector<16xf32> from vector<4x16xf32>
    %r2 = vector.extract %acc[2] : vector<16xf32> from vector<4x16xf32>
    %r3 = vector.extract %acc[3] : vector<16xf32> from vector<4x16xf32>
    %a0 = vector.fma %a, %b, %r0 : vector<16xf32>
    %a1 = vector.fma %a, %b, %a0 : vector<16xf32>
    %b0 = vector.fma %a, %b, %r1 : vector<16xf32>
    %b1 = vector.fma %a, %b, %b0 : vector<16xf32>
    %c0v = vector.fma %a, %b, %r2 : vector<16xf32>
    %c1v = vector.fma %a, %b, %c0v : vector<16xf32>
    %d0 = vector.fma %a, %b, %r3 : vector<16xf32>
    %d1 = vector.fma %a, %b, %d0 : vector<16xf32>
    %z = arith.constant dense<0.0> : vector<4x16xf32>
    %y0 = vector.insert %a1, %z [0] : vector<16xf32> into vector<4x16xf32>
    %y1 = vector.insert %b1, %y0 [1] : vector<16xf32> into vector<4x16xf32>
    %y2 = vector.insert %c1v, %y1 [2] : vector<16xf32> into vector<4x16xf32>
    %y3 = vector.insert %d1, %y2 [3] : vector<16xf32> into vector<4x16xf32>
    scf.yield %y3 : vector<4x16xf32>
  }
  %single = scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %init) -> (vector<16xf32>) {
    %0 = vector.fma %a, %b, %acc : vector<16xf32>
    scf.yield %0 : vector<16xf32>
  }
  %read = scf.for %k = %c0 to %c128 step %c4 iter_args(%acc = %init) -> (vector<16xf32>) {
    %0 = vector.fma %a, %b, %acc : vector<16xf32>
    vector.store %0, %out[%c0] : memref<16xf32>, vector<16xf32>
    %1 = vector.fma %a, %b, %0 : vector<16xf32>
    scf.yield %1 : vector<16xf32>
  }
  return %full, %single, %read : vector<4x16xf32>, vector<16xf32>, vector<16xf32>
}

// -----

// A 0-d vector carried by a loop (a dynamic row's sum) is no register tile:
// left as it is, next to a chain the loop also carries.
// CHECK-LABEL: func.func @zero_d
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %arg0) -> (vector<f32>, vector<16xf32>)
// CHECK-NOT: scf.for
func.func @zero_d(%init: vector<16xf32>, %a: vector<16xf32>, %b: vector<16xf32>) -> (vector<f32>, vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %s = arith.constant dense<0.0> : vector<f32>
  %r:2 = scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %s, %row = %init) -> (vector<f32>, vector<16xf32>) {
    %e = vector.extract %a[0] : f32 from vector<16xf32>
    %v = vector.broadcast %e : f32 to vector<f32>
    %0 = arith.addf %acc, %v : vector<f32>
    %1 = vector.fma %a, %b, %row : vector<16xf32>
    scf.yield %0, %1 : vector<f32>, vector<16xf32>
  }
  return %r#0, %r#1 : vector<f32>, vector<16xf32>
}
