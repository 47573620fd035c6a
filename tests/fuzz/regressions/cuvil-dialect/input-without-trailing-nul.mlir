
func.func @case5(%a: tensor<3xi1>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result element type 'f64' differs fromaffine.for the inferred element type 'f32'}}
  %0 = cuvil.where %a, %b, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf64>
  return
}
