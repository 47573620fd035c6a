// The kernel table of a snapshot: every launch's grid and block (constants
// folded, "?" where a dynamic shape decides), shared memory per block (the
// kernel's workgroup buffers, or its address space 3 globals once lowered to
// LLVM; unknown when the kernel is already a binary) and the fused ops
// cuvil-tag-kernels named for its location. It crosses to the Workbench in
// the graph JSON, read back with every field checked.
// RUN: split-file %s %t
// RUN: %cuvil_graph --launches %t/launches.mlir | FileCheck %s
// RUN: %cuvil_graph --json %t/launches.mlir > %t/graph.json
// RUN: %cuvil_graph --from-json --launches %t/graph.json | FileCheck %s
// RUN: %not %cuvil_graph --from-json %t/short-grid.json 2>&1 | FileCheck %s --check-prefix=BAD0
// RUN: %not %cuvil_graph --from-json %t/negative-block.json 2>&1 | FileCheck %s --check-prefix=BAD1
// RUN: %cuvil_graph --from-json %t/no-launches.json | FileCheck %s --check-prefix=OLD

// CHECK: line 12: gpu.launch grid (4, 1, 1) block (128, 1, 1) shared 1536 B + dynamic 0 B: linalg.generic(addf) at /m.py:7:12
// CHECK-NEXT: line 19: k::tiled grid (?, 2, 1) block (16, 16, 1) shared 8512 B + dynamic 256 B: linalg.fill + linalg.matmul at /m.py:9:5
// CHECK-NEXT: line 20: k::lowered grid (8, 1, 1) block (32, 1, 1) shared 4096 B + dynamic 0 B at /m.py:11:5
// CHECK-NEXT: line 21: bin::done grid (1, 1, 1) block (32, 1, 1) shared ? + dynamic 0 B{{$}}
// CHECK-EMPTY:

// BAD0: short-grid.json: graph JSON: launches{{\[}}0].grid is not an array of three integers
// BAD1: negative-block.json: graph JSON: launches{{\[}}0].block{{\[}}1] -7 is outside {{\[}}-1, 2147483647]
// OLD: digraph "f" {

//--- launches.mlir
module attributes {gpu.container_module} {
  func.func @host(%a: memref<512xf32>, %n: index) attributes {cuvil.kernel_names = [[loc("/m.py":7:12), "linalg.generic(addf)"], [loc("/m.py":9:5), "linalg.fill + linalg.matmul"]]} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : i32
    %blocks = arith.divui %n, %c16 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) workgroup(%tile : memref<128xf32, #gpu.address_space<workgroup>>, %halo : memref<2x64xf64, #gpu.address_space<workgroup>>) {
      %i = arith.addi %bx, %tx : index
      %v = memref.load %a[%i] : memref<512xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%i] : memref<512xf32>
      gpu.terminator
    } loc("/m.py":7:12)
    gpu.launch_func @k::@tiled blocks in (%blocks, %c2, %c1) threads in (%c16, %c16, %c1) dynamic_shared_memory_size %c256 args(%a : memref<512xf32>) loc("/m.py":9:5)
    gpu.launch_func @k::@lowered blocks in (%c8, %c1, %c1) threads in (%c32, %c1, %c1) loc("/m.py":11:5)
    gpu.launch_func @bin::@done blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    return
  }
  gpu.module @k {
    gpu.func @tiled(%arg0: memref<512xf32>) workgroup(%a : memref<64x17xf32, #gpu.address_space<workgroup>>, %b : memref<16x65xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
    llvm.mlir.global internal @__wg_lowered_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16 x array<32 x f64>>
    llvm.mlir.global internal @unused() {addr_space = 3 : i32} : !llvm.array<99 x f32>
    llvm.func @lowered() attributes {gpu.kernel, nvvm.kernel} {
      %0 = llvm.mlir.addressof @__wg_lowered_0 : !llvm.ptr<3>
      %1 = llvm.mlir.addressof @__wg_lowered_0 : !llvm.ptr<3>
      llvm.return
    }
  }
  gpu.binary @bin [#gpu.object<#nvvm.target, "BLOB">]
}

//--- short-grid.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [], "edges": [], "clusters": [], "launches": [{"irLine": 3, "kernel": "k::f", "ops": "", "file": "", "line": 0, "column": 0, "grid": [1, 1], "block": [32, 1, 1], "staticSharedBytes": 0, "dynamicSharedBytes": 0}]}

//--- negative-block.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [], "edges": [], "clusters": [], "launches": [{"irLine": 3, "kernel": "k::f", "ops": "", "file": "", "line": 0, "column": 0, "grid": [1, 1, 1], "block": [32, -7, 1], "staticSharedBytes": 0, "dynamicSharedBytes": 0}]}

//--- no-launches.json
{"format": "cuvil-ir-graph", "version": 1, "function": "f", "functionLine": 2, "changedCount": 0, "removedCount": 0, "nodes": [], "edges": [], "clusters": []}
