// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-pack-gemm-panels | FileCheck %s

// A GEMM as the schedule leaves it (K blocks of 128, register tiles of 8 x 32
// walking the K block's rows, a remainder tile of the last 4 columns): each
// K block of the right operand (100 floats wide: rows unaligned) is copied
// into 4 panels of 128 x 32 floats on the stack (bytes made at the
// function's entry, outside every loop, viewed as the panels), and every
// tile row read becomes a row of a panel.
// CHECK-LABEL: func.func @gemm
// CHECK-NEXT: %[[BYTES:.*]] = memref.alloca() {alignment = 64 : i64} : memref<65536xi8>
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[BK:.*]] = memref.subview %{{.*}}[%[[K0]], 0] [128, 100] [1, 1]
// CHECK: %[[P:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<65536xi8> to memref<4x128x32xf32>
// CHECK: scf.for %[[PANEL:.*]] =
// CHECK: scf.for %[[K:.*]] =
// CHECK: %[[ROW:.*]] = vector.transfer_read %[[BK]][%[[K]], %{{.*}}], %{{[a-z_0-9]+}} : memref<128x100xf32, strided<[100, 1], offset: ?>>, vector<32xf32>
// CHECK: vector.transfer_write %[[ROW]], %[[P]][%[[PANEL]], %[[K]], %{{.*}}] {in_bounds = [true]}
// CHECK: memref.subview %[[P]][%{{.*}}, %{{.*}}, 0] [1, 1, 32] [1, 1, 1] : memref<4x128x32xf32> to memref<1x32xf32, strided<[{{[0-9]+}}, 1], offset: ?>>
// CHECK: memref.subview %[[P]][%{{.*}}, %{{.*}}, 0] [1, 1, %{{.*}}] [1, 1, 1] : memref<4x128x32xf32> to memref<1x?xf32, strided<[{{[0-9]+}}, 1], offset: ?>>
// CHECK-NOT: memref.subview %[[BK]]
#rest = affine_map<(d0) -> (-d0 + 100, 32)>
func.func @gemm(%a: memref<64x256xf32>, %b: memref<256x100xf32>, %c: memref<64x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c100 = arith.constant 100 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %k0 = %c0 to %c256 step %c128 {
    %bk = memref.subview %b[%k0, 0] [128, 100] [1, 1] : memref<256x100xf32> to memref<128x100xf32, strided<[100, 1], offset: ?>>
    scf.for %m = %c0 to %c64 step %c8 {
      scf.for %j = %c0 to %c96 step %c32 {
        %zero = arith.constant dense<0.0> : vector<1x32xf32>
        %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
          %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x100xf32, strided<[100, 1], offset: ?>> to memref<1x32xf32, strided<[100, 1], offset: ?>>
          %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[100, 1], offset: ?>>, vector<1x32xf32>
          %n = arith.addf %s, %v : vector<1x32xf32>
          scf.yield %n : vector<1x32xf32>
        }
        vector.transfer_write %acc, %c[%m, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<64x100xf32>
      }
      scf.for %j = %c96 to %c100 step %c32 {
        %w = affine.min #rest(%j)
        scf.for %k = %c0 to %c128 step %c1 {
          %row = memref.subview %bk[%k, %j] [1, %w] [1, 1] : memref<128x100xf32, strided<[100, 1], offset: ?>> to memref<1x?xf32, strided<[100, 1], offset: ?>>
          %v = vector.transfer_read %row[%c0, %c0], %f0 : memref<1x?xf32, strided<[100, 1], offset: ?>>, vector<1x32xf32>
          vector.transfer_write %v, %c[%m, %j] : vector<1x32xf32>, memref<64x100xf32>
        }
      }
    }
  }
  return
}

// -----

// One row of the result (a GEMV): each panel would be read once, the copy
// not repaid; the reads stay on the operand.
// CHECK-LABEL: func.func @single_row
// CHECK-NOT: memref.alloca
// CHECK: memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [1, 32] [1, 1] : memref<128x96xf32
func.func @single_row(%b: memref<256x96xf32>, %c: memref<1x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %k0 = %c0 to %c256 step %c128 {
    %bk = memref.subview %b[%k0, 0] [128, 96] [1, 1] : memref<256x96xf32> to memref<128x96xf32, strided<[96, 1], offset: ?>>
    scf.for %m = %c0 to %c1 step %c1 {
      scf.for %j = %c0 to %c96 step %c32 {
        %zero = arith.constant dense<0.0> : vector<1x32xf32>
        %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
          %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x96xf32, strided<[96, 1], offset: ?>> to memref<1x32xf32, strided<[96, 1], offset: ?>>
          %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[96, 1], offset: ?>>, vector<1x32xf32>
          %n = arith.addf %s, %v : vector<1x32xf32>
          scf.yield %n : vector<1x32xf32>
        }
        vector.transfer_write %acc, %c[%m, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<1x96xf32>
      }
    }
  }
  return
}

// -----

// A read written through (not only read), or starting off a panel: left.
// CHECK-LABEL: func.func @written
// CHECK-NOT: memref.alloca
func.func @written(%b: memref<256x96xf32>, %c: memref<64x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %k0 = %c0 to %c256 step %c128 {
    %bk = memref.subview %b[%k0, 0] [128, 96] [1, 1] : memref<256x96xf32> to memref<128x96xf32, strided<[96, 1], offset: ?>>
    scf.for %m = %c0 to %c64 step %c8 {
      scf.for %j = %c0 to %c96 step %c16 {
        scf.for %k = %c0 to %c128 step %c1 {
          %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x96xf32, strided<[96, 1], offset: ?>> to memref<1x32xf32, strided<[96, 1], offset: ?>>
          %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[96, 1], offset: ?>>, vector<1x32xf32>
          vector.transfer_write %v, %row[%c0, %c0] {in_bounds = [true, true]} : vector<1x32xf32>, memref<1x32xf32, strided<[96, 1], offset: ?>>
        }
      }
    }
  }
  return
}

// -----

// Under a parallel loop (here over column tiles: each thread its own
// columns of the operand), the buffer is made at the start of its body (one
// per thread once the loop is OpenMP's).
// CHECK-LABEL: func.func @per_thread
// CHECK: scf.parallel
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<49152xi8>
// CHECK: scf.for
// CHECK-NOT: memref.alloc()
#cols = affine_map<(d0) -> (d0 * 96)>
func.func @per_thread(%b: memref<256x192xf32>, %c: memref<64x192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %n0 = affine.apply #cols(%t)
    scf.for %k0 = %c0 to %c256 step %c128 {
      %bk = memref.subview %b[%k0, %n0] [128, 96] [1, 1] : memref<256x192xf32> to memref<128x96xf32, strided<[192, 1], offset: ?>>
      scf.for %m = %c0 to %c64 step %c8 {
        scf.for %j = %c0 to %c96 step %c32 {
          %zero = arith.constant dense<0.0> : vector<1x32xf32>
          %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
            %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x96xf32, strided<[192, 1], offset: ?>> to memref<1x32xf32, strided<[192, 1], offset: ?>>
            %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[192, 1], offset: ?>>, vector<1x32xf32>
            %n = arith.addf %s, %v : vector<1x32xf32>
            scf.yield %n : vector<1x32xf32>
          }
          %cj = arith.addi %n0, %j : index
          vector.transfer_write %acc, %c[%m, %cj] {in_bounds = [true, true]} : vector<1x32xf32>, memref<64x192xf32>
        }
      }
    }
    scf.reduce
  }
  return
}

// -----

// Sixteen row tiles of a parallel loop reading the same blocks of the
// operand (a GEMM's threads over M): rather than a copy of each block per
// tile, the whole operand (96 floats wide) is packed once before the loop,
// into 3 panels of 256 x 32 floats on the heap, split between the threads,
// and freed after it; the K blocks are views of the panels. (With fewer
// tiles each block is copied where it is read, as in @per_thread.)
// CHECK-LABEL: func.func @whole_operand
// CHECK-SAME: (%[[B:.*]]: memref<256x96xf32>
// CHECK-NOT: memref.alloca
// CHECK: %[[ALL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x256x32xf32>
// CHECK: scf.parallel (%[[P:.*]]) =
// CHECK: scf.for %[[K:.*]] =
// CHECK: %[[ROW:.*]] = vector.transfer_read %[[B]][%[[K]], %{{.*}}], %{{.*}} : memref<256x96xf32>, vector<32xf32>
// CHECK: vector.transfer_write %[[ROW]], %[[ALL]][%[[P]], %[[K]], %{{.*}}] {in_bounds = [true]}
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: scf.for %[[K0:.*]] =
// CHECK: %[[BLOCK:.*]] = memref.subview %[[ALL]][0, %[[K0]], 0] [3, 128, 32] [1, 1, 1]
// CHECK: memref.subview %[[BLOCK]][%{{.*}}, %{{.*}}, 0] [1, 1, 32] [1, 1, 1]
// CHECK-NOT: memref.subview %[[B]]
// CHECK: scf.reduce
// CHECK: memref.dealloc %[[ALL]] : memref<3x256x32xf32>
#rows = affine_map<(d0) -> (d0 * 64)>
func.func @whole_operand(%b: memref<256x96xf32>, %c: memref<1024x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c16 = arith.constant 16 : index
  %f0 = arith.constant 0.0 : f32
  scf.parallel (%t) = (%c0) to (%c16) step (%c1) {
    %m0 = affine.apply #rows(%t)
    scf.for %k0 = %c0 to %c256 step %c128 {
      %bk = memref.subview %b[%k0, 0] [128, 96] [1, 1] : memref<256x96xf32> to memref<128x96xf32, strided<[96, 1], offset: ?>>
      scf.for %m = %c0 to %c64 step %c8 {
        scf.for %j = %c0 to %c96 step %c32 {
          %zero = arith.constant dense<0.0> : vector<1x32xf32>
          %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
            %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x96xf32, strided<[96, 1], offset: ?>> to memref<1x32xf32, strided<[96, 1], offset: ?>>
            %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[96, 1], offset: ?>>, vector<1x32xf32>
            %n = arith.addf %s, %v : vector<1x32xf32>
            scf.yield %n : vector<1x32xf32>
          }
          %cm = arith.addi %m0, %m : index
          vector.transfer_write %acc, %c[%cm, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<1024x96xf32>
        }
      }
    }
    scf.reduce
  }
  return
}

// -----

// Two GEMMs one after the other share one buffer, as large as the larger.
// CHECK-LABEL: func.func @two_gemms
// CHECK-COUNT-1: memref.alloca() {alignment = 64 : i64} : memref<49152xi8>
// CHECK-NOT: memref.alloca
// CHECK: memref.view {{.*}} to memref<3x128x32xf32>
// CHECK: memref.view {{.*}} to memref<2x128x32xf32>
func.func @two_gemms(%b: memref<128x96xf32>, %d: memref<128x64xf32>, %c: memref<64x96xf32>, %e: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<1x32xf32>
  %bk = memref.subview %b[0, 0] [128, 96] [1, 1] : memref<128x96xf32> to memref<128x96xf32, strided<[96, 1]>>
  scf.for %m = %c0 to %c64 step %c8 {
    scf.for %j = %c0 to %c96 step %c32 {
      %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
        %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x96xf32, strided<[96, 1]>> to memref<1x32xf32, strided<[96, 1], offset: ?>>
        %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[96, 1], offset: ?>>, vector<1x32xf32>
        %n = arith.addf %s, %v : vector<1x32xf32>
        scf.yield %n : vector<1x32xf32>
      }
      vector.transfer_write %acc, %c[%m, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<64x96xf32>
    }
  }
  %dk = memref.subview %d[0, 0] [128, 64] [1, 1] : memref<128x64xf32> to memref<128x64xf32, strided<[64, 1]>>
  scf.for %m = %c0 to %c64 step %c8 {
    scf.for %j = %c0 to %c64 step %c32 {
      %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
        %row = memref.subview %dk[%k, %j] [1, 32] [1, 1] : memref<128x64xf32, strided<[64, 1]>> to memref<1x32xf32, strided<[64, 1], offset: ?>>
        %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[64, 1], offset: ?>>, vector<1x32xf32>
        %n = arith.addf %s, %v : vector<1x32xf32>
        scf.yield %n : vector<1x32xf32>
      }
      vector.transfer_write %acc, %e[%m, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<64x64xf32>
    }
  }
  return
}

// -----

// A constant right operand (a weight) is packed once, at compile time: a
// global of its panels [ceil(12 / 8)][2][8], zeros past column 12, replaces
// it, and each block (here a thread's columns 8 apart, through a subview)
// is a view of the panels: no copy, no stack buffer, although four result
// rows would not repay a copy. The original global goes: nothing reads it.
// CHECK-NOT: memref.global "private" constant @w :
// CHECK-LABEL: memref.global "private" constant @w_panels : memref<2x2x8xf32> =
// CHECK-SAME: dense<{{\[}}{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00], [1.200000e+01, {{.*}}, 1.900000e+01]],
// CHECK-SAME: {{\[}}[8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [2.000000e+01, 2.100000e+01, 2.200000e+01, 2.300000e+01, 0.000000e+00, {{.*}}]]]>
// CHECK-SAME: {alignment = 64 : i64}
// CHECK-LABEL: func.func @constant_gemm
// CHECK-NOT: memref.alloca
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: %[[PANELS:.*]] = memref.get_global @w_panels : memref<2x2x8xf32>
// CHECK: %[[BLOCK:.*]] = memref.subview %[[PANELS]][%[[T]], 0, 0] [1, 2, 8] [1, 1, 1]
// CHECK: memref.subview %[[BLOCK]][%{{.*}}, %{{.*}}, 0] [1, 1, 8] [1, 1, 1]
// CHECK-NOT: memref.get_global @w :
memref.global "private" constant @w : memref<2x12xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0]]> {alignment = 64 : i64}
#cols = affine_map<(d0) -> (d0 * 8)>
#rest = affine_map<(d0) -> (-d0 + 12, 8)>
func.func @constant_gemm(%a: memref<4x2xf32>, %c: memref<4x12xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<1x8xf32>
  %w = memref.get_global @w : memref<2x12xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %n0 = affine.apply #cols(%t)
    %wt = memref.subview %w[0, %n0] [2, 8] [1, 1] : memref<2x12xf32> to memref<2x8xf32, strided<[12, 1], offset: ?>>
    %bk = memref.subview %wt[0, 0] [2, 8] [1, 1] : memref<2x8xf32, strided<[12, 1], offset: ?>> to memref<2x8xf32, strided<[12, 1], offset: ?>>
    scf.for %m = %c0 to %c4 step %c1 {
      %acc = scf.for %k = %c0 to %c2 step %c1 iter_args(%s = %zero) -> (vector<1x8xf32>) {
        %row = memref.subview %bk[%k, 0] [1, 8] [1, 1] : memref<2x8xf32, strided<[12, 1], offset: ?>> to memref<1x8xf32, strided<[12, 1], offset: ?>>
        %v = vector.transfer_read %row[%c0, %c0], %f0 : memref<1x8xf32, strided<[12, 1], offset: ?>>, vector<1x8xf32>
        %n = arith.addf %s, %v : vector<1x8xf32>
        scf.yield %n : vector<1x8xf32>
      }
      vector.transfer_write %acc, %c[%m, %n0] : vector<1x8xf32>, memref<4x12xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A constant read elsewhere too keeps its global beside the panels; a splat
// is packed as well (here without padding: a splat again).
// CHECK: memref.global "private" constant @kept_panels : memref<1x2x8xf32> = dense<1.500000e+00>
// CHECK: memref.global "private" constant @kept : memref<2x8xf32>
// CHECK-LABEL: func.func @constant_kept
// CHECK-NOT: memref.alloca
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x8xf32> to memref<2x8xf32>
memref.global "private" constant @kept : memref<2x8xf32> = dense<1.5> {alignment = 64 : i64}
func.func @constant_kept(%c: memref<4x8xf32>, %d: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<1x8xf32>
  %w = memref.get_global @kept : memref<2x8xf32>
  memref.copy %w, %d : memref<2x8xf32> to memref<2x8xf32>
  %bk = memref.subview %w[0, 0] [2, 8] [1, 1] : memref<2x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  scf.for %m = %c0 to %c4 step %c1 {
    %acc = scf.for %k = %c0 to %c2 step %c1 iter_args(%s = %zero) -> (vector<1x8xf32>) {
      %row = memref.subview %bk[%k, 0] [1, 8] [1, 1] : memref<2x8xf32, strided<[8, 1]>> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      %v = vector.transfer_read %row[%c0, %c0], %f0 : memref<1x8xf32, strided<[8, 1], offset: ?>>, vector<1x8xf32>
      %n = arith.addf %s, %v : vector<1x8xf32>
      scf.yield %n : vector<1x8xf32>
    }
    vector.transfer_write %acc, %c[%m, %c0] : vector<1x8xf32>, memref<4x8xf32>
  }
  return
}

// -----

// The same loops writing the operand as well: the panels packed before
// them would be stale, so each K block is copied where it is read.
// CHECK-LABEL: func.func @whole_operand_written
// CHECK-NOT: memref.alloc()
// CHECK: scf.parallel
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<49152xi8>
#rows2 = affine_map<(d0) -> (d0 * 64)>
func.func @whole_operand_written(%b: memref<256x96xf32>, %c: memref<1024x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c16 = arith.constant 16 : index
  %f0 = arith.constant 0.0 : f32
  scf.parallel (%t) = (%c0) to (%c16) step (%c1) {
    %m0 = affine.apply #rows2(%t)
    memref.store %f0, %b[%m0, %c0] : memref<256x96xf32>
    scf.for %k0 = %c0 to %c256 step %c128 {
      %bk = memref.subview %b[%k0, 0] [128, 96] [1, 1] : memref<256x96xf32> to memref<128x96xf32, strided<[96, 1], offset: ?>>
      scf.for %m = %c0 to %c64 step %c8 {
        scf.for %j = %c0 to %c96 step %c32 {
          %zero = arith.constant dense<0.0> : vector<1x32xf32>
          %acc = scf.for %k = %c0 to %c128 step %c1 iter_args(%s = %zero) -> (vector<1x32xf32>) {
            %row = memref.subview %bk[%k, %j] [1, 32] [1, 1] : memref<128x96xf32, strided<[96, 1], offset: ?>> to memref<1x32xf32, strided<[96, 1], offset: ?>>
            %v = vector.transfer_read %row[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<1x32xf32, strided<[96, 1], offset: ?>>, vector<1x32xf32>
            %n = arith.addf %s, %v : vector<1x32xf32>
            scf.yield %n : vector<1x32xf32>
          }
          %cm = arith.addi %m0, %m : index
          vector.transfer_write %acc, %c[%cm, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<1024x96xf32>
        }
      }
    }
    scf.reduce
  }
  return
}

// -----

// Register tiles taking four K steps per iteration read four rows of the
// block at a time: each read becomes four consecutive rows of a panel.
// CHECK-LABEL: func.func @four_k_steps
// CHECK: %[[P:.*]] = memref.view %{{.*}} to memref<2x128x32xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c128 step %c4
// CHECK: %[[ROWS:.*]] = memref.subview %[[P]][%{{.*}}, %[[K]], 0] [1, 4, 32] [1, 1, 1] : memref<2x128x32xf32> to memref<4x32xf32, strided<[32, 1], offset: ?>>
// CHECK: vector.transfer_read %[[ROWS]]{{.*}} vector<4x32xf32>
func.func @four_k_steps(%b: memref<256x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %k0 = %c0 to %c256 step %c128 {
    %bk = memref.subview %b[%k0, 0] [128, 64] [1, 1] : memref<256x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
    scf.for %m = %c0 to %c64 step %c8 {
      scf.for %j = %c0 to %c64 step %c32 {
        %zero = arith.constant dense<0.0> : vector<4x32xf32>
        %acc = scf.for %k = %c0 to %c128 step %c4 iter_args(%s = %zero) -> (vector<4x32xf32>) {
          %rows = memref.subview %bk[%k, %j] [4, 32] [1, 1] : memref<128x64xf32, strided<[64, 1], offset: ?>> to memref<4x32xf32, strided<[64, 1], offset: ?>>
          %v = vector.transfer_read %rows[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<4x32xf32>
          %n = arith.addf %s, %v : vector<4x32xf32>
          scf.yield %n : vector<4x32xf32>
        }
        %sum = vector.extract %acc[0] : vector<32xf32> from vector<4x32xf32>
        vector.transfer_write %sum, %c[%m, %j] {in_bounds = [true]} : vector<32xf32>, memref<64x64xf32>
      }
    }
  }
  return
}

// -----

// A batched GEMM (attention's scores, 8 x 256x64 . 64x256) as the schedule
// leaves it: each thread task takes one batch's 64 x 128 block of the right
// operand (`[1, 64, 128]`, rows 1 KiB apart: in L1 they fall in 4 sets) and
// its register tiles read rows `[1, 4, 16]` of it. The block without its
// batch of 1 is copied into 8 panels of 64 x 16 at the start of the task,
// and the rows become rows of the panels. Its 128 columns are whole panels:
// the copy's reads need no mask.
// CHECK-LABEL: func.func @batched
// CHECK: scf.parallel (%[[BATCH:.*]], %{{.*}}) =
// CHECK-NEXT: %[[BYTES:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32768xi8>
// CHECK: %[[BK:.*]] = memref.subview %{{.*}}[%[[BATCH]], 0, %{{.*}}] [1, 64, 128] [1, 1, 1]
// CHECK: %[[P:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<32768xi8> to memref<8x64x16xf32>
// CHECK: %[[FLAT:.*]] = memref.subview %[[BK]][0, 0, 0] [1, 64, 128] [1, 1, 1] : memref<1x64x128xf32, strided<[16384, 256, 1], offset: ?>> to memref<64x128xf32, strided<[256, 1], offset: ?>>
// CHECK: vector.transfer_read %[[FLAT]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<64x128xf32, strided<[256, 1], offset: ?>>, vector<16xf32>
// CHECK: memref.subview %[[P]][%{{.*}}, %{{.*}}, 0] [1, 4, 16] [1, 1, 1] : memref<8x64x16xf32> to memref<1x4x16xf32, strided<[1024, 16, 1], offset: ?>>
// CHECK-NOT: memref.subview %[[BK]][0, %{{.*}}, %{{.*}}] [1, 4, 16]
func.func @batched(%b: memref<8x64x256xf32>, %c: memref<8x256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<1x4x16xf32>
  scf.parallel (%bi, %nt) = (%c0, %c0) to (%c8, %c2) step (%c1, %c1) {
    %n0 = arith.muli %nt, %c128 : index
    %bk = memref.subview %b[%bi, 0, %n0] [1, 64, 128] [1, 1, 1] : memref<8x64x256xf32> to memref<1x64x128xf32, strided<[16384, 256, 1], offset: ?>>
    scf.for %m = %c0 to %c64 step %c4 {
      scf.for %j = %c0 to %c128 step %c16 {
        %acc = scf.for %k = %c0 to %c64 step %c4 iter_args(%s = %zero) -> (vector<1x4x16xf32>) {
          %row = memref.subview %bk[0, %k, %j] [1, 4, 16] [1, 1, 1] : memref<1x64x128xf32, strided<[16384, 256, 1], offset: ?>> to memref<1x4x16xf32, strided<[16384, 256, 1], offset: ?>>
          %v = vector.transfer_read %row[%c0, %c0, %c0], %f0 {in_bounds = [true, true, true]} : memref<1x4x16xf32, strided<[16384, 256, 1], offset: ?>>, vector<1x4x16xf32>
          %n = arith.addf %s, %v : vector<1x4x16xf32>
          scf.yield %n : vector<1x4x16xf32>
        }
        vector.transfer_write %acc, %c[%bi, %m, %j] {in_bounds = [true, true, true]} : vector<1x4x16xf32>, memref<8x256x256xf32>
      }
    }
    scf.reduce
  }
  return
}
