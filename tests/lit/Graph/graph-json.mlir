// Graph JSON crosses from cuvil-graph to the Workbench: written and read
// back it draws the same DOT; a malformed or hostile document is an error
// naming the field, never a graph with dangling indices.
// RUN: split-file %s %t
// RUN: %cuvil_graph --before=%t/before.mlir %t/after.mlir > %t/direct.dot
// RUN: %cuvil_graph --json --before=%t/before.mlir %t/after.mlir > %t/graph.json
// RUN: %cuvil_graph --from-json %t/graph.json > %t/roundtrip.dot
// RUN: diff %t/direct.dot %t/roundtrip.dot
// RUN: FileCheck %s --check-prefix=COUNTS < %t/graph.json
// RUN: %cuvil_graph --from-json %t/valid.json | FileCheck %s --check-prefix=VALID
// RUN: %not %cuvil_graph --from-json %t/edge-out-of-range.json 2>&1 | FileCheck %s --check-prefix=BAD0
// RUN: %not %cuvil_graph --from-json %t/cluster-cycle.json 2>&1 | FileCheck %s --check-prefix=BAD1
// RUN: %not %cuvil_graph --from-json %t/node-cluster.json 2>&1 | FileCheck %s --check-prefix=BAD2
// RUN: %not %cuvil_graph --from-json %t/unknown-kind.json 2>&1 | FileCheck %s --check-prefix=BAD3
// RUN: %not %cuvil_graph --from-json %t/node-id.json 2>&1 | FileCheck %s --check-prefix=BAD4
// RUN: %not %cuvil_graph --from-json %t/missing-field.json 2>&1 | FileCheck %s --check-prefix=BAD5
// RUN: %not %cuvil_graph --from-json %t/control-char.json 2>&1 | FileCheck %s --check-prefix=BAD6
// RUN: %not %cuvil_graph --from-json %t/negative.json 2>&1 | FileCheck %s --check-prefix=BAD7
// RUN: %not %cuvil_graph --from-json %t/wrong-type.json 2>&1 | FileCheck %s --check-prefix=BAD8
// RUN: %not %cuvil_graph --from-json %t/other-format.json 2>&1 | FileCheck %s --check-prefix=BAD9
// RUN: %not %cuvil_graph --from-json %t/not-json.json 2>&1 | FileCheck %s --check-prefix=BAD10

// The lowered neg (empty, generic, negf, yield) and the return now fed by it
// are changed; cuvil.neg and the old return are gone.
// COUNTS: "changedCount":5,{{.*}}"removedCount":2

// VALID: digraph "f" {
// VALID: n0 [label="arith.addf\nf32", op="arith.addf", kind="elementwise", irline=3, loc="/m.py:4"
// VALID: n0 -> n1 [tooltip="%0"];

// BAD0: edge-out-of-range.json: graph JSON: edges{{\[}}0].to 5 is outside {{\[}}0, 1]
// BAD1: cluster-cycle.json: graph JSON: clusters{{\[}}0].parent 0 is outside {{\[}}-1, -1]
// BAD2: node-cluster.json: graph JSON: nodes{{\[}}0].cluster 3 is outside {{\[}}-1, -1]
// BAD3: unknown-kind.json: graph JSON: nodes{{\[}}0].kind "teleport" is not an op kind
// BAD4: node-id.json: graph JSON: nodes{{\[}}0].id 1 is outside {{\[}}0, 0]
// BAD5: missing-field.json: graph JSON: edges is missing
// BAD6: control-char.json: graph JSON: nodes{{\[}}0].op contains a control character
// BAD7: negative.json: graph JSON: nodes{{\[}}0].collapsedOps -3 is outside {{\[}}0, 2147483647]
// BAD8: wrong-type.json: graph JSON: nodes{{\[}}0].irLine is not an integer
// BAD9: other-format.json: graph JSON: format is "something-else", not "cuvil-ir-graph"
// BAD10: not-json.json: graph JSON: the document is not valid JSON ({{.*}}unexpected end of input

//--- before.mlir
#map = affine_map<(d0) -> (d0)>
module {
  func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = cuvil.exp %arg0 : tensor<8xf32> loc("/m.py":4:10)
    %1 = cuvil.neg %0 : tensor<8xf32> loc("/m.py":5:10)
    return %1 : tensor<8xf32> loc("/m.py":3:1)
  }
}

//--- after.mlir
#map = affine_map<(d0) -> (d0)>
module {
  func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = cuvil.exp %arg0 : tensor<8xf32> loc("/m.py":4:10)
    %1 = tensor.empty() : tensor<8xf32> loc("/m.py":5:10)
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%1 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.negf %in : f32 loc("/m.py":5:10)
      linalg.yield %3 : f32 loc("/m.py":5:10)
    } -> tensor<8xf32> loc("node_3"("/m.py":5:10))
    return %2 : tensor<8xf32> loc("/m.py":3:1)
  }
}

//--- not-json.json
{"format": "cuvil-ir-graph", "nodes": [

//--- valid.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- edge-out-of-range.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 5, "value": "%0"}], "clusters": []}

//--- cluster-cycle.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": [{"id": 0, "parent": 0, "owner": 0, "label": "scf.for"}]}

//--- node-cluster.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": 3, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- unknown-kind.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "teleport", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- node-id.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- missing-field.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "clusters": []}

//--- control-char.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "a\u0001b", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- negative.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": -3, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- wrong-type.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": "3", "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}

//--- other-format.json
{"format": "something-else", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [{"id": 0, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}, {"id": 1, "op": "arith.addf", "kind": "elementwise", "results": "%0", "type": "f32", "irLine": 3, "file": "/m.py", "line": 4, "column": 5, "locName": "", "cluster": -1, "ownsCluster": -1, "collapsedOps": 0, "changed": false, "fingerprint": "ab"}], "edges": [{"from": 0, "to": 1, "value": "%0"}], "clusters": []}
