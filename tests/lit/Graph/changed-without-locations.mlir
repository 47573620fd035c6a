// IR printed without locations: the parser gives each op a location in the
// text, which must not count as the op's identity, or every op below an
// inserted line would look changed. Only the inserted op is.
// RUN: split-file %s %t
// RUN: %cuvil_graph --before=%t/before.mlir %t/after.mlir | FileCheck %s

//--- before.mlir
func.func @f(%arg0: f32) -> f32 {
  %0 = arith.mulf %arg0, %arg0 : f32
  %1 = math.exp %0 : f32
  return %1 : f32
}

//--- after.mlir
func.func @f(%arg0: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %0 = arith.mulf %arg0, %arg0 : f32
  %1 = math.exp %0 : f32
  return %1 : f32
}

// CHECK-DAG: op="arith.constant", {{.*}} changed=true
// CHECK-DAG: op="arith.mulf", {{.*}} changed=false
// CHECK-DAG: op="math.exp", {{.*}} changed=false
// CHECK-DAG: op="func.return", {{.*}} changed=false
