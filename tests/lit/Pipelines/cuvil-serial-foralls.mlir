// RUN: %cuvil_opt %s --cuvil-serial-foralls --split-input-file | FileCheck %s

// A thread-level loop marked cuvil.serial becomes a loop nest: no OpenMP
// region will be made of it.
// CHECK-LABEL: func.func @marked
// CHECK-NOT: scf.forall
// CHECK: scf.for %[[I:.*]] = %c0 to %c2 step %c1
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c3 step
// CHECK: memref.store %{{.*}}, %arg0[%[[I]], %[[J]]]
func.func @marked(%out: memref<2x3xf32>) {
  %cst = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (2, 3) {
    memref.store %cst, %out[%i, %j] : memref<2x3xf32>
  } {cuvil.serial}
  return
}

// -----

// Unmarked loops stay parallel.
// CHECK-LABEL: func.func @unmarked
// CHECK: scf.forall (%{{.*}}) in (4)
func.func @unmarked(%out: memref<4xf32>) {
  %cst = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    memref.store %cst, %out[%i] : memref<4xf32>
  }
  return
}
