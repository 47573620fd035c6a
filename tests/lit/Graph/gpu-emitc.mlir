// Functions of any dialect are graphed: a gpu.func inside a gpu.module (named
// "k::f"), an emitc.func and the host function launching the kernel;
// declarations (llvm.func without a body) are not listed.
// RUN: %cuvil_graph --list-functions %s | FileCheck %s --check-prefix=LIST
// RUN: %cuvil_graph --function=k::f %s | FileCheck %s --check-prefix=KERNEL
// RUN: %cuvil_graph --function=f %s | FileCheck %s --check-prefix=KERNEL
// RUN: %cuvil_graph --function=add --json %s | FileCheck %s --check-prefix=EMITC
// RUN: %cuvil_graph --function=host %s | FileCheck %s --check-prefix=HOST

module attributes {gpu.container_module} {
  llvm.func @decl(i32)
  gpu.module @k {
    gpu.func @f(%arg0: memref<8xf32>, %arg1: memref<8xf32>) kernel {
      %tid = gpu.thread_id x
      %0 = memref.load %arg0[%tid] : memref<8xf32> loc("/k.py":4:9)
      %1 = math.exp %0 : f32 loc("/k.py":5:9)
      memref.store %1, %arg1[%tid] : memref<8xf32> loc("/k.py":6:5)
      gpu.return
    }
  }
  emitc.func @add(%arg0: i32, %arg1: i32) -> i32 {
    %0 = emitc.add %arg0, %arg1 : (i32, i32) -> i32
    emitc.return %0 : i32
  }
  func.func @host(%a: memref<8xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>, %b : memref<8xf32>)
    return
  }
}

// LIST: k::f
// LIST-NEXT: add
// LIST-NEXT: host
// LIST-NOT: decl

// KERNEL: digraph "k::f" {
// KERNEL-DAG: n0 [label="%arg0\nmemref<8xf32>", op="%arg0", kind="argument", irline=13, loc=""
// KERNEL-DAG: n2 [label="gpu.thread_id\nindex", op="gpu.thread_id", kind="shape", irline=14
// KERNEL-DAG: n3 [label="memref.load\nf32", op="memref.load", kind="memory", irline=15, loc="/k.py:4"
// KERNEL-DAG: n4 [label="math.exp\nf32", op="math.exp", kind="elementwise", irline=16, loc="/k.py:5"
// KERNEL-DAG: n5 [label="memref.store{{.*}}, kind="memory", irline=17
// KERNEL-DAG: n6 [label="gpu.return", op="gpu.return", kind="control", irline=18, loc=""
// KERNEL: n0 -> n3 [tooltip="%arg0"];
// KERNEL: n2 -> n3 [tooltip="%tid"];
// KERNEL: n3 -> n4 [tooltip="%0"];
// KERNEL: n4 -> n5 [tooltip="%1"];

// EMITC: "format":"cuvil-ir-graph"
// EMITC-SAME: "function":"add","functionLine":21
// EMITC-SAME: "irLine":22,"kind":"elementwise","line":0,"locName":"","op":"emitc.add"
// EMITC-SAME: "irLine":23,"kind":"control",{{.*}}"op":"emitc.return"

// HOST: digraph "host" {
// HOST: n4 [label="gpu.launch_func{{.*}}", op="gpu.launch_func", kind="call", irline=28
// HOST-DAG: n0 -> n4 [tooltip="%a"];
// HOST-DAG: n3 -> n4 [tooltip="%c8"];
