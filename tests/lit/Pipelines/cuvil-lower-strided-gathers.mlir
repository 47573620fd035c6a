// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-lower-strided-gathers))" | FileCheck %s

// A gather from memory whose innermost stride is not 1 (a strided slice):
// flattened, then one conditional scalar load per lane, its flat index taken
// apart along the base's shape (1x1x2x3).
// CHECK-LABEL: func.func @strided
// CHECK-NOT: vector.gather
// CHECK: %[[I0:.*]] = vector.extract %{{.*}}[0] : index from vector<2xindex>
// CHECK: %[[FLAT:.*]] = arith.addi %[[I0]], %{{.*}} : index
// CHECK: %[[COL:.*]] = arith.remui %[[FLAT]], %[[THREE:.*]] : index
// CHECK: %[[ROWS:.*]] = arith.divui %[[FLAT]], %[[THREE]] : index
// CHECK: %[[ROW:.*]] = arith.remui %[[ROWS]], %{{.*}} : index
// CHECK: scf.if
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[ROW]], %[[COL]]] : memref<1x1x2x3xf64, strided<[144, 144, 72, 6], offset: 161>>
// CHECK: scf.if
// CHECK: memref.load %arg0
// CHECK-NOT: vector.gather
func.func @strided(%m: memref<1x1x2x3xf64, strided<[144, 144, 72, 6], offset: 161>>, %idx: vector<1x2xindex>) -> vector<1x2xf64> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<1x2xi1>
  %pass = arith.constant dense<0.0> : vector<1x2xf64>
  %g = vector.gather %m[%c0, %c0, %c0, %c0] [%idx], %mask, %pass : memref<1x1x2x3xf64, strided<[144, 144, 72, 6], offset: 161>>, vector<1x2xindex>, vector<1x2xi1>, vector<1x2xf64> into vector<1x2xf64>
  return %g : vector<1x2xf64>
}

// -----

// A gather LLVM can take (contiguous innermost dimension) stays.
// CHECK-LABEL: func.func @contiguous
// CHECK: vector.gather
// CHECK-NOT: scf.if
func.func @contiguous(%m: memref<4x8xf32>, %idx: vector<4xindex>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<4xi1>
  %pass = arith.constant dense<0.0> : vector<4xf32>
  %g = vector.gather %m[%c0, %c0] [%idx], %mask, %pass : memref<4x8xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  return %g : vector<4xf32>
}
