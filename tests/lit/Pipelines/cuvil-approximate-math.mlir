// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-approximate-math))" --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-approximate-math))" --split-input-file | FileCheck %s --check-prefix=GONE

// f32 exp, erf, tanh and log on vectors become arithmetic: no math op, no
// call. GONE checks the whole body, from the label to the return, holds none
// of them (a CHECK-NOT before a CHECK-DAG group would only look up to the
// group's first match); CHECK looks for each approximation's own signature.
// GONE-LABEL: func.func @vector_f32
// GONE-NOT: math.{{exp|erf|tanh|log}}
// GONE-NOT: call
// GONE: return
// CHECK-LABEL: func.func @vector_f32
// exp: the result's exponent is built from an integer shift and a bitcast.
// CHECK-DAG: arith.shli {{.*}} : vector<16xi32>
// CHECK-DAG: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// log: the argument's exponent and mantissa are taken apart as integers.
// CHECK-DAG: arith.shrui {{.*}} : vector<16xi32>
// CHECK-DAG: arith.andi {{.*}} : vector<16xi32>
// tanh: a rational polynomial in |x|.
// CHECK-DAG: math.absf {{.*}} : vector<16xf32>
// erf (and tanh): polynomials of fused multiply-adds and a division.
// CHECK-DAG: math.fma {{.*}} : vector<16xf32>
// CHECK-DAG: arith.divf {{.*}} : vector<16xf32>
// CHECK: return
func.func @vector_f32(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %e = math.exp %x : vector<16xf32>
  %r = math.erf %x : vector<16xf32>
  %t = math.tanh %x : vector<16xf32>
  %l = math.log %x : vector<16xf32>
  return %e, %r, %t, %l : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
}

// -----

// Must not fire on f64: there is no f64 approximation, libm keeps it.
// CHECK-LABEL: func.func @scalar_f64
// CHECK: math.exp %{{.*}} : f64
// CHECK-NEXT: return
// GONE-LABEL: func.func @scalar_f64
func.func @scalar_f64(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}
