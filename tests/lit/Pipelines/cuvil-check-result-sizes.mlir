// RUN: %cuvil_opt %s --cuvil-check-result-sizes --split-input-file | FileCheck %s

// A copy into an out-param with dynamic dims compares each dynamic size of
// the result with the out-param's first; static dims and copies between
// local buffers are left alone.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[IN:.*]]: memref<?x8xf32>, %[[OUT:.*]]: memref<?x8xf32>)
// CHECK: %[[R:.*]] = memref.alloc
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[WANT:.*]] = memref.dim %[[OUT]], %[[C0]] : memref<?x8xf32>
// CHECK: %[[HAVE:.*]] = memref.dim %[[R]], %[[C0]] : memref<?x8xf32>
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[WANT]], %[[HAVE]] : index
// CHECK: scf.if %[[BAD]] {
// CHECK-DAG: %[[ARG:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[DIM:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[W:.*]] = arith.index_cast %[[WANT]] : index to i64
// CHECK-DAG: %[[H:.*]] = arith.index_cast %[[HAVE]] : index to i64
// CHECK: func.call @cuvil_result_size_mismatch(%[[ARG]], %[[DIM]], %[[W]], %[[H]]) : (i64, i64, i64, i64) -> ()
// CHECK: }
// CHECK-NEXT: memref.copy %[[R]], %[[OUT]]
// CHECK-NOT: scf.if
// CHECK: return
// CHECK: func.func private @cuvil_result_size_mismatch(i64, i64, i64, i64)
func.func @rows(%in: memref<?x8xf32>, %out: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?x8xf32>
  %r = memref.alloc(%n) : memref<?x8xf32>
  memref.copy %in, %r : memref<?x8xf32> to memref<?x8xf32>
  memref.copy %r, %out : memref<?x8xf32> to memref<?x8xf32>
  memref.dealloc %r : memref<?x8xf32>
  return
}

// -----

// Static out-params need no check, and no declaration is added.
// CHECK-LABEL: func.func @static
// CHECK-NOT: scf.if
// CHECK-NOT: cuvil_result_size_mismatch
func.func @static(%in: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}
