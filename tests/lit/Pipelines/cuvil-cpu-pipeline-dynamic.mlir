// The CPU pipeline on named dynamic sizes: symbols are checked first, the
// dynamic GEMM and elementwise kernels run over run-time extents, memory
// planning leaves the dynamic buffers to run-time allocation, and the result
// becomes an out-param that still names its size.
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=up-to=bufferize | FileCheck %s --check-prefix=BUFFERS
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

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
