// A location whose line or column does not fit the graph's int (MLIR keeps
// them unsigned) has an unknown line (0), not a negative one: the JSON the
// Workbench reads accepts lines in [0, INT_MAX], so a wrapped line made the
// whole graph unreadable. The op keeps its file; other ops keep their lines.
// RUN: %cuvil_graph --json %s > %t.json
// RUN: FileCheck %s < %t.json
// RUN: %cuvil_graph --from-json %t.json | FileCheck %s --check-prefix=DOT

func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32 loc("/m.py":2147483648:1)
  %1 = arith.mulf %0, %a : f32 loc("/m.py":7:4294967295)
  %2 = arith.subf %1, %a : f32 loc("/m.py":9:2)
  return %2 : f32
}

// CHECK: "column":1,"file":"/m.py",{{[^}]*}}"line":0,{{[^}]*}}"op":"arith.addf"
// CHECK: "column":0,"file":"/m.py",{{[^}]*}}"line":7,{{[^}]*}}"op":"arith.mulf"
// CHECK: "column":2,"file":"/m.py",{{[^}]*}}"line":9,{{[^}]*}}"op":"arith.subf"
// CHECK-NOT: "line":-
// DOT: op="arith.addf", {{.*}} loc=""
// DOT: op="arith.mulf", {{.*}} loc="/m.py:7"
// DOT: op="arith.subf", {{.*}} loc="/m.py:9"
