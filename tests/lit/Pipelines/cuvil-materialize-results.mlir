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

// -----

// A loop that fills a fresh allocation in place returns that allocation: it
// becomes the out-param, with no copy.
// CHECK-LABEL: func.func @in_place_loop
// CHECK: %[[F:.*]] = memref.alloc() : memref<4xf32>
// CHECK: scf.for
// CHECK-NOT: memref.copy
// CHECK: return %[[F]]
// OUT-LABEL: func.func @in_place_loop
// OUT-SAME: %[[O:[a-z0-9]*]]: memref<4xf32>)
// OUT-NOT: memref.alloc
// OUT: scf.for {{.*}} iter_args(%{{.*}} = %[[O]])
// OUT-NOT: memref.copy
// OUT: return
func.func @in_place_loop(%x: f32) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %0 = memref.alloc() : memref<4xf32>
  %1 = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %0) -> (memref<4xf32>) {
    memref.store %x, %b[%i] : memref<4xf32>
    scf.yield %b : memref<4xf32>
  }
  return %1 : memref<4xf32>
}

// -----

// Must not fire: the loop yields another buffer, so its result is not the
// allocation; it is copied.
// CHECK-LABEL: func.func @loop_swaps_buffers
// CHECK: scf.for
// CHECK: memref.copy
// CHECK: return
func.func @loop_swaps_buffers(%other: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %0 = memref.alloc() : memref<4xf32>
  %1 = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %0) -> (memref<4xf32>) {
    scf.yield %other : memref<4xf32>
  }
  return %1 : memref<4xf32>
}

// -----

// A kernel on fewer dimensions writes a collapse of the result's
// allocation, which is expanded back: that allocation is returned, no copy.
// CHECK-LABEL: func.func @reshaped_back
// CHECK: %[[F:.*]] = memref.alloc() {{.*}}: memref<1x8x7x7xf32>
// CHECK: memref.collapse_shape %[[F]]
// CHECK-NOT: memref.copy
// CHECK: return %[[F]]
// OUT-LABEL: func.func @reshaped_back
// OUT-SAME: %[[O:[a-z0-9]*]]: memref<1x8x7x7xf32>)
// OUT: memref.collapse_shape %[[O]]
// OUT-NOT: memref.copy
func.func @reshaped_back(%x: f32) -> memref<1x8x7x7xf32> {
  %0 = memref.alloc() {alignment = 64 : i64} : memref<1x8x7x7xf32>
  %1 = memref.collapse_shape %0 [[0, 1], [2, 3]] : memref<1x8x7x7xf32> into memref<8x49xf32>
  linalg.fill ins(%x : f32) outs(%1 : memref<8x49xf32>)
  %2 = memref.expand_shape %1 [[0, 1], [2, 3]] output_shape [1, 8, 7, 7] : memref<8x49xf32> into memref<1x8x7x7xf32>
  return %2 : memref<1x8x7x7xf32>
}

// -----

// A result expanding an allocation of another shape: the allocation is made
// in the result's shape and the kernel writes its collapse.
// CHECK-LABEL: func.func @allocated_in_result_shape
// CHECK: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x7x7xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[F]] {{\[}}[0, 1], [2, 3]] : memref<1x8x7x7xf32> into memref<8x49xf32>
// CHECK: linalg.fill {{.*}} outs(%[[V]] : memref<8x49xf32>)
// CHECK-NOT: memref.copy
// CHECK: return %[[F]]
// OUT-LABEL: func.func @allocated_in_result_shape
// OUT-SAME: %[[O:[a-z0-9]*]]: memref<1x8x7x7xf32>)
// OUT: memref.collapse_shape %[[O]]
// OUT-NOT: memref.copy
// OUT: return
func.func @allocated_in_result_shape(%x: f32) -> memref<1x8x7x7xf32> {
  %0 = memref.alloc() {alignment = 64 : i64} : memref<8x49xf32>
  linalg.fill ins(%x : f32) outs(%0 : memref<8x49xf32>)
  %1 = memref.expand_shape %0 [[0, 1], [2, 3]] output_shape [1, 8, 7, 7] : memref<8x49xf32> into memref<1x8x7x7xf32>
  return %1 : memref<1x8x7x7xf32>
}

// -----

// Returned twice through reshapes: the second result is a copy.
// CHECK-LABEL: func.func @reshaped_twice
// CHECK: %[[F:.*]] = memref.alloc() : memref<1x4xf32>
// CHECK: memref.copy
// CHECK: return %[[F]], %{{.*}} : memref<1x4xf32>, memref<1x4xf32>
// OUT-LABEL: func.func @reshaped_twice
func.func @reshaped_twice() -> (memref<1x4xf32>, memref<1x4xf32>) {
  %0 = memref.alloc() : memref<4xf32>
  %1 = memref.expand_shape %0 [[0, 1]] output_shape [1, 4] : memref<4xf32> into memref<1x4xf32>
  return %1, %1 : memref<1x4xf32>, memref<1x4xf32>
}
