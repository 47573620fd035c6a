// The wasm target's pipeline from cuvil ops to the LLVM dialect for wasm32.
// RUN: %cuvil_opt %s --cuvil-wasm-pipeline=up-to=bufferize | FileCheck %s --check-prefix=LOOPS
// RUN: %cuvil_opt %s --cuvil-wasm-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: %cuvil_opt %s --cuvil-wasm-pipeline=up-to=schedule | FileCheck %s --check-prefix=TILES
// RUN: not %cuvil_opt %s --cuvil-cpu-schedule=register-rows=6 2>&1 | FileCheck %s --check-prefix=ROWS

// GEMM register tiles of 4 rows by two 4-lane vectors: 8 accumulators, which
// a wasm engine keeps in x86's 16 vector registers (8 rows spilled: 2x slower).
// TILES: vector<4x8xf32>
// TILES-NOT: vector<8x8xf32>
// ROWS: register-rows=6 does not divide the cache tiles; use 1, 2, 4, 8, 16 or 32

// The CPU's schedule at simd128's width, serial: no thread-level loop, no
// OpenMP; the intermediates share one arena the memory plan sized.
// LOOPS-LABEL: func.func @mlp
// LOOPS-NOT: scf.forall
// LOOPS-NOT: omp.
// LOOPS: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16448xi8>
// LOOPS: memref.view %[[ARENA]]
// LOOPS: vector.{{.*}}vector<{{[0-9x]*}}4xf32>

// The arena is one static global; the function takes bare pointers and
// indexes with i32; math is polynomials: nothing is called.
// LLVM: llvm.mlir.global private @cuvil_buffer() {{.*}}alignment = 64 : i64{{.*}} : !llvm.array<16448 x i8>
// LLVM: llvm.func @mlp(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM-SAME: cuvil.planned_peak_bytes = 16448
// LLVM-NOT: llvm.call
// LLVM: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// LLVM-NOT: llvm.call
// LLVM-NOT: = memref.
// LLVM-NOT: = vector.

func.func @mlp(%x: tensor<16x32xf32>, %w: tensor<32x256xf32>, %b: tensor<256xf32>) -> tensor<16x256xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<16x32xf32>, tensor<32x256xf32>) -> tensor<16x256xf32> loc("mlp.py":12:8)
  %1 = cuvil.add %0, %b : (tensor<16x256xf32>, tensor<256xf32>) -> tensor<16x256xf32> loc("mlp.py":12:8)
  %2 = cuvil.gelu %1 : tensor<16x256xf32> loc("mlp.py":13:11)
  %3 = cuvil.softmax %2 {axis = 1 : i64} : tensor<16x256xf32> loc("mlp.py":14:11)
  return %3 : tensor<16x256xf32>
}
