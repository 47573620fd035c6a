// RUN: %cuvil_opt %s --split-input-file --cuvil-wasm-to-llvm --reconcile-unrealized-casts --verify-diagnostics | FileCheck %s

// One conversion with a 32-bit index: memref arguments are bare pointers,
// vector loads and stores address with i32, no i64 descriptor is left.
// CHECK-LABEL: llvm.func @scale(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.fmul
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK-NOT: builtin.unrealized_conversion_cast
func.func @scale(%x: memref<16x8xf32>, %out: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  cf.br ^loop(%c0 : index)
^loop(%i: index):
  %more = arith.cmpi slt, %i, %c16 : index
  cf.cond_br %more, ^body, ^done
^body:
  %v = vector.load %x[%i, %c4] : memref<16x8xf32>, vector<4xf32>
  %w = arith.mulf %v, %v : vector<4xf32>
  vector.store %w, %out[%i, %c4] : memref<16x8xf32>, vector<4xf32>
  %next = arith.addi %i, %c1 : index
  cf.br ^loop(%next : index)
^done:
  return
}

// -----

// Contractions and transposes go through the vector lowerings first.
// CHECK-LABEL: llvm.func @outer
// CHECK-NOT: vector.
func.func @outer(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4x4xf32> {
  %t = vector.outerproduct %a, %b : vector<4xf32>, vector<4xf32>
  %u = vector.transpose %t, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
  return %u : vector<4x4xf32>
}

// -----

// expected-error @+1 {{the wasm target compiles static shapes only, and argument 0 of @dynamic has type 'memref<?xf32>'}}
func.func @dynamic(%x: memref<?xf32>) {
  return
}

// -----

func.func @unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the wasm target cannot lower 'tensor.empty' to WebAssembly}}
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// A transfer that may run past the end of its buffer (a 4-lane tail of 19
// elements) becomes a masked store.
// CHECK-LABEL: llvm.func @tail
// CHECK: llvm.intr.masked.store
// CHECK-NOT: vector.transfer_write
func.func @tail(%v: vector<4xf32>, %out: memref<19xf32>, %i: index) {
  vector.transfer_write %v, %out[%i] : vector<4xf32>, memref<19xf32>
  return
}
