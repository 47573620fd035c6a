// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-approximate-math))" --split-input-file | FileCheck %s

// f32 exp and erf on vectors become arithmetic: no math op, no call.
// CHECK-LABEL: func.func @vector_f32
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-DAG: arith.mulf {{.*}} : vector<16xf32>
// CHECK-DAG: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: return
func.func @vector_f32(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %e = math.exp %x : vector<16xf32>
  %r = math.erf %x : vector<16xf32>
  return %e, %r : vector<16xf32>, vector<16xf32>
}

// -----

// Must not fire on f64: there is no f64 approximation, libm keeps it.
// CHECK-LABEL: func.func @scalar_f64
// CHECK: math.exp %{{.*}} : f64
// CHECK-NEXT: return
func.func @scalar_f64(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}
