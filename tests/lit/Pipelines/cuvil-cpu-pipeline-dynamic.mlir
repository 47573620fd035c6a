// The CPU pipeline on named dynamic sizes: symbols are checked first, the
// dynamic GEMM and elementwise kernels run over run-time extents, memory
// planning leaves the dynamic buffers to run-time allocation, and the result
// becomes an out-param that still names its size.
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline="up-to=bufferize vector-lanes=16" | FileCheck %s --check-prefix=BUFFERS
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=vector-lanes=16 | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

// BUFFERS-LABEL: func.func @mlp
// BUFFERS-SAME: (%{{.*}}: memref<?x8xf32> {cuvil.symbols = ["N"]}, %{{.*}}: memref<8x16xf32>, %{{.*}}: memref<16xf32>, %[[OUT:.*]]: memref<?x16xf32> {cuvil.symbols = ["N"]})
// BUFFERS: %[[N:.*]] = memref.dim
// BUFFERS: memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x16xf32>
// BUFFERS: memref.copy %{{.*}}, %[[OUT]] : memref<?x16xf32> to memref<?x16xf32>
// IR: define void @mlp(ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}},
func.func @mlp(%x: tensor<?x8xf32> {cuvil.symbols = ["N"]}, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = cuvil.add %0, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = cuvil.relu %1 : tensor<?x16xf32>
  %3 = cuvil.reduce_mean %2 {axes = array<i64: 0>, keepdims = true} : (tensor<?x16xf32>) -> tensor<1x16xf32>
  %4 = cuvil.sub %2, %3 : (tensor<?x16xf32>, tensor<1x16xf32>) -> tensor<?x16xf32>
  return %4 : tensor<?x16xf32>
}

// Run-time sizes bufferize: the range fills a buffer of T elements, the
// causal-mask slice is a strided view of the clamped size, and the given
// reshape sizes are a memref.reshape of the input.
// BUFFERS-LABEL: func.func @run_time_sizes
// BUFFERS: memref.dim %{{.*}}, %{{.*}} : memref<?x?xi64>
// BUFFERS: %[[T:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?xi64>
// BUFFERS: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi64>
// BUFFERS: %[[CLAMPED:.*]] = arith.minsi %[[T]], %{{.*}} : index
// BUFFERS: memref.subview %{{.*}}[0, 0, 0, 0] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : memref<1x1x16x16xf32> to memref<1x1x?x?xf32, strided<[256, 256, 16, 1]>>
// BUFFERS: memref.reshape %{{.*}}(%{{.*}}) : (memref<?x8xf32>, memref<3xindex>) -> memref<?x?x8xf32>
func.func @run_time_sizes(%ids: tensor<?x?xi64> {cuvil.symbols = ["N", "T"]}, %mask: tensor<1x1x16x16xf32>,
                          %h: tensor<?x8xf32> {cuvil.symbols = ["NT"]})
    -> (tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>) {
  %n = cuvil.dim %ids, 0 : tensor<?x?xi64>
  %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
  %0 = cuvil.range %t {start = 0 : i64, step = 1 : i64} : tensor<?xi64>
  %1 = cuvil.slice %mask limit [1, 1, %t, %t] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>}
      : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
  %2 = cuvil.reshape %h (%n, %t) : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
  return %0, %1, %2 : tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>
}
