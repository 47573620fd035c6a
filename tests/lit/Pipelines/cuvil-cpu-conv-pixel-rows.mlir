// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm=vector-lanes=4 --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=1000 | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm=vector-lanes=4 --cuvil-cpu-schedule=vector-lanes=4 --split-input-file | FileCheck %s --check-prefix=SCHED
// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm=vector-lanes=16 --cuvil-cpu-schedule=vector-lanes=16 --split-input-file | FileCheck %s --check-prefix=TASKS

// 7 x 7 pixels are no whole register tiles (two vectors of 4 lanes) but the 8
// filters are, and the weights are a constant: the pixels are the GEMM's rows.
// The padded image is made NHWC (its source transposed as [1, 49, 2], the
// padding redone on H and W, the NCHW padding dropped), the windows gathered
// as [N, OH, OW, KH, KW, C] (one row per pixel, channels innermost), the
// weights w[f, c, kh, kw] = 100 c + 10 f + 3 kh + kw reordered at compile time
// to [KH*KW*C, F] (row (kh, kw, c): 100 c + 3 kh + kw, 10 + ..., 70 + ...),
// and the [49, 8] product transposed back to the image's [1, 8, 49].
// CHECK-LABEL: func.func @pixel_rows
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+01, 2.000000e+01, 3.000000e+01, 4.000000e+01, 5.000000e+01, 6.000000e+01, 7.000000e+01], [1.000000e+02, 1.100000e+02, 1.200000e+02, 1.300000e+02, 1.400000e+02, 1.500000e+02, 1.600000e+02, 1.700000e+02], [1.000000e+00, 1.100000e+01, {{.*}}]]> : tensor<18x8xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x2x7x7xf32> into tensor<1x2x49xf32>
// CHECK: %[[T0:.*]] = linalg.transpose ins(%[[FLAT]] : tensor<1x2x49xf32>) outs(%{{.*}} : tensor<1x49x2xf32>) permutation = [0, 2, 1]
// CHECK: %[[NHWC:.*]] = tensor.expand_shape %[[T0]] {{\[}}[0], [1, 2], [3]] output_shape [1, 7, 7, 2]
// CHECK: %[[PAD:.*]] = tensor.pad %[[NHWC]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor<1x7x7x2xf32> to tensor<1x9x9x2xf32>
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x7x7x3x3x2xf32>)
// CHECK: tensor.extract %[[PAD]]
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[ROWS]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<1x7x7x3x3x2xf32> into tensor<49x18xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[W]] : tensor<49x18xf32>, tensor<18x8xf32>) outs(%{{.*}} : tensor<49x8xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [1, 49, 8]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<1x49x8xf32>) outs(%{{.*}} : tensor<1x8x49xf32>) permutation = [0, 2, 1]
// CHECK: tensor.expand_shape %[[T]] {{\[}}[0], [1], [2, 3]] output_shape [1, 8, 7, 7]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK-NOT: tensor<1x2x9x9xf32>
// The filters of a pixel are one register tile's row of FMAs.
// SCHED-LABEL: func.func @pixel_rows
// SCHED: vector.fma {{.*}} : vector<8xf32>
func.func @pixel_rows(%x: tensor<1x2x7x7xf32>) -> tensor<1x8x7x7xf32> {
  %w = arith.constant dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], [[100.0, 101.0, 102.0], [103.0, 104.0, 105.0], [106.0, 107.0, 108.0]]], [[[10.0, 11.0, 12.0], [13.0, 14.0, 15.0], [16.0, 17.0, 18.0]], [[110.0, 111.0, 112.0], [113.0, 114.0, 115.0], [116.0, 117.0, 118.0]]], [[[20.0, 21.0, 22.0], [23.0, 24.0, 25.0], [26.0, 27.0, 28.0]], [[120.0, 121.0, 122.0], [123.0, 124.0, 125.0], [126.0, 127.0, 128.0]]], [[[30.0, 31.0, 32.0], [33.0, 34.0, 35.0], [36.0, 37.0, 38.0]], [[130.0, 131.0, 132.0], [133.0, 134.0, 135.0], [136.0, 137.0, 138.0]]], [[[40.0, 41.0, 42.0], [43.0, 44.0, 45.0], [46.0, 47.0, 48.0]], [[140.0, 141.0, 142.0], [143.0, 144.0, 145.0], [146.0, 147.0, 148.0]]], [[[50.0, 51.0, 52.0], [53.0, 54.0, 55.0], [56.0, 57.0, 58.0]], [[150.0, 151.0, 152.0], [153.0, 154.0, 155.0], [156.0, 157.0, 158.0]]], [[[60.0, 61.0, 62.0], [63.0, 64.0, 65.0], [66.0, 67.0, 68.0]], [[160.0, 161.0, 162.0], [163.0, 164.0, 165.0], [166.0, 167.0, 168.0]]], [[[70.0, 71.0, 72.0], [73.0, 74.0, 75.0], [76.0, 77.0, 78.0]], [[170.0, 171.0, 172.0], [173.0, 174.0, 175.0], [176.0, 177.0, 178.0]]]]> : tensor<8x2x3x3xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x2x7x7xf32> to tensor<1x2x9x9xf32>
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%p, %w : tensor<1x2x9x9xf32>, tensor<8x2x3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  return %r : tensor<1x8x7x7xf32>
}

// -----

// The same convolution with its weights an argument keeps the filters as the
// rows of a GEMM over the columns (reordering them would cost a copy per
// call).
// CHECK-LABEL: func.func @weights_not_constant
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3], [4, 5]] : tensor<1x1x3x3x7x7xf32> into tensor<9x49xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x9xf32>, tensor<9x49xf32>)
// CHECK-NOT: linalg.transpose
func.func @weights_not_constant(%x: tensor<1x1x9x9xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x7x7xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x1x9x9xf32>, tensor<8x1x3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  return %r : tensor<1x8x7x7xf32>
}

// -----

// With 16 lanes, 784 pixels are no whole register tiles of 32 but 32 filters
// are: pixel rows, and each thread task gathers the rows of its own output
// pixels (here 14 output rows, [1, 14, 28, KH, KW, C]), each window row one
// contiguous read of the 8 channels, right before its register tiles of 8
// pixels by the 32 filters read them; no kernel writes all 784 rows. (From
// 16 channels and 32 filters unit strides take the implicit GEMM instead,
// see cuvil-cpu-conv-implicit.mlir.)
// TASKS-LABEL: func.func @pixel_rows_per_task
// TASKS: scf.forall (%{{.*}}) in (2)
// TASKS: tensor.empty() : tensor<1x14x28x3x3x8xf32>
// TASKS: vector.transfer_read %{{.*}} : tensor<1x30x30x8xf32>, vector<8xf32>
// TASKS: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<1x14x28x3x3x8xf32> into tensor<392x72xf32>
// TASKS: scf.for {{.*}} -> (vector<8x32xf32>)
// TASKS: scf.forall.in_parallel
func.func @pixel_rows_per_task(%x: tensor<1x8x30x30xf32>) -> tensor<1x32x28x28xf32> {
  %w = arith.constant dense<5.000000e-01> : tensor<32x8x3x3xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x28x28xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x8x30x30xf32>, tensor<32x8x3x3xf32>) outs(%f : tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
  return %r : tensor<1x32x28x28xf32>
}

// -----

// The bias and ReLU on the image are computed on the [49, 8] product before
// the transpose (the bias [1, 8, 1, 1] read as a vector of the 8 filters),
// where cuvil-cpu-schedule makes them the GEMM's epilogue.
// CHECK-LABEL: func.func @pixel_rows_epilogue
// CHECK: %[[P:.*]] = linalg.matmul {{.*}} -> tensor<49x8xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : tensor<1x8x1x1xf32> into tensor<8xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[B]] : tensor<49x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<49x8xf32>)
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [1, 49, 8]
// CHECK: linalg.transpose ins(%[[E]] : tensor<1x49x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pixel_rows_epilogue(%x: tensor<1x2x9x9xf32>) -> tensor<1x8x7x7xf32> {
  %w = arith.constant dense<2.500000e-01> : tensor<8x2x3x3xf32>
  %bias = arith.constant dense<1.000000e+00> : tensor<1x8x1x1xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x2x9x9xf32>, tensor<8x2x3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %bias : tensor<1x8x7x7xf32>, tensor<1x8x1x1xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x8x7x7xf32>
  return %y : tensor<1x8x7x7xf32>
}

// -----

// 256 channels: each task gathers a window's row of channels 64 at a time
// (a loop, not one vector<256xf32> copy per offset, which LLVM unrolled
// with the offsets' and pixels' loops into one block of thousands of loads
// and stores), and the NHWC padding (9 x 9 x 256, too small to split across
// threads) is filled as one row of 20736 elements in one loop.
// TASKS-LABEL: func.func @wide_channels
// TASKS: tensor.empty() : tensor<20736xf32>
// TASKS: scf.for %{{.*}} = %c0 to %c20736 step %c16
// TASKS: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2, 3]] output_shape [1, 9, 9, 256] : tensor<20736xf32> into tensor<1x9x9x256xf32>
// TASKS: scf.for %{{.*}} = %c0 to %c256 step %c64
// TASKS: vector.transfer_read {{.*}} : tensor<1x9x9x256xf32>, vector<64xf32>
// TASKS-NOT: vector<256xf32>
func.func @wide_channels(%x: tensor<1x256x7x7xf32>) -> tensor<1x32x7x7xf32> {
  %w = arith.constant dense<0.5> : tensor<32x256x3x3xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x256x7x7xf32> to tensor<1x256x9x9xf32>
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%p, %w : tensor<1x256x9x9xf32>, tensor<32x256x3x3xf32>) outs(%f : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  return %r : tensor<1x32x7x7xf32>
}
