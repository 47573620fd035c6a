// RUN: %cuvil_opt %s | %cuvil_opt | FileCheck %s
// RUN: %cuvil_opt %s --mlir-print-op-generic | %cuvil_opt | FileCheck %s

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  // CHECK: cuvil.add %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %0 = cuvil.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: cuvil.sub
  %1 = cuvil.sub %0, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: cuvil.mul
  %2 = cuvil.mul %1, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: cuvil.div
  %3 = cuvil.div %2, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: cuvil.pow
  %4 = cuvil.pow %3, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: cuvil.max
  %5 = cuvil.max %4, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: cuvil.min
  %6 = cuvil.min %5, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: %[[C:.*]] = cuvil.compare lt, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %7 = cuvil.compare lt, %6, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  // CHECK: cuvil.where %[[C]]
  %8 = cuvil.where %7, %6, %b : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %8 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // CHECK: cuvil.neg %{{.*}} : tensor<2x5xf32>
  %0 = cuvil.neg %a : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.abs
  %1 = cuvil.abs %0 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.exp
  %2 = cuvil.exp %1 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.log
  %3 = cuvil.log %2 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.tanh
  %4 = cuvil.tanh %3 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.sqrt
  %5 = cuvil.sqrt %4 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.rsqrt
  %6 = cuvil.rsqrt %5 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.erf
  %7 = cuvil.erf %6 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.sigmoid
  %8 = cuvil.sigmoid %7 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.relu
  %9 = cuvil.relu %8 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.gelu
  %10 = cuvil.gelu %9 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.dropout %{{.*}} {ratio = 1.000000e-01 : f64} : tensor<2x5xf32>
  %11 = cuvil.dropout %10 {ratio = 0.1 : f64} : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.sin
  %12 = cuvil.sin %11 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.cos
  %13 = cuvil.cos %12 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.floor
  %14 = cuvil.floor %13 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.ceil
  %15 = cuvil.ceil %14 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.trunc
  %16 = cuvil.trunc %15 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.round
  %17 = cuvil.round %16 : tensor<2x5xf32>
  // CHECK-NEXT: cuvil.rem %{{.*}}, %{{.*}} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %18 = cuvil.rem %17, %a : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %18 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<8x64x32xf32>, %b: tensor<32x16xf32>,
                        %x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>)
    -> (tensor<8x64x16xf32>, tensor<1x8x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x5x5xf32>) {
  // CHECK: cuvil.matmul %{{.*}}, %{{.*}} : (tensor<8x64x32xf32>, tensor<32x16xf32>) -> tensor<8x64x16xf32>
  %0 = cuvil.matmul %a, %b : (tensor<8x64x32xf32>, tensor<32x16xf32>) -> tensor<8x64x16xf32>
  // CHECK: cuvil.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %1 = cuvil.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64}
      : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x5xf32>
  // CHECK: cuvil.max_pool2d %{{.*}} {kernel = array<i64: 3, 3>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
  %2 = cuvil.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: cuvil.avg_pool2d %{{.*}} {count_include_pad = false, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %3 = cuvil.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false}
      : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
  return %0, %1, %2, %3 : tensor<8x64x16xf32>, tensor<1x8x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x5x5xf32>
}

// Mixed precision: narrow operands, a wider accumulator and result; int4
// weights with group-wise scales.
// CHECK-LABEL: func.func @mixed_precision
func.func @mixed_precision(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>, %c: tensor<4x8xi8>, %d: tensor<8x2xi8>, %x: tensor<2x4x8xf32>, %q: tensor<8x2xi8>, %s: tensor<2x4xf32>) {
  // CHECK: cuvil.matmul %{{.*}}, %{{.*}} : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  %0 = cuvil.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  // CHECK: cuvil.matmul %{{.*}}, %{{.*}} : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  %1 = cuvil.matmul %c, %d : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  // CHECK: cuvil.quantized_matmul %{{.*}}, %{{.*}}, %{{.*}} {group_size = 4 : i64} : (tensor<2x4x8xf32>, tensor<8x2xi8>, tensor<2x4xf32>) -> tensor<2x4x4xf32>
  %2 = cuvil.quantized_matmul %x, %q, %s {group_size = 4 : i64} : (tensor<2x4x8xf32>, tensor<8x2xi8>, tensor<2x4xf32>) -> tensor<2x4x4xf32>
  return
}

// CHECK-LABEL: func.func @normalizations
func.func @normalizations(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %c: tensor<4xf32>)
    -> (tensor<2x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  // CHECK: cuvil.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
  %0 = cuvil.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
  // CHECK: cuvil.reduce_mean %{{.*}} {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
  %1 = cuvil.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
  // CHECK: cuvil.reduce_max
  %2 = cuvil.reduce_max %x {axes = array<i64: 2>} : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
  // CHECK: cuvil.reduce_min
  %3 = cuvil.reduce_min %x {axes = array<i64: 0, 1, 2>} : (tensor<2x4x8xf32>) -> tensor<f32>
  // CHECK: cuvil.softmax %{{.*}} {axis = 2 : i64} : tensor<2x4x8xf32>
  %4 = cuvil.softmax %x {axis = 2 : i64} : tensor<2x4x8xf32>
  // CHECK: cuvil.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64}
  %5 = cuvil.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64}
      : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: cuvil.batch_norm
  %6 = cuvil.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64}
      : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  return %0, %4, %5, %6 : tensor<2x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>, %z: tensor<1x8xf32>)
    -> (tensor<2x16xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<6x8xf32>, tensor<2x7xf32>, tensor<4x8xi32>) {
  // CHECK: cuvil.reshape %{{.*}} : (tensor<4x8xf32>) -> tensor<2x16xf32>
  %0 = cuvil.reshape %x : (tensor<4x8xf32>) -> tensor<2x16xf32>
  // CHECK: cuvil.transpose %{{.*}} {permutation = array<i64: 1, 0>}
  %1 = cuvil.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // CHECK: cuvil.broadcast_to %{{.*}} : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %2 = cuvil.broadcast_to %z : (tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK: cuvil.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  %3 = cuvil.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  // CHECK: cuvil.slice %{{.*}} limit [4, 8] {start = array<i64: 0, 1>, step = array<i64: 2, 1>}
  %4 = cuvil.slice %x limit [4, 8] {start = array<i64: 0, 1>, step = array<i64: 2, 1>} : (tensor<4x8xf32>) -> tensor<2x7xf32>
  // CHECK: cuvil.cast %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xi32>
  %5 = cuvil.cast %x : (tensor<4x8xf32>) -> tensor<4x8xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x16xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<6x8xf32>, tensor<2x7xf32>, tensor<4x8xi32>
}

// Run-time sizes: cuvil.dim feeds a range, slice limits and reshape sizes.
// CHECK-LABEL: func.func @run_time_sizes
// CHECK: %[[N:.*]] = cuvil.dim %{{.*}}, 0 : tensor<?x?xi64>
// CHECK: %[[T:.*]] = cuvil.dim %{{.*}}, 1 : tensor<?x?xi64>
// CHECK: cuvil.range %[[T]] : tensor<?xi64>
// CHECK: cuvil.range %[[T]] {start = 2 : i64, step = 3 : i64} : tensor<?xf32>
// CHECK: cuvil.slice %{{.*}} limit [1, 1, %[[T]], %[[T]]] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
// CHECK: cuvil.reshape %{{.*}}(%[[N]], %[[T]]) : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
func.func @run_time_sizes(%ids: tensor<?x?xi64>, %mask: tensor<1x1x16x16xf32>, %h: tensor<?x8xf32>)
    -> (tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>, tensor<?xf32>) {
  %n = cuvil.dim %ids, 0 : tensor<?x?xi64>
  %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
  %0 = cuvil.range %t {start = 0 : i64, step = 1 : i64} : tensor<?xi64>
  %3 = cuvil.range %t {start = 2 : i64, step = 3 : i64} : tensor<?xf32>
  %1 = cuvil.slice %mask limit [1, 1, %t, %t] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>}
      : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
  %2 = cuvil.reshape %h (%n, %t) : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
  return %0, %1, %2, %3 : tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @constant
func.func @constant() -> tensor<2xf32> {
  // CHECK: cuvil.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%t: tensor<100x16xf32>, %i: tensor<2x5xi64>, %j: tensor<i32>)
    -> (tensor<2x5x16xf32>, tensor<100xf32>) {
  // CHECK: cuvil.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
  %0 = cuvil.gather %t, %i {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
  // CHECK: cuvil.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<100x16xf32>, tensor<i32>) -> tensor<100xf32>
  %1 = cuvil.gather %t, %j {axis = 1 : i64} : (tensor<100x16xf32>, tensor<i32>) -> tensor<100xf32>
  return %0, %1 : tensor<2x5x16xf32>, tensor<100xf32>
}

// Shape rules keep dynamic sizes: a dynamic size meets a static one as that
// size, concat adds up to dynamic, windows slide over dynamic extents.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>, %v: tensor<?xf32>, %c: tensor<4xf32>,
                   %img: tensor<?x3x?x?xf32>, %k: tensor<4x3x3x3xf32>, %b: tensor<1x8xf32>)
    -> (tensor<?x16xf32>, tensor<4xf32>, tensor<?xf32>, tensor<?x4x?x?xf32>, tensor<?x8xf32>) {
  // CHECK: cuvil.matmul {{.*}} -> tensor<?x16xf32>
  %0 = cuvil.matmul %x, %w : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  // CHECK: cuvil.add {{.*}} -> tensor<4xf32>
  %1 = cuvil.add %v, %c : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: cuvil.concat {{.*}} -> tensor<?xf32>
  %2 = cuvil.concat %v, %c {axis = 0 : i64} : (tensor<?xf32>, tensor<4xf32>) -> tensor<?xf32>
  // CHECK: cuvil.conv2d {{.*}} -> tensor<?x4x?x?xf32>
  %3 = cuvil.conv2d %img, %k {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  // CHECK: cuvil.broadcast_to %{{.*}} like %{{.*}} : (tensor<1x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %4 = cuvil.broadcast_to %b like %x : (tensor<1x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0, %1, %2, %3, %4 : tensor<?x16xf32>, tensor<4xf32>, tensor<?xf32>, tensor<?x4x?x?xf32>, tensor<?x8xf32>
}
