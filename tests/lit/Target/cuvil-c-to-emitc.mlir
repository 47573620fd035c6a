// RUN: %cuvil_opt %s --split-input-file --cuvil-c-to-emitc --verify-diagnostics | FileCheck %s

// memref arguments become arrays, loads subscripts, math ops <math.h> calls
// (f suffix for f32), rsqrt 1/sqrt; the function becomes static.
// CHECK-LABEL: emitc.func @kernel(
// CHECK-SAME: %[[X:.*]]: !emitc.array<4xf32>, %[[Y:.*]]: !emitc.array<4xf64>, %[[OUT:.*]]: !emitc.array<4xf32>)
// CHECK-SAME: specifiers = ["static"]
// CHECK: emitc.for
// CHECK: emitc.subscript %[[X]]
// CHECK: emitc.call_opaque "expf"
// CHECK: emitc.call_opaque "sqrtf"
// CHECK: emitc.div
// CHECK: emitc.call_opaque "tanh"
// CHECK: emitc.call_opaque "fmodf"
// CHECK: emitc.cast {{.*}} : f64 to f32
func.func @kernel(%x: memref<4xf32>, %y: memref<4xf64>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %e = math.exp %v : f32
    %r = math.rsqrt %e : f32
    %w = memref.load %y[%i] : memref<4xf64>
    %t = math.tanh %w : f64
    %m = arith.remf %r, %e : f32
    %n = arith.truncf %t : f64 to f32
    %s = arith.addf %m, %n : f32
    memref.store %s, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// A scalar buffer is an array of one element; signed index arithmetic and
// comparisons go through ptrdiff_t (a negative gather index).
// CHECK-LABEL: emitc.func @scalar(
// CHECK-SAME: !emitc.array<1xf32>, %{{.*}}: !emitc.array<8xf32>, %{{.*}}: !emitc.array<1xf32>, %{{.*}}: index)
// CHECK: emitc.cast {{.*}} : index to !emitc.ptrdiff_t
// CHECK: emitc.cmp lt
// CHECK: emitc.rem {{.*}} : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> !emitc.ptrdiff_t
// CHECK: emitc.subscript {{.*}} : (!emitc.array<1xf32>, index) -> f32
func.func @scalar(%s: memref<f32>, %x: memref<8xf32>, %out: memref<f32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %neg = arith.cmpi slt, %i, %c0 : index
  %wrapped = arith.addi %i, %c8 : index
  %j = arith.select %neg, %wrapped, %i : index
  %k = arith.remsi %j, %c8 : index
  %a = memref.load %s[] : memref<f32>
  %b = memref.load %x[%k] : memref<8xf32>
  %c = arith.mulf %a, %b : f32
  memref.store %c, %out[] : memref<f32>
  return
}

// -----

func.func @unsupported(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  // expected-error @+1 {{the c target cannot express 'vector.transfer_read' in C; fix: use target='cpu' for this model}}
  %v = vector.transfer_read %x[%c0], %pad {in_bounds = [true]} : memref<4xf32>, vector<4xf32>
  return
}
