// RUN: %cuvil_opt %s --convert-scf-to-openmp --cuvil-serial-single-task --split-input-file | FileCheck %s

// A parallel loop over a run-time extent forks only with more than one
// iteration; the region runs on the calling thread otherwise.
// CHECK-LABEL: func.func @dynamic_tasks
// CHECK-SAME: (%{{.*}}: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[SPAN:.*]] = arith.subi %[[N]], %[[LB:.*]] : index
// CHECK: %[[SEVERAL:.*]] = arith.cmpi sgt, %[[SPAN]], %[[STEP:.*]] : index
// CHECK: omp.parallel if(%[[SEVERAL]])
func.func @dynamic_tasks(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// Constant bounds were decided at compile time: no clause.
// CHECK-LABEL: func.func @static_tasks
// CHECK: omp.parallel {
func.func @static_tasks(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %cst, %m[%i] : memref<4xf32>
  }
  return
}
