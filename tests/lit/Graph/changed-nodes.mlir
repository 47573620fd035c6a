// A pass's effect on the graph: ops of the new IR with no counterpart in the
// IR before it (same text up to SSA names, same location) are changed.
// RUN: split-file %s %t
// RUN: %cuvil_graph --before=%t/before.mlir %t/after.mlir | FileCheck %s
// RUN: %cuvil_graph --collapse %t/after.mlir | FileCheck %s --check-prefix=COLLAPSE
// RUN: %cuvil_graph --list-functions %t/after.mlir | FileCheck %s --check-prefix=LIST
// RUN: %not %cuvil_graph --function=missing %t/after.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

//--- before.mlir
#loc1 = loc("/m.py":3:1)
module {
  func.func @f(%arg0: tensor<8xf32> loc("/m.py":3:1)) -> tensor<8xf32> {
    %0 = cuvil.exp %arg0 : tensor<8xf32> loc(#loc2)
    %1 = cuvil.neg %0 : tensor<8xf32> loc(#loc3)
    return %1 : tensor<8xf32> loc(#loc1)
  } loc(#loc1)
} loc(#loc)
#loc = loc("<cuvil-ir>":1:1)
#loc2 = loc("/m.py":4:10)
#loc3 = loc("/m.py":5:10)

//--- after.mlir
#map = affine_map<(d0) -> (d0)>
module {
  func.func private @helper(tensor<8xf32>) -> tensor<8xf32>
  func.func @f(%arg0: tensor<8xf32> loc("/m.py":3:1)) -> tensor<8xf32> {
    %0 = cuvil.exp %arg0 : tensor<8xf32> loc("/m.py":4:10)
    %1 = tensor.empty() : tensor<8xf32> loc("/m.py":5:10)
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%1 : tensor<8xf32>) {
    ^bb0(%in: f32 loc("/m.py":5:10), %out: f32 loc("/m.py":5:10)):
      %3 = arith.negf %in : f32 loc("/m.py":5:10)
      linalg.yield %3 : f32 loc("/m.py":5:10)
    } -> tensor<8xf32> loc("/m.py":5:10)
    return %2 : tensor<8xf32> loc("/m.py":3:1)
  } loc("/m.py":3:1)
  func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// The untouched exp keeps its identity; the lowered neg is new.
// CHECK-DAG: n1 [label="cuvil.exp\ntensor<8xf32>", {{.*}} loc="/m.py:4", changed=false
// CHECK-DAG: n2 [label="tensor.empty{{.*}} changed=true, {{.*}} color="#d62728", penwidth=2.5];
// CHECK-DAG: n3 [label="linalg.generic{{.*}} changed=true
// CHECK-DAG: n4 [label="arith.negf{{.*}} irline=9, loc="/m.py:5", changed=true
// CHECK-NOT: cuvil.neg

// COLLAPSE-NOT: subgraph
// COLLAPSE: n3 [label="linalg.generic (2 ops)\ntensor<8xf32>", op="linalg.generic", {{.*}} irline=7
// COLLAPSE-NOT: arith.negf
// COLLAPSE: n1 -> n3 [tooltip="%0"];
// COLLAPSE: n3 -> n4 [tooltip="%2"];

// LIST: f
// LIST-NEXT: g
// LIST-NOT: helper

// MISSING: after.mlir:line 1: no function @missing with a body in the IR
