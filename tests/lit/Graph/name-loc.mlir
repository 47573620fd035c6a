// Structured locations: an imported model's node name (NameLoc, alone, fused
// or around a file location) is kept as the node's locname, next to the
// file:line found through NameLoc, FusedLoc and CallSiteLoc (callee first).
// A NameLoc nested around another (an FX node in its nn.Module path) is named
// after both, scope first: "stem.0/convolution"; a long one keeps its start
// and end in the box's label.
// Ops written without a location have none, not one in the IR text.
// RUN: %cuvil_graph %s | FileCheck %s
// RUN: %cuvil_graph --json %s | FileCheck %s --check-prefix=JSON

module {
  func.func @model(%x: tensor<4xf32> loc("input_0")) -> tensor<4xf32> {
    %0 = cuvil.relu %x : tensor<4xf32> loc(#node7)
    %1 = cuvil.exp %0 : tensor<4xf32> loc(fused["node_8", "/model.onnx":12:3])
    %2 = cuvil.neg %1 : tensor<4xf32> loc(callsite("/lib.py":5:9 at "/user.py":20:1))
    %3 = cuvil.tanh %2 : tensor<4xf32>
    %4 = cuvil.relu %3 : tensor<4xf32> loc("convolution"("stem.0"("/m.py":8:1)))
    %5 = cuvil.exp %4 : tensor<4xf32> loc("linear_3"("encoder.layers.0.attention.self"("/m.py":9:1)))
    return %5 : tensor<4xf32> loc(#node7)
  }
}
#node7 = loc("node_7"("/model.onnx":7:1))

// CHECK-DAG: n0 [label="%x\ninput_0\ntensor<4xf32>", op="%x", kind="argument", irline=12, loc="", changed=false, locname="input_0"
// CHECK-DAG: n1 [label="cuvil.relu\nnode_7\ntensor<4xf32>", op="cuvil.relu", {{.*}} loc="/model.onnx:7", changed=false, locname="node_7"
// CHECK-DAG: n2 [label="cuvil.exp\nnode_8\ntensor<4xf32>", {{.*}} loc="/model.onnx:12", changed=false, locname="node_8"
// CHECK-DAG: n3 [label="cuvil.neg\ntensor<4xf32>", {{.*}} loc="/lib.py:5", changed=false, locname=""
// CHECK-DAG: n4 [label="cuvil.tanh\ntensor<4xf32>", {{.*}} irline=16, loc="", changed=false, locname=""
// CHECK-DAG: n5 [label="cuvil.relu\nstem.0/convolution\ntensor<4xf32>", {{.*}} loc="/m.py:8", changed=false, locname="stem.0/convolution"
// CHECK-DAG: n6 [label="cuvil.exp\nencoder.layers.0...ion.self/linear_3\ntensor<4xf32>", {{.*}} locname="encoder.layers.0.attention.self/linear_3"

// JSON: "column":1,"file":"/model.onnx",{{.*}}"line":7,"locName":"node_7","op":"cuvil.relu"
