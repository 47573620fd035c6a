// Snapshot IR as the pipeline prints it (parseable locations, #loc aliases):
// ops become nodes with their IR line and source line, the fused generic's
// body a cluster, SSA uses edges; names reused by sibling regions do not cross.
// RUN: %cuvil_graph %s | FileCheck %s
// RUN: %cuvil_graph --hide-constants %s | FileCheck %s --check-prefix=HIDE

#map = affine_map<(d0) -> (d0)>
module {
  func.func @block(%arg0: tensor<8xf32> loc("/m.py":3:1), %arg1: tensor<8xf32> loc("/m.py":3:1)) -> tensor<8xf32> {
    %cst = arith.constant 5.000000e-01 : f32 loc(unknown)
    %0 = tensor.empty() : tensor<8xf32> loc(#loc1)
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
    ^bb0(%in: f32 loc(#loc1), %in_0: f32 loc(#loc1), %out: f32 loc(#loc1)):
      %3 = arith.addf %in, %in_0 : f32 loc(#loc1)
      %4 = arith.mulf %3, %cst : f32 loc("/m.py":5:12)
      linalg.yield %4 : f32 loc("/m.py":5:12)
    } -> tensor<8xf32> loc("/m.py":5:12)
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%1 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
    ^bb0(%in: f32 loc("/m.py":6:9), %out: f32 loc("/m.py":6:9)):
      %3 = math.exp %in : f32 loc("/m.py":6:9)
      linalg.yield %3 : f32 loc("/m.py":6:9)
    } -> tensor<8xf32> loc("/m.py":6:9)
    return %2 : tensor<8xf32> loc("/m.py":3:1)
  } loc("/m.py":3:1)
} loc(#loc)
#loc = loc("<cuvil-ir>":1:1)
#loc1 = loc("/m.py":4:9)

// CHECK: digraph "block" {
// CHECK-DAG: n0 [label="%arg0\ntensor<8xf32>", op="%arg0", kind="argument", irline=9, loc="/m.py:3"
// CHECK-DAG: n2 [label="arith.constant\nf32", op="arith.constant", kind="constant", irline=10, loc=""
// CHECK-DAG: n3 [label="tensor.empty\ntensor<8xf32>", op="tensor.empty", kind="memory", irline=11, loc="/m.py:4"
// CHECK-DAG: n11 [label="func.return\ntensor<8xf32>", op="func.return", kind="control", irline=23, loc="/m.py:3"
// CHECK: subgraph cluster_0 {
// CHECK-NEXT: label="linalg.generic"; {{.*}} owner="n4";
// CHECK-NEXT: n4 [label="linalg.generic\ntensor<8xf32>", op="linalg.generic", kind="elementwise", irline=12, loc="/m.py:5"
// CHECK-NEXT: n5 [label="arith.addf\nf32", {{.*}} irline=14, loc="/m.py:4"
// CHECK-NEXT: n6 [label="arith.mulf\nf32", {{.*}} irline=15, loc="/m.py:5"
// CHECK-NEXT: n7 [label="linalg.yield
// CHECK-NEXT: }
// CHECK: subgraph cluster_1 {
// CHECK-NEXT: label="linalg.generic"; {{.*}} owner="n8";
// CHECK-NEXT: n8 [
// CHECK-NEXT: n9 [label="math.exp\nf32"
// CHECK: n0 -> n4 [tooltip="%arg0"];
// CHECK: n4 -> n5 [tooltip="%in"];
// CHECK: n5 -> n6 [tooltip="%3"];
// CHECK: n2 -> n6 [tooltip="%cst"];
// CHECK: n4 -> n8 [tooltip="%1"];
// The second body's %3 is its own: math.exp feeds its yield, and the first
// body's %3 (arith.addf, n5) feeds nothing in the second body.
// CHECK: n9 -> n10 [tooltip="%3"];
// CHECK-NOT: n5 -> n10
// CHECK: n8 -> n11 [tooltip="%2"];
// CHECK: }

// HIDE-NOT: arith.constant
// HIDE: n4 [label="arith.addf
// HIDE-NOT: arith.constant
