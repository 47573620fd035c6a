// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-instrument-kernels))" --split-input-file | FileCheck %s

// Two loops from one line are one kernel; the copy is another. Each kernel
// is bracketed by null-guarded hook calls (phase 0 before, 1 after), the
// hook table is a new last argument, and kernels are named from
// cuvil.kernel_names (the copy, absent there, by its op name).
// CHECK-LABEL: func.func @entry
// CHECK-SAME: %[[OUT:.*]]: memref<4xf32>, %[[HOOKS:.*]]: !llvm.ptr)
// CHECK-SAME: cuvil.kernels = {{\[}}["linalg.generic(negf)", #[[L:loc[0-9]*]]], ["memref.copy", #{{loc[0-9]*}}]]
// CHECK-NOT: cuvil.kernel_names
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[ON:.*]] = llvm.icmp "ne" %[[HOOKS]], %[[NULL]]
// CHECK: scf.if %[[ON]] {
// CHECK:   %[[FN:.*]] = llvm.load %[[HOOKS]] : !llvm.ptr -> !llvm.ptr
// CHECK:   %[[SLOT:.*]] = llvm.getelementptr %[[HOOKS]][1]
// CHECK:   %[[CTX:.*]] = llvm.load %[[SLOT]]
// CHECK:   %[[K0:.*]] = llvm.mlir.constant(0 : i32)
// CHECK:   %[[P0:.*]] = llvm.mlir.constant(0 : i32)
// CHECK:   llvm.call %[[FN]](%[[CTX]], %[[K0]], %[[P0]]) : !llvm.ptr, (!llvm.ptr, i32, i32) -> ()
// CHECK: scf.for
// CHECK: scf.for
// CHECK: llvm.mlir.constant(0 : i32)
// CHECK: llvm.mlir.constant(1 : i32)
// CHECK: llvm.call
// CHECK: llvm.mlir.constant(1 : i32)
// CHECK: llvm.mlir.constant(0 : i32)
// CHECK: llvm.call
// CHECK: memref.copy
// CHECK: llvm.mlir.constant(1 : i32)
// CHECK: llvm.mlir.constant(1 : i32)
// CHECK: llvm.call
// CHECK: return
func.func @entry(%a: memref<4xf32>, %out: memref<4xf32>) attributes {llvm.emit_c_interface, cuvil.kernel_names = [[loc("m.py":2:5), "linalg.generic(negf)"]]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %tmp = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %n = arith.negf %v : f32
    memref.store %n, %tmp[%i] : memref<4xf32>
  } loc("m.py":2:5)
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %tmp[%i] : memref<4xf32>
    memref.store %v, %tmp[%i] : memref<4xf32>
  } loc("m.py":2:5)
  memref.copy %tmp, %out : memref<4xf32> to memref<4xf32> loc("m.py":1:1)
  memref.dealloc %tmp : memref<4xf32>
  return
}

// -----

// Must not fire on functions that are not entry points.
// CHECK-LABEL: func.func @helper
// CHECK-SAME: (%{{.*}}: memref<4xf32>)
// CHECK-NOT: llvm.call
// CHECK-NOT: cuvil.kernels
func.func @helper(%a: memref<4xf32>) {
  memref.copy %a, %a : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Not an entry point either, but the kernel names are dropped.
// CHECK-LABEL: func.func @tagged_helper
// CHECK-NOT: cuvil.kernel_names
// CHECK-NOT: llvm.call
func.func @tagged_helper(%a: memref<4xf32>) attributes {cuvil.kernel_names = [[loc("m.py":2:5), "linalg.generic(negf)"]]} {
  return
}
