// Row kernels on the CPU: a layer norm's reductions sum each row as a tree
// (`reassoc`: LLVM's in-order reduction is one dependent scalar add per
// element), and the per-row sqrt(variance + eps) is computed once per row,
// outside the loop over the row's vectors, not once per vector.
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline="up-to=schedule vector-lanes=16" | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=vector-lanes=16 | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @layer_norm
// CHECK: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<128xf32> into f32
// CHECK: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<128xf32> into f32
// CHECK: scf.for %[[ROW:.*]] = %c0 to %c64 step %c1
// CHECK: vector.transfer_read {{.*}} permutation_map
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.sqrt
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c128 step %c16
// CHECK-NOT: math.sqrt
// CHECK: arith.divf
// CHECK: scf.yield

// LLVM: llvm.intr.vector.reduce.fadd{{.*}}fastmathFlags = #llvm.fastmath<reassoc>
// LLVM-NOT: fastmathFlags = #llvm.fastmath<none>

func.func @layer_norm(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %m = cuvil.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<64x128xf32>) -> tensor<64x1xf32>
  %d = cuvil.sub %x, %m : (tensor<64x128xf32>, tensor<64x1xf32>) -> tensor<64x128xf32>
  %s = cuvil.mul %d, %d : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %v = cuvil.reduce_mean %s {axes = array<i64: 1>, keepdims = true} : (tensor<64x128xf32>) -> tensor<64x1xf32>
  %e = cuvil.constant dense<1.0e-05> : tensor<f32>
  %ve = cuvil.add %v, %e : (tensor<64x1xf32>, tensor<f32>) -> tensor<64x1xf32>
  %r = cuvil.sqrt %ve : tensor<64x1xf32>
  %y = cuvil.div %d, %r : (tensor<64x128xf32>, tensor<64x1xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
