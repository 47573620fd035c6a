// RUN: %cuvil_opt %s --split-input-file --cuvil-cuda-map-parallel-loops --verify-diagnostics | FileCheck %s
// RUN: %cuvil_opt %s --split-input-file --cuvil-cuda-map-parallel-loops --convert-parallel-loops-to-gpu --canonicalize --verify-diagnostics | FileCheck %s --check-prefix=LAUNCH
// RUN: not %cuvil_opt %s --split-input-file --cuvil-cuda-map-parallel-loops=threads-per-block=48 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: threads-per-block=48 is not a multiple of 32 between 32 and 1024

// 2-D: the contiguous (last) dimension on x with a warp's 32 threads, the
// other on y with the rest of 256; blocks the same way.
// CHECK-LABEL: func.func @two_d
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]
// LAUNCH-LABEL: func.func @two_d
// LAUNCH: gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}} = %{{.*}}, {{.*}} = %{{.*}}) threads({{.*}}) in ({{.*}} = %c32, {{.*}} = %c8, {{.*}} = %c1)
func.func @two_d(%a: memref<64x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c100) step (%c1, %c1) {
    memref.store %one, %a[%i, %j] : memref<64x100xf32>
    scf.reduce
  }
  return
}

// -----

// A small 1-D loop: threads no more than its trip count (rounded up to a
// power of two), all on x.
// LAUNCH-LABEL: func.func @one_d
// LAUNCH: threads({{.*}}) in ({{.*}} = %c16, {{.*}} = %c1, {{.*}} = %c1)
func.func @one_d(%a: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c10) step (%c1) {
    memref.store %one, %a[%i] : memref<10xf32>
    scf.reduce
  }
  return
}

// -----

// Four dimensions: the leading two collapse into one, on z.
// CHECK-LABEL: func.func @four_d
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]
func.func @four_d(%a: memref<2x3x8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c2, %c3, %c8, %c32) step (%c1, %c1, %c1, %c1) {
    memref.store %one, %a[%i, %j, %k, %l] : memref<2x3x8x32xf32>
    scf.reduce
  }
  return
}

// -----

// Host code touching memory (a full reduction to a scalar) runs as one
// thread of one block, with the scalar arithmetic that uses what it loads.
// CHECK-LABEL: func.func @serial
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x
func.func @serial(%a: memref<f32>, %b: memref<f32>) {
  %v = memref.load %a[] : memref<f32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %b[] : memref<f32>
  return
}

// -----

func.func @escapes(%a: memref<f32>) -> f32 {
  // expected-error @+1 {{this value is computed on the GPU but used by host code}}
  %v = memref.load %a[] : memref<f32>
  return %v : f32
}

