// RUN: %cuvil_opt %s --cuvil-expand-bf16-conversions | FileCheck %s

// float32 to bfloat16 rounds to nearest even with integer ops (no call of
// __truncsfbf2, which LLVM emits without AVX512-BF16): the rounding bias
// 0x7FFF plus the kept mantissa's lowest bit, a shift by 16, NaNs as 0x7FC0.
// CHECK-LABEL: func.func @truncate
// CHECK-NOT: arith.truncf
// CHECK-DAG: arith.constant dense<32704> : vector<16xi16>
// CHECK-DAG: arith.constant dense<32767> : vector<16xi32>
// CHECK-DAG: arith.constant dense<16> : vector<16xi32>
// CHECK-DAG: arith.cmpf une
// CHECK: arith.shrui
// CHECK: arith.trunci {{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: arith.select
// CHECK: arith.bitcast {{.*}} : vector<16xi16> to vector<16xbf16>
func.func @truncate(%x: vector<16xf32>) -> vector<16xbf16> {
  %h = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %h : vector<16xbf16>
}

// bfloat16 to float32: the 16 bits shifted into the high half.
// CHECK-LABEL: func.func @extend
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
func.func @extend(%h: bf16) -> f32 {
  %x = arith.extf %h : bf16 to f32
  return %x : f32
}
