// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-expand-strided-copies))" | FileCheck %s
// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-expand-strided-copies), finalize-memref-to-llvm)" | FileCheck %s --check-prefix=LLVM

// A padded image's interior: the copy into it is a loop nest (no call of
// the runtime's element-by-element copy), innermost over the row.
// CHECK-LABEL: func.func @pad_interior
// CHECK-NOT: memref.copy
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[W:.*]] = %{{.*}} to %c32
// CHECK: %[[V:.*]] = memref.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %[[W]]] : memref<1x3x32x32xf32>
// CHECK: memref.store %[[V]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[W]]] : memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
// LLVM-NOT: memrefCopy
func.func @pad_interior(%x: memref<1x3x32x32xf32>, %padded: memref<1x3x38x38xf32>) {
  %interior = memref.subview %padded[0, 0, 3, 3] [1, 3, 32, 32] [1, 1, 1, 1] : memref<1x3x38x38xf32> to memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
  memref.copy %x, %interior : memref<1x3x32x32xf32> to memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
  return
}

// -----

// Dynamic sizes: the loops run to the source's dims.
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[D0:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[D1:.*]] = memref.dim %arg0, %c1
// CHECK: scf.for %{{.*}} = %c0 to %[[D0]]
// CHECK: scf.for %{{.*}} = %c0 to %[[D1]]
// CHECK-NOT: memref.copy
func.func @dynamic(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %y: memref<?x?xf32>) {
  memref.copy %x, %y : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32>
  return
}

// -----

// Contiguous on both sides: a memcpy, left alone (a contiguous row-major
// view with an offset counts as contiguous too).
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %arg0, %arg1
// CHECK: memref.copy %arg0, %{{.*}} : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
// CHECK-NOT: scf.for
func.func @contiguous(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<8x8xf32>) {
  memref.copy %x, %y : memref<4x8xf32> to memref<4x8xf32>
  %rows = memref.subview %z[4, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %x, %rows : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  return
}
