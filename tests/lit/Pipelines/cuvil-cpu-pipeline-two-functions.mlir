// RUN: %cuvil_opt %s --cuvil-cpu-pipeline | FileCheck %s

// A module with several functions lowers whole: the schedule's loop
// clean-ups match loops in the module, not in one function (before, a second
// function failed with "requires exactly one target handle").
// CHECK-DAG: llvm.func @first(
// CHECK-DAG: llvm.func @second(
func.func @first(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = cuvil.relu %x : tensor<64xf32>
  return %0 : tensor<64xf32>
}

func.func @second(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %0 = cuvil.matmul %a, %b : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %1 = cuvil.tanh %0 : tensor<16x8xf32>
  return %1 : tensor<16x8xf32>
}
