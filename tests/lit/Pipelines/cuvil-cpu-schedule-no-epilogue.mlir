// RUN: %cuvil_opt %s --cuvil-cpu-schedule="vector-lanes=8 fuse-epilogues=0" | FileCheck %s

// With epilogue fusion off (enable_fusion=False) the GEMM's tiles store the
// product, and bias + ReLU is a kernel of its own that reads it back.
// CHECK-LABEL: func.func @epilogue_not_fused
// CHECK: scf.forall
// CHECK-NOT: arith.maximumf
// CHECK: scf.forall.in_parallel
// CHECK: arith.maximumf {{.*}} : vector<1x8xf32>
func.func @epilogue_not_fused(%a: tensor<128x32xf32>, %b: tensor<32x48xf32>, %bias: tensor<48xf32>) -> tensor<128x48xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x48xf32>) -> tensor<128x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x32xf32>, tensor<32x48xf32>) outs(%f : tensor<128x48xf32>) -> tensor<128x48xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<128x48xf32>, tensor<48xf32>) outs(%e : tensor<128x48xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<128x48xf32>
  return %o : tensor<128x48xf32>
}
