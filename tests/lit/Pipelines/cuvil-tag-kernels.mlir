// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-tag-kernels))" --split-input-file | FileCheck %s

// A GEMM and its fused epilogue on one line share a name; the payload of a
// generic lists its ops once each, in order.
// CHECK-LABEL: func.func @gemm_bias
// CHECK-SAME: cuvil.kernel_names = {{\[}}[#[[L1:loc[0-9]*]], "linalg.fill + linalg.matmul"], [#[[L2:loc[0-9]*]], "linalg.generic(addf,maximumf)"]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
func.func @gemm_bias(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32> loc("m.py":3:9)
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("m.py":3:9)
  %r = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %s : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  } -> tensor<4x16xf32> loc("m.py":4:12)
  return %r : tensor<4x16xf32>
}

// -----

// Must not fire: no linalg op, no attribute.
// CHECK-LABEL: func.func @no_kernels
// CHECK-NOT: cuvil.kernel_names
func.func @no_kernels(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
