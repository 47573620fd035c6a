// RUN: %cuvil_opt %s --split-input-file --verify-diagnostics
// Every verifier error of the cuvil dialect, one per case.

func.func @case0(%a: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{operand shapes [4, 3] and [5] are not broadcast-compatible}}
  %0 = cuvil.add %a, %b : (tensor<4x3xf32>, tensor<5xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case1(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result shape [4, 4] does not match [4, 3], the shape inferred from the operands}}
  %0 = cuvil.mul %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  return
}
// -----

func.func @case2(%a: tensor<4x3xf32>, %b: tensor<3xi32>) {
  // expected-error @+1 {{operand element types 'f32' and 'i32' differ; insert a cuvil.cast}}
  %0 = cuvil.sub %a, %b : (tensor<4x3xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case3(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result element type 'f64' differs from the inferred element type 'f32'}}
  %0 = cuvil.div %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf64>
  return
}
// -----

func.func @case4(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = cuvil.compare less, %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  return
}
// -----

func.func @case5(%a: tensor<3xi1>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result element type 'f64' differs from the inferred element type 'f32'}}
  %0 = cuvil.where %a, %b, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf64>
  return
}
// -----

func.func @case6(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{operands must have rank >= 2, got shapes [4] and [4, 2]}}
  %0 = cuvil.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return
}
// -----

func.func @case7(%a: tensor<4x3xf32>, %b: tensor<5x2xf32>) {
  // expected-error @+1 {{contraction dimensions differ: lhs shape [4, 3] has K=3 but rhs shape [5, 2] has K=5}}
  %0 = cuvil.matmul %a, %b : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  return
}
// -----

func.func @case8(%a: tensor<2x4x3xf32>, %b: tensor<5x3x2xf32>) {
  // expected-error @+1 {{batch dimensions of [2, 4, 3] and [5, 3, 2] are not broadcast-compatible}}
  %0 = cuvil.matmul %a, %b : (tensor<2x4x3xf32>, tensor<5x3x2xf32>) -> tensor<2x4x2xf32>
  return
}
// -----

func.func @case9(%a: tensor<4x3xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{result shape [4, 3] does not match [4, 2], the shape inferred from the operands}}
  %0 = cuvil.matmul %a, %b : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case10(%a: tensor<3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects NCHW input and FCHW weight, got shapes [3, 8, 8] and [4, 3, 3, 3]}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case11(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 2 strides and 2 dilations, got 1 and 2}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case12(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects padding (top, left, bottom, right), got 2 values}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case13(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{strides and dilations must be >= 1}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 0, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case14(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{padding must be >= 0}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: -1, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case15(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{groups=2 must divide input channels (3) and output channels (4)}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case16(%a: tensor<1x3x8x8xf32>, %b: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{weight shape [4, 2, 3, 3] expects 2 input channels but input shape [1, 3, 8, 8] has 3 (groups=1)}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @case17(%a: tensor<1x3x2x2xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{kernel [3, 3] does not fit input [1, 3, 2, 2]}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}
// -----

func.func @case18(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{result shape [1, 4, 8, 8] does not match [1, 4, 6, 6]}}
  %0 = cuvil.conv2d %a, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}
// -----

func.func @case19(%a: tensor<3x8x8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{expects an NCHW input, got shape [3, 8, 8]}}
  %0 = cuvil.max_pool2d %a {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<3x8x8xf32>) -> tensor<3x4x4xf32>
  return
}
// -----

func.func @case20(%a: tensor<1x3x8x8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{expects a kernel of two positive sizes}}
  %0 = cuvil.max_pool2d %a {kernel = array<i64: 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}
// -----

func.func @case21(%a: tensor<1x3x8x8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{padding must be smaller than the kernel}}
  %0 = cuvil.avg_pool2d %a {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x5x4xf32>
  return
}
// -----

func.func @case22(%a: tensor<1x3x8x8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{result shape [1, 3, 8, 8] does not match [1, 3, 4, 4]}}
  %0 = cuvil.max_pool2d %a {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return
}
// -----

func.func @case23(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{axis 2 is out of range for input shape [4, 3]}}
  %0 = cuvil.reduce_sum %a {axes = array<i64: 2>} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @case24(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = cuvil.reduce_max %a {axes = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<f32>
  return
}
// -----

func.func @case25(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{result shape [4] does not match [4, 1], the shape inferred}}
  %0 = cuvil.reduce_mean %a {axes = array<i64: 1>, keepdims = true} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @case26(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = cuvil.softmax %a {axis = 2 : i64} : tensor<4x3xf32>
  return
}
// -----

func.func @case27(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{gamma/beta shape [4] must equal the normalized shape [3] of input [4, 3]}}
  %0 = cuvil.layer_norm %a, %b, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case28(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{epsilon must be >= 0}}
  %0 = cuvil.layer_norm %a, %b, %b {axis = 1 : i64, epsilon = -1.0 : f64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case29(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{expects an input of rank >= 2 (N, C, ...), got [4]}}
  %0 = cuvil.batch_norm %a, %b, %b, %b, %b {epsilon = 1.0e-5 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @case30(%a: tensor<2x4x5xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{per-channel parameter shape [5] must be [4] for input [2, 4, 5]}}
  %0 = cuvil.batch_norm %a, %b, %b, %b, %b {epsilon = 1.0e-5 : f64} : (tensor<2x4x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>
  return
}
// -----

func.func @case31(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{must be in [0, 1)}}
  %0 = cuvil.dropout %a {ratio = 1.5 : f64} : tensor<4x3xf32>
  return
}
// -----

func.func @case32(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{cannot reshape [4, 3] (12 elements) into [5, 2] (10 elements)}}
  %0 = cuvil.reshape %a : (tensor<4x3xf32>) -> tensor<5x2xf32>
  return
}
// -----

func.func @case33(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{reshape cannot change the element type}}
  %0 = cuvil.reshape %a : (tensor<4x3xf32>) -> tensor<12xi32>
  return
}
// -----

func.func @case34(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{permutation [0] has 1 entries for input shape [4, 3]}}
  %0 = cuvil.transpose %a {permutation = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case35(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{permutation [0, 0] is not a permutation of 0..1}}
  %0 = cuvil.transpose %a {permutation = array<i64: 0, 0>} : (tensor<4x3xf32>) -> tensor<4x4xf32>
  return
}
// -----

func.func @case36(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{result shape [4, 3] does not match [3, 4]}}
  %0 = cuvil.transpose %a {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case37(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{cannot broadcast shape [4, 3] to [4, 6]}}
  %0 = cuvil.broadcast_to %a : (tensor<4x3xf32>) -> tensor<4x6xf32>
  return
}
// -----

func.func @case38(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = cuvil.concat %a, %b {axis = 2 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return
}
// -----

func.func @case39(%a: tensor<4x3xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{input shapes [4, 3] and [4, 2] differ outside axis 0}}
  %0 = cuvil.concat %a, %b {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<8x3xf32>
  return
}
// -----

func.func @case40(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{inputs must share rank and element type}}
  %0 = cuvil.concat %a, %b {axis = 0 : i64} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  return
}
// -----

func.func @case41(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{result shape [4, 5] does not match [4, 6]}}
  %0 = cuvil.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  return
}
// -----

func.func @case42(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{start/limit/step must each have 2 entries for input shape [4, 3]}}
  %0 = cuvil.slice %a limit [4, 3] {start = array<i64: 0>, step = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case43(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{step must be >= 1 in dimension 1}}
  %0 = cuvil.slice %a limit [4, 3] {start = array<i64: 0, 0>, step = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @case44(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{slice [0, 5) of dimension 0 is out of bounds for input shape [4, 3]}}
  %0 = cuvil.slice %a limit [5, 3] {start = array<i64: 0, 0>, step = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<5x3xf32>
  return
}
// -----

func.func @case45(%a: tensor<4x3xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{result shape [4, 3] does not match [2, 3]}}
  %0 = cuvil.slice %a limit [4, 3] {start = array<i64: 0, 0>, step = array<i64: 2, 1>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @constant_type() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "cuvil.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}
// -----

func.func @unknown_op(%a: tensor<2xf32>) {
  // expected-error @+1 {{custom op 'cuvil.frobnicate' is unknown}}
  %0 = cuvil.frobnicate %a : tensor<2xf32>
  return
}
// -----

func.func @gather_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = cuvil.gather %t, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x4xf32>
  return
}
// -----

func.func @gather_scalar_data(%t: tensor<f32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{expects data of rank >= 1 to gather from, got a scalar}}
  %0 = cuvil.gather %t, %i {axis = 0 : i64} : (tensor<f32>, tensor<3xi64>) -> tensor<3xf32>
  return
}
// -----

func.func @gather_result_shape(%t: tensor<10x4xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{result shape [2, 3] does not match [2, 3, 4]}}
  %0 = cuvil.gather %t, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  return
}
// -----

func.func @gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = cuvil.gather %t, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}
// -----

func.func @gather_element_type(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{result element type 'f64' differs from the inferred element type 'f32'}}
  %0 = cuvil.gather %t, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf64>
  return
}
// -----

// expected-error @+1 {{'cuvil.symbols' on argument #0 names 1 dimensions but 'tensor<?x?xf32>' has 2 dynamic ones; name each '?' once, in order}}
func.func @symbols_count(%a: tensor<?x?xf32> {cuvil.symbols = ["N"]}) {
  return
}
// -----

// expected-error @+1 {{'cuvil.symbols' on argument #0 must hold non-empty strings, got 3 : i64}}
func.func @symbols_strings(%a: tensor<?xf32> {cuvil.symbols = [3]}) {
  return
}
// -----

func.func @slice_dynamic(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{cannot slice dimension 0 of dynamic size in [?, 3] with a static limit; give the limit as an index (cuvil.dim of the tensor whose size it is)}}
  %0 = cuvil.slice %a limit [2, 3] {start = array<i64: 0, 0>, step = array<i64: 1, 1>} : (tensor<?x3xf32>) -> tensor<2x3xf32>
  return
}
// -----

func.func @conv_dynamic_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{channels and kernel sizes must be static}}
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x?x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
// -----

func.func @broadcast_needs_like(%a: tensor<1x4xf32>) {
  // expected-error @+1 {{result dimension 0 is dynamic but the input's is not; pass a tensor of the result's shape as 'like'}}
  %0 = cuvil.broadcast_to %a : (tensor<1x4xf32>) -> tensor<?x4xf32>
  return
}
// -----

func.func @broadcast_like_shape(%a: tensor<1x4xf32>, %l: tensor<?x5xf32>) {
  // expected-error @+1 {{'like' has shape [?, 5] but the result has [?, 4]}}
  %0 = cuvil.broadcast_to %a like %l : (tensor<1x4xf32>, tensor<?x5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @floor_of_integers(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float}}
  %0 = cuvil.floor %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @slice_run_time_limits_count(%a: tensor<4x?xf32>, %t: index) {
  // expected-error @+1 {{has 1 run-time limits for the 2 dynamic entries of its limit list}}
  %0 = "cuvil.slice"(%a, %t) <{start = array<i64: 0, 0>, limit = array<i64: -9223372036854775808, -9223372036854775808>, step = array<i64: 1, 1>}> : (tensor<4x?xf32>, index) -> tensor<?x?xf32>
  return
}
// -----

func.func @slice_run_time_limit_start(%a: tensor<4x3xf32>, %t: index) {
  // expected-error @+1 {{start 5 of dimension 0 is out of bounds for input shape [4, 3]}}
  %0 = cuvil.slice %a limit [%t, 3] {start = array<i64: 5, 0>, step = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<?x3xf32>
  return
}
// -----

func.func @slice_run_time_limit_static_result(%a: tensor<4x3xf32>, %t: index) {
  // expected-error @+1 {{result shape [2, 3] does not match [?, 3]}}
  %0 = cuvil.slice %a limit [%t, 3] {start = array<i64: 0, 0>, step = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  return
}
// -----

func.func @dim_axis(%a: tensor<4x?xf32>) {
  // expected-error @+1 {{axis 2 is out of range for input shape [4, ?]}}
  %0 = cuvil.dim %a, 2 : tensor<4x?xf32>
  return
}
// -----

func.func @range_step(%t: index) {
  // expected-error @+1 {{step must be >= 1, got 0}}
  %0 = cuvil.range %t {step = 0 : i64} : tensor<?xi64>
  return
}
// -----

func.func @range_rank(%t: index) {
  // expected-error @+1 {{result must be 1-D, got [?, 2]}}
  %0 = cuvil.range %t : tensor<?x2xi64>
  return
}
// -----

func.func @range_bool(%t: index) {
  // expected-error @+1 {{result element type must be a number, not i1}}
  %0 = cuvil.range %t : tensor<?xi1>
  return
}
// -----

func.func @reshape_sizes_count(%a: tensor<?x8xf32>, %n: index) {
  // expected-error @+1 {{has 1 sizes for the 2 dynamic dimensions of [?, ?, 8]; give one index per '?', or none to derive them}}
  %0 = cuvil.reshape %a (%n) : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
  return
}
// -----

func.func @matmul_widen_f64(%a: tensor<4x3xbf16>, %b: tensor<3x2xbf16>) {
  // expected-error @+1 {{result element type 'f64' differs from the inferred element type 'bf16' (a matmul may widen bf16 or f16 to f32, i8 to i32)}}
  %0 = cuvil.matmul %a, %b : (tensor<4x3xbf16>, tensor<3x2xbf16>) -> tensor<4x2xf64>
  return
}
// -----

func.func @quantized_group(%a: tensor<4x3xf32>, %b: tensor<3x2xi8>, %s: tensor<1x4xf32>) {
  // expected-error @+1 {{group_size 2 must be positive and divide K=3}}
  %0 = cuvil.quantized_matmul %a, %b, %s {group_size = 2 : i64} : (tensor<4x3xf32>, tensor<3x2xi8>, tensor<1x4xf32>) -> tensor<4x4xf32>
  return
}
// -----

func.func @quantized_scales_shape(%a: tensor<4x4xf32>, %b: tensor<4x2xi8>, %s: tensor<1x4xf32>) {
  // expected-error @+1 {{for input [4, 4] the packed weight must be 4x2 and the scales 2x4, got [4, 2] and [1, 4]}}
  %0 = cuvil.quantized_matmul %a, %b, %s {group_size = 2 : i64} : (tensor<4x4xf32>, tensor<4x2xi8>, tensor<1x4xf32>) -> tensor<4x4xf32>
  return
}
// -----

func.func @quantized_scales_type(%a: tensor<4x4xf32>, %b: tensor<4x2xi8>, %s: tensor<2x4xf16>) {
  // expected-error @+1 {{scales are 'f16' but the input is 'f32'; both must have one float type}}
  %0 = cuvil.quantized_matmul %a, %b, %s {group_size = 2 : i64} : (tensor<4x4xf32>, tensor<4x2xi8>, tensor<2x4xf16>) -> tensor<4x4xf32>
  return
}
