// Buffers a loop allocates and frees per iteration become one stack buffer
// per thread (the start of the parallel loop's body) or per call (the
// function's entry, for serial loops).
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-stack-buffers | FileCheck %s
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-stack-buffers=max-bytes=4096 | FileCheck %s --check-prefix=SMALL
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-stack-buffers=threads=0 | FileCheck %s --check-prefix=SERIAL

// CHECK-LABEL: func.func @parallel_blocks
// CHECK: scf.parallel
// CHECK-NEXT: %[[B:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK-NEXT: %[[R:.*]] = memref.alloca() : memref<32xf32>
// CHECK-NOT: memref.alloc()
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<32x64xf32>)
// CHECK: memref.subview %[[B]]
// CHECK-NOT: memref.dealloc
// CHECK: return
// The 8 KiB buffer is over 4 KiB: it stays on the heap, the 128 B one moves.
// SMALL-LABEL: func.func @parallel_blocks
// SMALL: memref.alloca() : memref<32xf32>
// SMALL: memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
// SMALL: memref.dealloc %{{.*}} : memref<32x64xf32>
// Without threads the parallel loop becomes a plain one: the buffers go to
// the function's entry, not into the loop (where each iteration's stack
// allocation would stay until the function returns).
// SERIAL-LABEL: func.func @parallel_blocks
// SERIAL-NEXT: memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// SERIAL-NEXT: memref.alloca() : memref<32xf32>
// SERIAL: scf.parallel
// SERIAL-NOT: memref.alloc{{[ (]}}
// SERIAL: return
func.func @parallel_blocks(%out: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %b = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
    %r = memref.alloc() : memref<32xf32>
    linalg.fill ins(%zero : f32) outs(%b : memref<32x64xf32>)
    linalg.fill ins(%zero : f32) outs(%r : memref<32xf32>)
    %row = arith.muli %i, %c8 : index
    %dst = memref.subview %out[%row, 0] [32, 64] [1, 1] : memref<256x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    %src = memref.subview %b[0, 0] [32, 64] [1, 1] : memref<32x64xf32> to memref<32x64xf32, strided<[64, 1]>>
    memref.copy %src, %dst : memref<32x64xf32, strided<[64, 1]>> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    memref.dealloc %b : memref<32x64xf32>
    memref.dealloc %r : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// A serial loop's buffer: one at the function's entry.
// CHECK-LABEL: func.func @serial_blocks
// CHECK-NEXT: memref.alloca() : memref<16xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @serial_blocks(%out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %b = memref.alloc() : memref<16xf32>
    linalg.fill ins(%one : f32) outs(%b : memref<16xf32>)
    %dst = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.copy %b, %dst : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.dealloc %b : memref<16xf32>
  }
  return
}

// -----

// Left alone: a buffer outside any loop (the memory plan's), one of a
// run-time size, one a loop passes on to its next iteration, one returned.
// CHECK-LABEL: func.func @not_moved
// CHECK-NOT: memref.alloca
// CHECK: memref.alloc() : memref<16xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: return
func.func @not_moved(%n: index, %seed: memref<8xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %top = memref.alloc() : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%top : memref<16xf32>)
  memref.dealloc %top : memref<16xf32>
  %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %seed) -> (memref<8xf32>) {
    %d = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%one : f32) outs(%d : memref<?xf32>)
    memref.dealloc %d : memref<?xf32>
    %next = memref.alloc() : memref<8xf32>
    memref.copy %prev, %next : memref<8xf32> to memref<8xf32>
    scf.yield %next : memref<8xf32>
  }
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%unused = %seed) -> (memref<8xf32>) {
    scf.yield %unused : memref<8xf32>
  }
  %out = scf.execute_region -> memref<4xf32> {
    %o = memref.alloc() : memref<4xf32>
    scf.yield %o : memref<4xf32>
  }
  return %out : memref<4xf32>
}
