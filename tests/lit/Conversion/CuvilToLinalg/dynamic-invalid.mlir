// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file --verify-diagnostics

// What still needs static sizes is named with the op and its location, not
// left to the conversion's "failed to legalize".
func.func @reshape_into_two_dynamic_dims(%x: tensor<?x?xf32>) -> tensor<?x2x?xf32> {
  // expected-error @+1 {{'cuvil.reshape' op reshaping tensor<?x?xf32> into tensor<?x2x?xf32> leaves open which input dimensions make up each dynamic result dimension}}
  %0 = cuvil.reshape %x : (tensor<?x?xf32>) -> tensor<?x2x?xf32>
  return %0 : tensor<?x2x?xf32>
}

// -----

// [N, 12, T, 64] into [?, ?, 64] merges the heads into the batch or into the
// sequence: both fit the types, so the sizes must be given, not guessed.
func.func @reshape_ambiguous_grouping(%x: tensor<?x12x?x64xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'cuvil.reshape' op reshaping tensor<?x12x?x64xf32> into tensor<?x?x64xf32> leaves open which input dimensions make up each dynamic result dimension}}
  %0 = cuvil.reshape %x : (tensor<?x12x?x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Expanding: [?, 64] into [?, ?, 8, 8] could split the rows into (?, ?) or
// the row length among the dynamic dims; refused without sizes.
func.func @expand_ambiguous_grouping(%x: tensor<?x?xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'cuvil.reshape' op reshaping tensor<?x?xf32> into tensor<?x4x?x8xf32> leaves open which input dimensions make up each dynamic result dimension}}
  %0 = cuvil.reshape %x : (tensor<?x?xf32>) -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

// An empty tensor is refused with the op, not left to MLIR's tiling (which
// divides by the size 0 and crashes).
func.func @empty(%x: tensor<?x2x0x4xf32>, %y: tensor<?x2x4x?xf32>) -> tensor<?x2x0x?xf32> {
  // expected-error @+1 {{'cuvil.matmul' op works on an empty tensor ([?, 2, 0, 4]): Cuvil does not compile tensors with a dimension of size 0}}
  %0 = cuvil.matmul %x, %y : (tensor<?x2x0x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x0x?xf32>
  return %0 : tensor<?x2x0x?xf32>
}
