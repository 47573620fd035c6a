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

// f32 erf: x P(x^2) / Q(x^2) on x clamped to [-3.92, 3.92], P of degree 6
// and Q of degree 4 in Horner form, the quotient clamped to [-1, 1] (NaN
// passes through maximumf/minimumf); no select per coefficient.
// CHECK-LABEL: func.func @erf_rational
// CHECK-DAG: %[[BOUND:.*]] = arith.constant dense<3.920000e+00> : vector<16xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-NOT: arith.select
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[X:.*]] = arith.minimumf %{{.*}}, %[[BOUND]] : vector<16xf32>
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %[[X]] : vector<16xf32>
// CHECK-COUNT-6: math.fma %{{.*}}, %[[T]], %{{.*}} : vector<16xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-4: math.fma %{{.*}}, %[[T]], %{{.*}} : vector<16xf32>
// CHECK: %[[R:.*]] = arith.divf %[[P]], %{{.*}} : vector<16xf32>
// CHECK: arith.maximumf %[[R]], %{{.*}} : vector<16xf32>
// CHECK: arith.minimumf %{{.*}}, %[[ONE]] : vector<16xf32>
// CHECK-NOT: arith.select
// CHECK: return
func.func @erf_rational(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.erf %x : vector<16xf32>
  return %r : vector<16xf32>
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

// -----

// Subnormals: log rescales a positive argument below the smallest normal by
// 2^24 and subtracts 24 ln 2; exp with an argument below -87 (a subnormal
// result) adds 24 ln 2 and scales the result by 2^-24. No rescaled op is left
// unapproximated, and the marker attribute is gone with the op.
// CHECK-LABEL: func.func @subnormal_rescaling
// CHECK-DAG: arith.constant 1.17549435E-38 : f32
// CHECK-DAG: arith.constant 0x4B800000 : f32
// CHECK-DAG: arith.constant 16.6355324 : f32
// CHECK-DAG: arith.constant -8.700000e+01 : f32
// CHECK-DAG: arith.constant 5.96046448E-8 : f32
// CHECK: return
// GONE-LABEL: func.func @subnormal_rescaling
// GONE-NOT: math.{{exp|log}}
// GONE-NOT: cuvil.rescaled
// GONE: return
func.func @subnormal_rescaling(%x: f32) -> (f32, f32) {
  %l = math.log %x : f32
  %e = math.exp %x : f32
  return %l, %e : f32, f32
}
