// RUN: %cuvil_opt %s --cuvil-cpu-schedule="vector-lanes=8 register-rows=8" --split-input-file | FileCheck %s

// A dynamic M gets the static N and K's tiles: a thread tile of 64 rows
// with a partial last one, 8-row register tiles peeled so the full ones keep
// the 8 x 16 vector body, and the last rows cut into 1-row tiles of the same
// width. The epilogue (bias + ReLU) is peeled the same way.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: scf.forall (%{{.*}}) in (%{{.*}})
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[FULL:[^ ]*]] step
// CHECK: vector.transfer_read %{{.*}} : tensor<8x16xf32>, vector<8x16xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// CHECK: scf.for %{{.*}} = %[[FULL]] to
// CHECK: vector.transfer_read %{{.*}} : tensor<1x16xf32>, vector<1x16xf32>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<8x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.generic
func.func @dynamic_rows(%a: tensor<?x64xf32>, %b: tensor<64x48xf32>, %bias: tensor<48xf32>) -> tensor<?x48xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x64xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x48xf32>) outs(%f : tensor<?x48xf32>) -> tensor<?x48xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<?x48xf32>, tensor<48xf32>) outs(%e : tensor<?x48xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<?x48xf32>
  return %o : tensor<?x48xf32>
}

// -----

// Attention scores: batch, M and N dynamic. The batch thread tile of 1 gets
// a loop of 1 that makes it static; rows and columns are both peeled, the
// partial columns cut into 1-column tiles.
// CHECK-LABEL: func.func @dynamic_scores
// CHECK: scf.forall
// CHECK: vector.transfer_read %{{.*}} : tensor<1x8x16xf32>, vector<1x8x16xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector<1x8x1xf32>
// CHECK: vector<1x1x16xf32>
// CHECK-NOT: linalg.batch_matmul
func.func @dynamic_scores(%q: tensor<?x?x16xf32>, %k: tensor<?x16x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x16xf32>
  %t = tensor.dim %q, %c1 : tensor<?x?x16xf32>
  %s = tensor.dim %k, %c2 : tensor<?x16x?xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%b, %t, %s) : tensor<?x?x?xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = linalg.batch_matmul ins(%q, %k : tensor<?x?x16xf32>, tensor<?x16x?xf32>) outs(%f : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// -----

// Elementwise and row kernels: a dynamic outer dim with a static inner one
// is vectorized as in the static case; a dynamic inner dim gets full
// vectors in a peeled loop and a 1-wide tail, the reduction accumulating
// vector by vector.
// CHECK-LABEL: func.func @dynamic_rows_kernels
// CHECK: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK: math.exp {{.*}} : vector<1x8xf32>
// CHECK: math.exp {{.*}} : vector<1x1xf32>
// CHECK: math.tanh {{.*}} : vector<1x8xf32>
// CHECK-NOT: linalg.generic
func.func @dynamic_rows_kernels(%x: tensor<?x?xf32>, %y: tensor<?x32xf32>) -> (tensor<?xf32>, tensor<?x?xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n, %m) : tensor<?x?xf32>
  %x2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %n3 = tensor.dim %y, %c0 : tensor<?x32xf32>
  %e3 = tensor.empty(%n3) : tensor<?x32xf32>
  %y2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x32xf32>) outs(%e3 : tensor<?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<?x32xf32>
  return %s, %x2, %y2 : tensor<?xf32>, tensor<?x?xf32>, tensor<?x32xf32>
}
