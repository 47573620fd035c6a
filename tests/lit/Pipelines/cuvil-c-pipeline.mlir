// The c target's pipeline from cuvil ops to EmitC, then printed as C.
// RUN: %cuvil_opt %s --cuvil-c-pipeline=up-to=bufferize | FileCheck %s --check-prefix=LOOPS
// RUN: %cuvil_opt %s --cuvil-c-pipeline | FileCheck %s --check-prefix=EMITC
// RUN: %cuvil_opt %s --cuvil-c-pipeline | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=C

// No schedule: plain loops over buffers, the result an out-parameter that
// the GEMM accumulates into.
// LOOPS-LABEL: func.func @mlp
// LOOPS-SAME: %[[OUT:arg[0-9]+]]: memref<16x256xf32>)
// LOOPS-NOT: vector.
// LOOPS: scf.for
// LOOPS: memref.store {{.*}}, %[[OUT]]

// Static storage, arrays, <math.h> calls; nothing of memref, arith or scf left.
// EMITC: emitc.func @mlp(%{{.*}}: !emitc.array<16x32xf32>, %{{.*}}: !emitc.array<32x256xf32>, %{{.*}}: !emitc.array<256xf32>, %{{.*}}: !emitc.array<16x256xf32>)
// EMITC-SAME: specifiers = ["static"]
// EMITC: emitc.call_opaque "erff"
// EMITC-NOT: memref.
// EMITC-NOT: scf.
// EMITC-NOT: arith.

// C: static void mlp(float [[X:v[0-9]+]][16][32], float [[W:v[0-9]+]][32][256], float [[B:v[0-9]+]][256], float [[OUT:v[0-9]+]][16][256]) {
// C: for (size_t
// C: erff(
// C: [[OUT]][{{.*}}][{{.*}}] =

func.func @mlp(%x: tensor<16x32xf32>, %w: tensor<32x256xf32>, %b: tensor<256xf32>) -> tensor<16x256xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<16x32xf32>, tensor<32x256xf32>) -> tensor<16x256xf32> loc("mlp.py":12:8)
  %1 = cuvil.add %0, %b : (tensor<16x256xf32>, tensor<256xf32>) -> tensor<16x256xf32> loc("mlp.py":12:8)
  %2 = cuvil.gelu %1 : tensor<16x256xf32> loc("mlp.py":13:11)
  return %2 : tensor<16x256xf32>
}
