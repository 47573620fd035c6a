// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file --verify-diagnostics

// What still needs static sizes is named with the op and its location, not
// left to the conversion's "failed to legalize".
func.func @reshape_into_two_dynamic_dims(%x: tensor<?x?xf32>) -> tensor<?x2x?xf32> {
  // expected-error @+1 {{'cuvil.reshape' op reshaping tensor<?x?xf32> into tensor<?x2x?xf32> needs static sizes for all but one result dimension}}
  %0 = cuvil.reshape %x : (tensor<?x?xf32>) -> tensor<?x2x?xf32>
  return %0 : tensor<?x2x?xf32>
}
