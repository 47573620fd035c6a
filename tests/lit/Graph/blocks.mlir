// A lowered function with several blocks: blocks are nodes that branches
// lead to; collapsed, each block stands for its ops and big LLVM-level
// graphs shrink to their control-flow graph.
// RUN: %cuvil_graph %s | FileCheck %s
// RUN: %cuvil_graph --collapse %s | FileCheck %s --check-prefix=COLLAPSE
// RUN: %cuvil_graph --collapse %s | FileCheck %s --check-prefix=CFG

module {
  llvm.func @free(!llvm.ptr)
  llvm.func @loop(%arg0: i64 loc("/m.py":3:1)) -> i64 {
    %0 = llvm.mlir.constant(0 : index) : i64 loc("/m.py":4:5)
    %1 = llvm.mlir.constant(1 : index) : i64 loc("/m.py":4:5)
    llvm.br ^bb1(%0 : i64) loc("/m.py":4:5)
  ^bb1(%2: i64 loc("/m.py":4:5)):  // 2 preds: ^bb0, ^bb2
    %3 = llvm.icmp "slt" %2, %arg0 : i64 loc("/m.py":4:5)
    llvm.cond_br %3, ^bb2, ^bb3 loc("/m.py":4:5)
  ^bb2:  // pred: ^bb1
    %4 = llvm.add %2, %1 : i64 loc("/m.py":5:9)
    llvm.br ^bb1(%4 : i64) loc("/m.py":5:9)
  ^bb3:  // pred: ^bb1
    llvm.return %2 : i64 loc("/m.py":6:5)
  } loc("/m.py":3:1)
}

// CHECK: digraph "loop" {
// CHECK-DAG: n4 [label="^bb1", op="^bb1", kind="block", irline=14
// CHECK-DAG: n5 [label="llvm.icmp\ni1", op="llvm.icmp", kind="elementwise"
// CHECK-DAG: n8 [label="llvm.add\ni64", op="llvm.add", kind="elementwise", irline=18, loc="/m.py:5"
// CHECK: n0 -> n5 [tooltip="%arg0"];
// CHECK: n8 -> n9 [tooltip="%4"];
// CHECK: n3 -> n4 [tooltip="^bb1"];
// CHECK: n6 -> n7 [tooltip="^bb2"];
// CHECK: n9 -> n4 [tooltip="^bb1"];

// COLLAPSE-NOT: llvm.add
// COLLAPSE-NOT: %arg0
// COLLAPSE: n0 [label="^entry (3 ops)", op="^entry", kind="block", irline=10
// COLLAPSE: n1 [label="^bb1 (2 ops)", op="^bb1", kind="block", irline=14
// COLLAPSE: n2 [label="^bb2 (2 ops)"
// COLLAPSE: n3 [label="^bb3 (1 op)"
// COLLAPSE-DAG: n0 -> n1 [tooltip="^bb1"];
// COLLAPSE-DAG: n1 -> n2 [tooltip="^bb2"];
// COLLAPSE-DAG: n2 -> n1 [tooltip="^bb1"];
// COLLAPSE-DAG: n1 -> n3 [tooltip="^bb3"];

// Collapsed, blocks are linked by branches only, not by the values they
// share; the function's arguments belong to the entry block.
// CFG: digraph "loop" {
// CFG-NOT: tooltip="%
