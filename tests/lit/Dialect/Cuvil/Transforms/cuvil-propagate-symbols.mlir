// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-propagate-symbols))" --split-input-file --verify-diagnostics | FileCheck %s

// Results name each dynamic dimension in terms of the arguments' symbols;
// reshape(2, -1) divides the element count.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<?x16xf32> {cuvil.symbols = ["N"]}, tensor<2x?xf32> {cuvil.symbols = ["N * 8"]}, tensor<?x?xf32> {cuvil.symbols = ["N", "S"]})
func.func @mlp(%x: tensor<?x8xf32> {cuvil.symbols = ["N"]}, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
               %y: tensor<?x?x8xf32> {cuvil.symbols = ["N", "S"]})
    -> (tensor<?x16xf32>, tensor<2x?xf32>, tensor<?x?xf32>) {
  %0 = cuvil.matmul %x, %w : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = cuvil.add %0, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = cuvil.relu %1 : tensor<?x16xf32>
  %3 = cuvil.reshape %2 : (tensor<?x16xf32>) -> tensor<2x?xf32>
  %4 = cuvil.reduce_sum %y {axes = array<i64: 2>} : (tensor<?x?x8xf32>) -> tensor<?x?xf32>
  return %2, %3, %4 : tensor<?x16xf32>, tensor<2x?xf32>, tensor<?x?xf32>
}

// -----

// Collapsing multiplies the grouped symbols; a reshape MLIR cannot group
// unambiguously into several dynamic sizes leaves them unknown ("?").
// Transpose and concat move and add symbols.
// CHECK-LABEL: func.func @image
// CHECK-SAME: -> (tensor<?x3xf32> {cuvil.symbols = ["N * h"]}, tensor<?x?x3xf32> {cuvil.symbols = ["?", "?"]}, tensor<?x?xf32> {cuvil.symbols = ["h", "w * 2"]})
func.func @image(%x: tensor<?x?x3xf32> {cuvil.symbols = ["N", "h"]}, %y: tensor<?x?x?x3xf32> {cuvil.symbols = ["N", "h", "w"]},
                 %m: tensor<?x?xf32> {cuvil.symbols = ["w", "h"]})
    -> (tensor<?x3xf32>, tensor<?x?x3xf32>, tensor<?x?xf32>) {
  %0 = cuvil.reshape %x : (tensor<?x?x3xf32>) -> tensor<?x3xf32>
  %1 = cuvil.reshape %y : (tensor<?x?x?x3xf32>) -> tensor<?x?x3xf32>
  %2 = cuvil.transpose %m {permutation = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = cuvil.concat %2, %2 {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0, %1, %3 : tensor<?x3xf32>, tensor<?x?x3xf32>, tensor<?x?xf32>
}

// -----

// A dynamic broadcast takes the sizes it broadcasts from 1 from `like` and
// keeps its input's dynamic sizes, as the lowering does (a `like` of size 1
// there does not shrink the result); a gather puts the index shape in place
// of the axis.
// CHECK-LABEL: func.func @broadcast_gather
// CHECK-SAME: -> (tensor<?x4xf32> {cuvil.symbols = ["B"]}, tensor<?x?x4xf32> {cuvil.symbols = ["B", "T"]}, tensor<?x?xf32> {cuvil.symbols = ["B", "T"]})
func.func @broadcast_gather(%bias: tensor<1x4xf32>, %like: tensor<?x4xf32> {cuvil.symbols = ["B"]},
                            %table: tensor<100x4xf32>, %ids: tensor<?x?xi64> {cuvil.symbols = ["B", "T"]},
                            %row: tensor<1x?xf32> {cuvil.symbols = ["T"]}, %rows: tensor<?x1xf32> {cuvil.symbols = ["B"]})
    -> (tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>) {
  %0 = cuvil.broadcast_to %bias like %like : (tensor<1x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = cuvil.gather %table, %ids {axis = 0 : i64} : (tensor<100x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %2 = cuvil.broadcast_to %row like %rows : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>
}

// -----

// A convolution's spatial sizes are expressions of the input's.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: -> (tensor<?x8x?x?xf32> {cuvil.symbols = ["N", "((h + -1) // 2) + 1", "((w + -1) // 2) + 1"]})
func.func @conv(%x: tensor<?x3x?x?xf32> {cuvil.symbols = ["N", "h", "w"]}, %k: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = cuvil.conv2d %x, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

func.func @mismatched_symbols(%a: tensor<?x4xf32> {cuvil.symbols = ["N"]}, %b: tensor<?x4xf32> {cuvil.symbols = ["M"]}) {
  // expected-error @+1 {{'cuvil.add' op dimensions N and M of the operands differ; they must be equal (or 1), and equal symbol names are how equal sizes are declared}}
  %0 = cuvil.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @symbol_meets_static(%a: tensor<?xf32> {cuvil.symbols = ["N"]}, %b: tensor<5xf32>) {
  // expected-error @+1 {{dimensions N and 5 of the operands differ}}
  %0 = cuvil.add %a, %b : (tensor<?xf32>, tensor<5xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<4x?xf32> {cuvil.symbols = ["K"]}, %b: tensor<?x4xf32> {cuvil.symbols = ["J"]}) {
  // expected-error @+1 {{dimensions K and J of the contraction (K) differ; they must be equal, and}}
  %0 = cuvil.matmul %a, %b : (tensor<4x?xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

// A GPT-2 block's run-time sizes: positions range over T, the causal mask
// is sliced to T x T, and [N*T, C] unfolds into [N, T, C] by given sizes.
// CHECK-LABEL: func.func @decoder_sizes
// CHECK-SAME: -> (tensor<?xi64> {cuvil.symbols = ["T"]}, tensor<1x1x?x?xf32> {cuvil.symbols = ["T", "T"]}, tensor<?x?x8xf32> {cuvil.symbols = ["N", "T"]}, tensor<?xi64> {cuvil.symbols = ["-(-(T + -1) // 2)"]}, tensor<?x?x?x?xf32> {cuvil.symbols = ["N", "4", "T", "T"]})
func.func @decoder_sizes(%ids: tensor<?x?xi64> {cuvil.symbols = ["N", "T"]}, %mask: tensor<1x1x16x16xf32>,
                         %h: tensor<?x8xf32> {cuvil.symbols = ["NT"]}, %s: tensor<?x?x?x?xf32> {cuvil.symbols = ["A", "B", "C", "D"]})
    -> (tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>, tensor<?xi64>, tensor<?x?x?x?xf32>) {
  %n = cuvil.dim %ids, 0 : tensor<?x?xi64>
  %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
  %c4 = arith.constant 4 : index
  %0 = cuvil.range %t : tensor<?xi64>
  %1 = cuvil.slice %mask limit [1, 1, %t, %t] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>}
      : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
  %2 = cuvil.reshape %h (%n, %t) : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
  %3 = cuvil.range %t {start = 1 : i64, step = 2 : i64} : tensor<?xi64>
  %4 = cuvil.reshape %s (%n, %c4, %t, %t) : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>, tensor<?xi64>, tensor<?x?x?x?xf32>
}

// -----

// Sizes computed with arith on indexes (the heads folded into the batch).
// CHECK-LABEL: func.func @computed_sizes
// CHECK-SAME: -> (tensor<?x?x8xf32> {cuvil.symbols = ["N * 4", "T"]}, tensor<?x?xf32> {cuvil.symbols = ["(N * 4) + T", "?"]})
func.func @computed_sizes(%x: tensor<?x4x?x8xf32> {cuvil.symbols = ["N", "T"]}, %y: tensor<?x?xf32> {cuvil.symbols = ["A", "B"]})
    -> (tensor<?x?x8xf32>, tensor<?x?xf32>) {
  %n = cuvil.dim %x, 0 : tensor<?x4x?x8xf32>
  %t = cuvil.dim %x, 2 : tensor<?x4x?x8xf32>
  %c4 = arith.constant 4 : index
  %nh = arith.muli %n, %c4 : index
  %0 = cuvil.reshape %x (%nh, %t) : (tensor<?x4x?x8xf32>) -> tensor<?x?x8xf32>
  %sum = arith.addi %nh, %t : index
  %q = arith.divui %sum, %t : index
  %1 = cuvil.reshape %y (%sum, %q) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?x8xf32>, tensor<?x?xf32>
}

// -----

// Functions without dynamic arguments are left alone.
// CHECK-LABEL: func.func @static
// CHECK-SAME: -> tensor<4xf32> {
func.func @static(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// A reshape whose types fit one grouping names its sizes from it; one that
// fits several ([N, 12, T, 64] into [?, ?, 64]: heads into the batch or into
// the sequence) leaves them unknown rather than guessing.
// CHECK-LABEL: func.func @heads
// CHECK-SAME: -> (tensor<?x?x768xf32> {cuvil.symbols = ["N", "T"]}, tensor<?x?x64xf32> {cuvil.symbols = ["?", "?"]})
func.func @heads(%x: tensor<?x?x12x64xf32> {cuvil.symbols = ["N", "T"]}, %y: tensor<?x12x?x64xf32> {cuvil.symbols = ["N", "T"]})
    -> (tensor<?x?x768xf32>, tensor<?x?x64xf32>) {
  %0 = cuvil.reshape %x : (tensor<?x?x12x64xf32>) -> tensor<?x?x768xf32>
  %1 = cuvil.reshape %y : (tensor<?x12x?x64xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x768xf32>, tensor<?x?x64xf32>
}
