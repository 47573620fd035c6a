// RUN: %cuvil_opt %s --cuvil-materialize-results --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-materialize-results "--buffer-results-to-out-params=hoist-static-allocs=1" --split-input-file | FileCheck %s --check-prefix=OUT

// An argument returned as a result is copied into a fresh buffer.
// CHECK-LABEL: func.func @returns_argument
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>)
// CHECK: %[[N:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[N]]
// CHECK: return %[[N]]
// OUT-LABEL: func.func @returns_argument
// OUT-SAME: (%[[A:.*]]: memref<4xf32>, %[[O:.*]]: memref<4xf32>)
// OUT: memref.copy %[[A]], %[[O]]
// OUT-NEXT: return
func.func @returns_argument(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}

// -----

// A fresh allocation is left alone; the second use of it is copied.
// CHECK-LABEL: func.func @returns_twice
// CHECK: %[[F:.*]] = memref.alloc() {{.*}}: memref<4xf32>
// CHECK: %[[N:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[F]], %[[N]]
// CHECK: return %[[F]], %[[N]]
func.func @returns_twice() -> (memref<4xf32>, memref<4xf32>) {
  %0 = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  return %0, %0 : memref<4xf32>, memref<4xf32>
}
