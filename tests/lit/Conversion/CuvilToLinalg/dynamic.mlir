// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file | FileCheck %s

// Dynamic sizes come from the operands: tensor.dim feeds every tensor.empty,
// the GEMM keeps its dynamic M, and a mean divides by the run-time count.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32> {cuvil.symbols = ["N"]}
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x16xf32>)
// CHECK: linalg.matmul ins(%[[X]], %{{.*}} : tensor<?x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<?x16xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16xf32>)
// CHECK: %[[ROWS:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x16xf32>
// CHECK: %[[I:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[COUNT:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[COUNT]] : f32
// CHECK: arith.divf %{{.*}}, %[[SCALED]] : f32
func.func @mlp(%x: tensor<?x8xf32> {cuvil.symbols = ["N"]}, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<1x16xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = cuvil.add %0, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = cuvil.reduce_mean %1 {axes = array<i64: 0>, keepdims = true} : (tensor<?x16xf32>) -> tensor<1x16xf32>
  return %2 : tensor<1x16xf32>
}

// -----

// reshape(2, -1) of a dynamic tensor: flatten, then expand with the
// dynamic size inferred from the element count.
// CHECK-LABEL: func.func @reshape_minus_one
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<?x3x4xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [2, %{{.*}}] : tensor<?xf32> into tensor<2x?xf32>
func.func @reshape_minus_one(%x: tensor<?x3x4xf32>) -> tensor<2x?xf32> {
  %0 = cuvil.reshape %x : (tensor<?x3x4xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// A dynamic broadcast takes its size from `like`, an operand of the generic.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @dynamic_broadcast
// CHECK-SAME: (%[[B:.*]]: tensor<1x4xf32>, %[[L:.*]]: tensor<?x4xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[L]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ID]], #[[ID]]], {{.*}}} ins(%[[B]], %[[L]] : tensor<1x4xf32>, tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
func.func @dynamic_broadcast(%b: tensor<1x4xf32>, %l: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cuvil.broadcast_to %b like %l : (tensor<1x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Batch and sequence both dynamic: the rows fold into one GEMM, whose
// result unfolds through tensor.reshape (MLIR 19 cannot bufferize an
// expand_shape of one size into several dynamic ones).
// CHECK-LABEL: func.func @batch_and_sequence
// CHECK: %[[B:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?x8xf32>
// CHECK: %[[T:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?x8xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
// CHECK: %[[G:.*]] = linalg.matmul ins(%[[ROWS]], %{{.*}} : tensor<?x8xf32>, tensor<8x2xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %[[B]], %[[T]], %{{.*}} : tensor<3xindex>
// CHECK: tensor.reshape %[[G]](%[[SHAPE]]) : (tensor<?x2xf32>, tensor<3xindex>) -> tensor<?x?x2xf32>
func.func @batch_and_sequence(%y: tensor<?x?x8xf32>, %w: tensor<8x2xf32>) -> tensor<?x?x2xf32> {
  %0 = cuvil.matmul %y, %w : (tensor<?x?x8xf32>, tensor<8x2xf32>) -> tensor<?x?x2xf32>
  return %0 : tensor<?x?x2xf32>
}

// -----

// A transpose reads each dynamic size from its input's permuted dimension.
// CHECK-LABEL: func.func @transpose_dynamic
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x12xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<12x?xf32>
// CHECK: linalg.transpose
func.func @transpose_dynamic(%x: tensor<?x12xf32>) -> tensor<12x?xf32> {
  %0 = cuvil.transpose %x {permutation = array<i64: 1, 0>} : (tensor<?x12xf32>) -> tensor<12x?xf32>
  return %0 : tensor<12x?xf32>
}

// -----

// Convolution with dynamic batch and image sizes: the padded input stays
// dynamic and each output size is (padded - extent) / stride + 1 at run time.
// CHECK-LABEL: func.func @conv_dynamic
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<?x3x?x?xf32> to tensor<?x3x?x?xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x3x?x?xf32>
// CHECK: %[[H:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x3x?x?xf32>
// CHECK: %[[HR:.*]] = arith.subi %[[H]], %{{.*}} : index
// CHECK: %[[HS:.*]] = arith.divsi %[[HR]], %{{.*}} : index
// CHECK: %[[HO:.*]] = arith.addi %[[HS]], %{{.*}} : index
// CHECK: %[[W:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x3x?x?xf32>
// CHECK: %[[WO:.*]] = arith.addi
// CHECK: %[[E:.*]] = tensor.empty(%[[N]], %[[HO]], %[[WO]]) : tensor<?x8x?x?xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x8x?x?xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %{{.*}} : tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) outs(%[[F]] : tensor<?x8x?x?xf32>)
func.func @conv_dynamic(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// Grouped: splitting the channels keeps each dynamic size in a group of its
// own, so the reshapes around the NGCHW form pass them through.
// CHECK-LABEL: func.func @grouped_conv_dynamic
// CHECK: %[[IN:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 2, %{{.*}}, %{{.*}}] : tensor<?x4x?x?xf32> into tensor<?x2x2x?x?xf32>
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}, %{{.*}}) : tensor<?x2x2x?x?xf32>
// CHECK: %[[C:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[IN]], %{{.*}} : tensor<?x2x2x?x?xf32>, tensor<2x2x2x3x3xf32>)
// CHECK: tensor.collapse_shape %[[C]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<?x2x2x?x?xf32> into tensor<?x4x?x?xf32>
func.func @grouped_conv_dynamic(%x: tensor<?x4x?x?xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// Pooling: the window is static, the output sizes are computed as for a
// convolution; without count_include_pad the divisor pools a tensor of ones
// as large as the dynamic input.
// CHECK-LABEL: func.func @pools_dynamic
// CHECK: %[[M:.*]] = tensor.empty(%{{.*}}, %{{.*}}, %{{.*}}) : tensor<?x3x?x?xf32>
// CHECK: linalg.pooling_nchw_max {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x3x?x?xf32>, tensor<3x3xf32>)
// CHECK: linalg.pooling_nchw_sum {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x3x?x?xf32>, tensor<2x2xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X:.*]], %{{.*}} : tensor<?x3x?x?xf32>
// CHECK: %[[H:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x?x?xf32>
// CHECK: %[[W:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x?x?xf32>
// CHECK: %[[ONES:.*]] = tensor.empty(%[[N]], %[[H]], %[[W]]) : tensor<?x3x?x?xf32>
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.divf
func.func @pools_dynamic(%x: tensor<?x3x?x?xf32>) -> (tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>) {
  %0 = cuvil.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
  %1 = cuvil.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
  return %0, %1 : tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>
}

// -----

// Concat along a dynamic axis: each input goes in at the running sum of the
// sizes before it, and the total sizes the result.
// CHECK-LABEL: func.func @concat_dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<?x4xf32>)
// CHECK: %[[NA:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[NB:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[AB:.*]] = arith.addi %[[NA]], %[[NB]] : index
// CHECK: %[[NA2:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[ALL:.*]] = arith.addi %[[AB]], %[[NA2]] : index
// CHECK: %[[E:.*]] = tensor.empty(%[[ALL]]) : tensor<?x4xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][%[[NA]], 0] [%{{.*}}, 4] [1, 1]
// CHECK: tensor.insert_slice %[[A]] into %[[I1]][%[[AB]], 0] [%{{.*}}, 4] [1, 1]
func.func @concat_dynamic(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cuvil.concat %a, %b, %a {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Q @ K^T of attention, both operands dynamic (batch and sequence): the
// batch dims fold into one for a batch_matmul and unfold after.
// CHECK-LABEL: func.func @attention_scores
// CHECK: %[[Q:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
// CHECK: %[[K:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<?x4x16x?xf32> into tensor<?x16x?xf32>
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[Q]], %[[K]] : tensor<?x?x16xf32>, tensor<?x16x?xf32>) outs(%{{.*}} : tensor<?x?x?xf32>)
// CHECK: tensor.expand_shape %[[S]] {{\[\[}}0, 1], [2], [3]] output_shape [%{{.*}}, 4, %{{.*}}, %{{.*}}] : tensor<?x?x?xf32> into tensor<?x4x?x?xf32>
func.func @attention_scores(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32> {
  %0 = cuvil.matmul %q, %k : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// A broadcast batch dim against several dynamic ones: one generic
// contraction reads the weight at batch index 0, nothing is materialized.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d4, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @broadcast_batch
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x8x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
func.func @broadcast_batch(%q: tensor<?x?x8x16xf32>, %k: tensor<1x16x4xf32>) -> tensor<?x?x8x4xf32> {
  %0 = cuvil.matmul %q, %k : (tensor<?x?x8x16xf32>, tensor<1x16x4xf32>) -> tensor<?x?x8x4xf32>
  return %0 : tensor<?x?x8x4xf32>
}

// -----

// Gather from data of dynamic size: the result's dynamic dims come from the
// data (before and after the axis) and from the indices (at the axis).
// CHECK-LABEL: func.func @gather_dynamic_data
// CHECK-DAG: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.empty(%[[N]]) : tensor<?x8x32xf32>
// CHECK: tensor.extract %arg0
func.func @gather_dynamic_data(%x: tensor<?x8x96xf32> {cuvil.symbols = ["N"]}, %i: tensor<32xi64>) -> tensor<?x8x32xf32> {
  %y = cuvil.gather %x, %i {axis = 2 : i64} : (tensor<?x8x96xf32>, tensor<32xi64>) -> tensor<?x8x32xf32>
  return %y : tensor<?x8x32xf32>
}

// -----

// Run-time sizes: cuvil.dim is tensor.dim; a range writes start + i * step
// over max(0, ceil((limit - start) / step)) elements; a run-time slice limit
// is clamped to the dimension before it sizes the extract_slice; reshape
// sizes spell the shape of a tensor.reshape.
// CHECK-LABEL: func.func @run_time_sizes
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi64>, %[[MASK:.*]]: tensor<1x1x16x16xf32>, %[[H:.*]]: tensor<?x8xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi64>
// CHECK: %[[T:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi64>
// CHECK: %[[EXTENT:.*]] = arith.subi %[[T]], %{{.*}} : index
// CHECK: %[[CLAMPED:.*]] = arith.maxsi %[[EXTENT]], %{{.*}} : index
// CHECK: %[[ROUNDED:.*]] = arith.addi %[[CLAMPED]], %{{.*}} : index
// CHECK: %[[SIZE:.*]] = arith.divui %[[ROUNDED]], %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty(%[[SIZE]]) : tensor<?xi64>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?xi64>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: arith.muli %[[I]], %{{.*}} : index
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: %[[ROWS:.*]] = arith.minsi %[[T]], %{{.*}} : index
// CHECK: %[[COLS:.*]] = arith.minsi %[[T]], %{{.*}} : index
// CHECK: tensor.extract_slice %[[MASK]][0, 0, 0, 0] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<1x1x16x16xf32> to tensor<1x1x?x?xf32>
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %[[N]], %[[T]], %{{.*}} : tensor<3xindex>
// CHECK: tensor.reshape %[[H]](%[[SHAPE]]) : (tensor<?x8xf32>, tensor<3xindex>) -> tensor<?x?x8xf32>
func.func @run_time_sizes(%ids: tensor<?x?xi64>, %mask: tensor<1x1x16x16xf32>, %h: tensor<?x8xf32>)
    -> (tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>) {
  %n = cuvil.dim %ids, 0 : tensor<?x?xi64>
  %t = cuvil.dim %ids, 1 : tensor<?x?xi64>
  %0 = cuvil.range %t {start = 0 : i64, step = 2 : i64} : tensor<?xi64>
  %1 = cuvil.slice %mask limit [1, 1, %t, %t] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>}
      : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
  %2 = cuvil.reshape %h (%n, %t) : (tensor<?x8xf32>) -> tensor<?x?x8xf32>
  return %0, %1, %2 : tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>
}

// -----

// A reshape that only makes sizes dynamic (left by canonicalization) is a
// tensor.cast; one of the same rank that moves sizes ([?, 16] into [2, ?])
// is a real reshape.
// CHECK-LABEL: func.func @shape_cast
// CHECK: tensor.cast %{{.*}} : tensor<1x1x6x16xf32> to tensor<1x1x?x?xf32>
// CHECK: tensor.collapse_shape %{{.*}} : tensor<?x16xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape
func.func @shape_cast(%x: tensor<1x1x6x16xf32>, %y: tensor<?x16xf32>) -> (tensor<1x1x?x?xf32>, tensor<2x?xf32>) {
  %0 = cuvil.reshape %x : (tensor<1x1x6x16xf32>) -> tensor<1x1x?x?xf32>
  %1 = cuvil.reshape %y : (tensor<?x16xf32>) -> tensor<2x?xf32>
  return %0, %1 : tensor<1x1x?x?xf32>, tensor<2x?xf32>
}


// -----

// Grouping whole dims that only one grouping fits: heads merged into the
// model width and split out again keep batch and sequence in groups of
// their own. A unit dim may join either neighbour; the sizes are the same.
// CHECK-LABEL: func.func @merge_and_split_heads
// CHECK: %[[M:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<?x?x12x64xf32> into tensor<?x?x768xf32>
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 12, 64] : tensor<?x?x768xf32> into tensor<?x?x12x64xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] : tensor<?x1x?x64xf32> into tensor<?x?x64xf32>
func.func @merge_and_split_heads(%x: tensor<?x?x12x64xf32>, %u: tensor<?x1x?x64xf32>)
    -> (tensor<?x?x12x64xf32>, tensor<?x?x64xf32>) {
  %0 = cuvil.reshape %x : (tensor<?x?x12x64xf32>) -> tensor<?x?x768xf32>
  %1 = cuvil.reshape %0 : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
  %2 = cuvil.reshape %u : (tensor<?x1x?x64xf32>) -> tensor<?x?x64xf32>
  return %1, %2 : tensor<?x?x12x64xf32>, tensor<?x?x64xf32>
}
