// RUN: %cuvil_opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-gathers-as-loads))" | FileCheck %s

// A stride-2 convolution's column gather (the stem's, cut to 8 lanes): lane
// i reads the element 2 * i after lane 0's, its index a row offset (uniform
// across lanes) plus a constant progression. One load of 15 elements from
// the flattened image and a shuffle keeping every other one.
// CHECK-LABEL: func.func @stride_two
// CHECK-NOT: vector.gather
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1, 2]] : memref<3x230x230xf32> into memref<158700xf32>
// CHECK: %[[FIRST:.*]] = vector.extract %[[IDX:.*]][0] : index from vector<8xindex>
// CHECK: %[[ROW:.*]] = vector.load %[[FLAT]][%[[FIRST]]] : memref<158700xf32>, vector<15xf32>
// CHECK: %[[EVEN:.*]] = vector.shuffle %[[ROW]], %[[ROW]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<15xf32>, vector<15xf32>
// CHECK: return %[[EVEN]]
func.func @stride_two(%img: memref<3x230x230xf32>, %c: index, %h: index, %w: index) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %rows = arith.constant dense<230> : vector<8xindex>
  %even = arith.constant dense<[0, 2, 4, 6, 8, 10, 12, 14]> : vector<8xindex>
  %all = arith.constant dense<true> : vector<8xi1>
  %pass = arith.constant dense<0.0> : vector<8xf32>
  %cv = vector.broadcast %c : index to vector<8xindex>
  %plane = arith.muli %cv, %rows : vector<8xindex>
  %hv = vector.broadcast %h : index to vector<8xindex>
  %row = arith.addi %hv, %plane : vector<8xindex>
  %rowStart = arith.muli %row, %rows : vector<8xindex>
  %wv = vector.broadcast %w : index to vector<8xindex>
  %cols = arith.addi %wv, %even : vector<8xindex>
  %idx = arith.addi %cols, %rowStart : vector<8xindex>
  %g = vector.gather %img[%c0, %c0, %c0] [%idx], %all, %pass : memref<3x230x230xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  return %g : vector<8xf32>
}

// -----

// Consecutive lanes (vector.step, scaled by 1; i32 indices, offset from a
// base index of 1 along the rows): one load, no shuffle. The start is the
// base's row-major offset plus lane 0's index.
// CHECK-LABEL: func.func @consecutive
// CHECK-NOT: vector.gather
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1]] : memref<?x16xf32> into memref<?xf32>
// CHECK: %[[FIRST:.*]] = vector.extract %{{.*}}[0] : i32 from vector<4xi32>
// CHECK: %[[AT:.*]] = arith.index_cast %[[FIRST]] : i32 to index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[ROW:.*]] = arith.muli %c1, %[[C16]] : index
// CHECK: %[[START:.*]] = arith.addi %[[AT]], %[[ROW]] : index
// CHECK: %[[V:.*]] = vector.load %[[FLAT]][%[[START]]] : memref<?xf32>, vector<4xf32>
// CHECK-NOT: vector.shuffle
// CHECK: return %[[V]]
func.func @consecutive(%m: memref<?x16xf32>, %at: i32) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant dense<1> : vector<4xi32>
  %all = arith.constant dense<true> : vector<4xi1>
  %pass = arith.constant dense<0.0> : vector<4xf32>
  %step = vector.step : vector<4xindex>
  %lanes = arith.index_cast %step : vector<4xindex> to vector<4xi32>
  %scaled = arith.muli %one, %lanes : vector<4xi32>
  %atv = vector.broadcast %at : i32 to vector<4xi32>
  %idx = arith.addi %scaled, %atv : vector<4xi32>
  %g = vector.gather %m[%c1, %c0] [%idx], %all, %pass : memref<?x16xf32>, vector<4xi32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  return %g : vector<4xf32>
}

// -----

// An embedding's row: the token id, wrapped and clamped lane by lane (a
// compare, a select, min and max of a broadcast: the same in every lane),
// times the row length, plus the column and 0..7. One load of the 8
// consecutive elements.
// CHECK-LABEL: func.func @embedding_row
// CHECK-NOT: vector.gather
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1]] : memref<64x32xf32> into memref<2048xf32>
// CHECK: %[[FIRST:.*]] = vector.extract %{{.*}}[0] : index from vector<8xindex>
// CHECK: %[[ROW:.*]] = vector.load %[[FLAT]][%[[FIRST]]] : memref<2048xf32>, vector<8xf32>
// CHECK-NOT: vector.shuffle
// CHECK: return %[[ROW]]
func.func @embedding_row(%table: memref<64x32xf32>, %token: index, %col: index) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0> : vector<8xindex>
  %rows = arith.constant dense<64> : vector<8xindex>
  %last = arith.constant dense<63> : vector<8xindex>
  %width = arith.constant dense<32> : vector<8xindex>
  %lanes = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xindex>
  %all = arith.constant dense<true> : vector<8xi1>
  %pass = arith.constant dense<0.0> : vector<8xf32>
  %t = vector.broadcast %token : index to vector<8xindex>
  %negative = arith.cmpi slt, %t, %zero : vector<8xindex>
  %wrapped = arith.addi %t, %rows : vector<8xindex>
  %id = arith.select %negative, %wrapped, %t : vector<8xi1>, vector<8xindex>
  %low = arith.minsi %id, %last : vector<8xindex>
  %clamped = arith.maxsi %low, %zero : vector<8xindex>
  %start = arith.muli %clamped, %width : vector<8xindex>
  %c = vector.broadcast %col : index to vector<8xindex>
  %cols = arith.addi %c, %lanes : vector<8xindex>
  %idx = arith.addi %cols, %start : vector<8xindex>
  %g = vector.gather %table[%c0, %c0] [%idx], %all, %pass : memref<64x32xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  return %g : vector<8xf32>
}

// -----

// Gathers left alone: a mask not known all-true, lanes not evenly spaced,
// lanes 5 apart (wider than the load is worth), a progression scaled by a
// value not known at compile time, and a base with a strided layout (left
// to cuvil-lower-strided-gathers), booleans (LLVM would load a vector of
// i1 as packed bits; the memref holds one per byte), and a select between
// two progressions by a mask that differs between lanes.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-7: vector.gather
// CHECK-NOT: vector.load
// CHECK-NOT: vector.shuffle
func.func @left_alone(%m: memref<64xf32>, %s: memref<8x8xf32, strided<[16, 2]>>, %bits: memref<64xi1>, %mask: vector<4xi1>, %k: index) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xi1>, vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %all = arith.constant dense<true> : vector<4xi1>
  %pass = arith.constant dense<0.0> : vector<4xf32>
  %even = arith.constant dense<[0, 2, 4, 6]> : vector<4xindex>
  %uneven = arith.constant dense<[0, 2, 5, 6]> : vector<4xindex>
  %five = arith.constant dense<[0, 5, 10, 15]> : vector<4xindex>
  %kv = vector.broadcast %k : index to vector<4xindex>
  %scaled = arith.muli %even, %kv : vector<4xindex>
  %a = vector.gather %m[%c0] [%even], %mask, %pass : memref<64xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %b = vector.gather %m[%c0] [%uneven], %all, %pass : memref<64xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %c = vector.gather %m[%c0] [%five], %all, %pass : memref<64xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %d = vector.gather %m[%c0] [%scaled], %all, %pass : memref<64xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %e = vector.gather %s[%c0, %c0] [%even], %all, %pass : memref<8x8xf32, strided<[16, 2]>>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %f = vector.gather %bits[%c0] [%even], %all, %mask : memref<64xi1>, vector<4xindex>, vector<4xi1>, vector<4xi1> into vector<4xi1>
  %odd = arith.constant dense<[1, 3, 5, 7]> : vector<4xindex>
  %picked = arith.select %mask, %even, %odd : vector<4xi1>, vector<4xindex>
  %g = vector.gather %m[%c0] [%picked], %all, %pass : memref<64xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  return %a, %b, %c, %d, %e, %f, %g : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xi1>, vector<4xf32>
}
