// Op kinds come from the ops' interfaces and traits: cuvil.where is
// elementwise (not a shape op), linalg's named and generic ops by their
// contraction interface and iterator types, views and casts are shape ops,
// scalar LLVM arithmetic elementwise, loads and pointers memory; ops of
// dialects cuvil-graph does not know are graphed as "other".
// RUN: %cuvil_graph --function=cuvil_ops %s | FileCheck %s --check-prefix=CUVIL
// RUN: %cuvil_graph --function=linalg_ops %s | FileCheck %s --check-prefix=LINALG
// RUN: %cuvil_graph --function=linalg_ops %s | FileCheck %s --check-prefix=CLUSTERS
// RUN: %cuvil_graph --function=lowered_ops %s | FileCheck %s --check-prefix=LOWERED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
module {
  func.func @cuvil_ops(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %s: tensor<f32>) -> tensor<2x4xf32> {
    %c = cuvil.compare lt, %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
    %y = cuvil.where %c, %x, %s : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %m = cuvil.matmul %y, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    %t = cuvil.transpose %m {permutation = array<i64: 1, 0>} : (tensor<4x2xf32>) -> tensor<2x4xf32>
    return %t : tensor<2x4xf32>
  }

  func.func @linalg_ops(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
    %mm = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
    %g = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) {
    ^bb0(%l: f32, %r: f32, %acc: f32):
      %p = arith.mulf %l, %r : f32
      %q = arith.addf %acc, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
    %e4 = tensor.empty() : tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%g : tensor<4x2xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %acc, %in : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %flat = tensor.collapse_shape %mm [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
    return %sum : tensor<4xf32>
  }

  llvm.func @lowered_ops(%p: !llvm.ptr, %i: i64) -> f32 {
    %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %q : !llvm.ptr -> f32
    %w = llvm.fmul %v, %v : f32
    %x = llvm.intr.fmuladd(%v, %w, %v) : (f32, f32, f32) -> f32
    %y = "foreign.op"(%x) : (f32) -> f32
    llvm.return %y : f32
  }
}

// CUVIL-DAG: op="cuvil.compare", kind="elementwise"
// CUVIL-DAG: op="cuvil.where", kind="elementwise"
// CUVIL-DAG: op="cuvil.matmul", kind="contraction"
// CUVIL-DAG: op="cuvil.transpose", kind="shape"

// A named op's implicit body is not drawn; a generic's written body is.
// LINALG-DAG: op="arith.constant", kind="constant"
// LINALG-DAG: op="tensor.empty", kind="memory"
// LINALG-DAG: n{{[0-9]+}} [label="linalg.fill\ntensor<4x2xf32>", op="linalg.fill", kind="memory"
// LINALG-DAG: n{{[0-9]+}} [label="linalg.matmul\ntensor<4x2xf32>", op="linalg.matmul", kind="contraction"
// LINALG-DAG: op="linalg.generic", kind="contraction", irline=30
// LINALG-DAG: op="linalg.generic", kind="reduction", irline=37
// LINALG-DAG: op="tensor.collapse_shape", kind="shape"
// CLUSTERS-COUNT-2: subgraph cluster_
// CLUSTERS-NOT: subgraph cluster_

// LOWERED-DAG: op="llvm.getelementptr", kind="memory"
// LOWERED-DAG: op="llvm.load", kind="memory"
// LOWERED-DAG: op="llvm.fmul", kind="elementwise"
// LOWERED-DAG: op="llvm.intr.fmuladd", kind="contraction"
// LOWERED-DAG: op="foreign.op", kind="other"
// LOWERED-DAG: op="llvm.return", kind="control"
