// RUN: %cuvil_opt %s --cuvil-cpu-unalias-gemm-rows --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-pipeline="up-to=bufferize vector-lanes=16" | FileCheck %s --check-prefix=BUFFERS

// The right operand's rows are 8 KiB apart (2048 float32): it is copied into
// rows one cache line (16 float32) longer, and the GEMM reads that copy.
// CHECK-LABEL: func.func @aliased_rows
// CHECK: %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<512x2064xf32>
// CHECK: %[[VIEW:.*]] = tensor.extract_slice %[[BUF]][0, 0] [512, 2048] [1, 1] : tensor<512x2064xf32> to tensor<512x2048xf32>
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<512x2048xf32>) outs(%[[VIEW]] : tensor<512x2048xf32>)
// CHECK: linalg.matmul ins(%arg0, %[[COPY]] : tensor<256x512xf32>, tensor<512x2048xf32>)
// The left operand (rows 2 KiB apart) is read as it is.
// CHECK-NOT: alloc_tensor
// BUFFERS-LABEL: func.func @aliased_rows
// BUFFERS: memref.subview %{{.*}}[0, 0] [512, 2048] [1, 1] : memref<512x2064xf32> to memref<512x2048xf32, strided<[2064, 1]>>
func.func @aliased_rows(%a: tensor<256x512xf32>, %b: tensor<512x2048xf32>) -> tensor<256x2048xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x2048xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<256x2048xf32>) -> tensor<256x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x2048xf32>) outs(%f : tensor<256x2048xf32>) -> tensor<256x2048xf32>
  return %r : tensor<256x2048xf32>
}

// -----

// float64 rows 4 KiB apart (512 elements) alias too: 8 more per row.
// CHECK-LABEL: func.func @aliased_f64
// CHECK: bufferization.alloc_tensor() : tensor<128x520xf64>
func.func @aliased_f64(%a: tensor<256x128xf64>, %b: tensor<128x512xf64>) -> tensor<256x512xf64> {
  %c0 = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<256x512xf64>
  %f = linalg.fill ins(%c0 : f64) outs(%e : tensor<256x512xf64>) -> tensor<256x512xf64>
  %r = linalg.matmul ins(%a, %b : tensor<256x128xf64>, tensor<128x512xf64>) outs(%f : tensor<256x512xf64>) -> tensor<256x512xf64>
  return %r : tensor<256x512xf64>
}

// -----

// Left alone: too few result rows to repay the copy (64 < 256), rows not a
// multiple of 4 KiB apart (2000 float32), an operand under 256 KiB, and
// integers.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: alloc_tensor
// CHECK: return
func.func @left_alone(%a: tensor<64x512xf32>, %b: tensor<512x2048xf32>,
                      %c: tensor<256x512xf32>, %d: tensor<512x2000xf32>,
                      %g: tensor<256x16xf32>, %h: tensor<16x1024xf32>,
                      %i: tensor<256x512xi32>, %j: tensor<512x1024xi32>)
    -> (tensor<64x2048xf32>, tensor<256x2000xf32>, tensor<256x1024xf32>, tensor<256x1024xi32>) {
  %c0 = arith.constant 0.0 : f32
  %z = arith.constant 0 : i32
  %e1 = tensor.empty() : tensor<64x2048xf32>
  %f1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<64x2048xf32>) -> tensor<64x2048xf32>
  %r1 = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x2048xf32>) outs(%f1 : tensor<64x2048xf32>) -> tensor<64x2048xf32>
  %e2 = tensor.empty() : tensor<256x2000xf32>
  %f2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<256x2000xf32>) -> tensor<256x2000xf32>
  %r2 = linalg.matmul ins(%c, %d : tensor<256x512xf32>, tensor<512x2000xf32>) outs(%f2 : tensor<256x2000xf32>) -> tensor<256x2000xf32>
  %e3 = tensor.empty() : tensor<256x1024xf32>
  %f3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r3 = linalg.matmul ins(%g, %h : tensor<256x16xf32>, tensor<16x1024xf32>) outs(%f3 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %e4 = tensor.empty() : tensor<256x1024xi32>
  %f4 = linalg.fill ins(%z : i32) outs(%e4 : tensor<256x1024xi32>) -> tensor<256x1024xi32>
  %r4 = linalg.matmul ins(%i, %j : tensor<256x512xi32>, tensor<512x1024xi32>) outs(%f4 : tensor<256x1024xi32>) -> tensor<256x1024xi32>
  return %r1, %r2, %r3, %r4 : tensor<64x2048xf32>, tensor<256x2000xf32>, tensor<256x1024xf32>, tensor<256x1024xi32>
}
