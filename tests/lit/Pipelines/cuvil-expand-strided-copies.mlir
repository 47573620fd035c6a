// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-expand-strided-copies))" | FileCheck %s
// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-expand-strided-copies), finalize-memref-to-llvm)" | FileCheck %s --check-prefix=LLVM
// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-expand-strided-copies{threads=0}))" | FileCheck %s --check-prefix=SERIAL

// A padded image's interior: the copy into it is a loop nest (no call of
// the runtime's element-by-element copy) over the rows, each row of 32
// floats one vector read and write.
// CHECK-LABEL: func.func @pad_interior
// CHECK-NOT: memref.copy
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %c1
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %c3
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %c32
// CHECK-NOT: scf.for
// CHECK: %[[V:.*]] = vector.transfer_read %arg0[%[[N]], %[[C]], %[[H]], %c0], %{{.*}} {in_bounds = [true]} : memref<1x3x32x32xf32>, vector<32xf32>
// CHECK: vector.transfer_write %[[V]], %{{.*}}[%[[N]], %[[C]], %[[H]], %c0] {in_bounds = [true]} : vector<32xf32>, memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
// LLVM-NOT: memrefCopy
func.func @pad_interior(%x: memref<1x3x32x32xf32>, %padded: memref<1x3x38x38xf32>) {
  %interior = memref.subview %padded[0, 0, 3, 3] [1, 3, 32, 32] [1, 1, 1, 1] : memref<1x3x38x38xf32> to memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
  memref.copy %x, %interior : memref<1x3x32x32xf32> to memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
  return
}

// -----

// Dynamic sizes: the loops run to the source's dims, innermost over the
// row one element at a time (LLVM vectorizes that loop).
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[D0:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[D1:.*]] = memref.dim %arg0, %c1
// CHECK: scf.for %{{.*}} = %c0 to %[[D0]]
// CHECK: scf.for %{{.*}} = %c0 to %[[D1]]
// CHECK: memref.load
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

// -----

// A row that is not contiguous in the target (every other element of a
// column pair) stays a loop of scalar loads and stores.
// CHECK-LABEL: func.func @strided_row
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: vector.transfer
func.func @strided_row(%x: memref<4x8xf32>, %z: memref<4x16xf32>) {
  %every_other = memref.subview %z[0, 0] [4, 8] [1, 2] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 2]>>
  memref.copy %x, %every_other : memref<4x8xf32> to memref<4x8xf32, strided<[16, 2]>>
  return
}

// -----

// A padded 64 x 56 x 56 image's interior (200 K elements): its rows are
// split across threads by channel; serial builds (threads=0) keep loops.
// CHECK-LABEL: func.func @large_interior
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%c64)
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %c56
// CHECK: vector.transfer_read %arg0[%{{.*}}, %[[C]], %[[H]], %{{.*}}]{{.*}} vector<56xf32>
// SERIAL-LABEL: func.func @large_interior
// SERIAL-NOT: scf.parallel
// SERIAL: vector.transfer_read
func.func @large_interior(%x: memref<1x64x56x56xf32>, %padded: memref<1x64x58x58xf32>) {
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 64, 56, 56] [1, 1, 1, 1] : memref<1x64x58x58xf32> to memref<1x64x56x56xf32, strided<[215296, 3364, 58, 1], offset: 59>>
  memref.copy %x, %interior : memref<1x64x56x56xf32> to memref<1x64x56x56xf32, strided<[215296, 3364, 58, 1], offset: 59>>
  return
}

// -----

// An NHWC image's interior with rows of 256 channels: each row copied a
// cache line (16 floats) at a time in a loop, so that LLVM, which weighs a
// vector load of any width as one instruction, does not unroll the rows'
// loops into one block of 1,568 loads and stores. A row of 64 floats or
// fewer (or not whole pieces) stays one vector.
// CHECK-LABEL: func.func @wide_rows
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %c7
// CHECK: scf.for %[[W:.*]] = %{{.*}} to %c7
// CHECK: scf.for %[[P:.*]] = %c0{{.*}} to %c256{{.*}} step %c16
// CHECK: %[[V:.*]] = vector.transfer_read %arg0[%{{.*}}, %[[H]], %[[W]], %[[P]]]{{.*}} vector<16xf32>
// CHECK: vector.transfer_write %[[V]], %{{.*}}[%{{.*}}, %[[H]], %[[W]], %[[P]]]
// CHECK-LABEL: func.func @rows_of_64
// CHECK-NOT: step %c16
// CHECK: vector.transfer_read {{.*}} vector<64xf32>
// CHECK-LABEL: func.func @rows_of_200
// CHECK-NOT: step %c16
// CHECK: vector.transfer_read {{.*}} vector<200xf32>
func.func @wide_rows(%x: memref<1x7x7x256xf32>, %padded: memref<1x9x9x256xf32>) {
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 7, 7, 256] [1, 1, 1, 1] : memref<1x9x9x256xf32> to memref<1x7x7x256xf32, strided<[20736, 2304, 256, 1], offset: 2560>>
  memref.copy %x, %interior : memref<1x7x7x256xf32> to memref<1x7x7x256xf32, strided<[20736, 2304, 256, 1], offset: 2560>>
  return
}
func.func @rows_of_64(%x: memref<4x64xf32>, %z: memref<4x128xf32>) {
  %left = memref.subview %z[0, 0] [4, 64] [1, 1] : memref<4x128xf32> to memref<4x64xf32, strided<[128, 1]>>
  memref.copy %x, %left : memref<4x64xf32> to memref<4x64xf32, strided<[128, 1]>>
  return
}
func.func @rows_of_200(%x: memref<4x200xf32>, %z: memref<4x256xf32>) {
  %left = memref.subview %z[0, 0] [4, 200] [1, 1] : memref<4x256xf32> to memref<4x200xf32, strided<[256, 1]>>
  memref.copy %x, %left : memref<4x200xf32> to memref<4x200xf32, strided<[256, 1]>>
  return
}
