// Options of the registered cuvil-<target>-pipeline: an unknown up-to phase
// fails, listing the phases there are, for every spelling of the pipeline.
// RUN: %not %cuvil_opt %s --cuvil-cpu-pipeline=up-to=bogus 2>&1 | FileCheck %s
// RUN: %not %cuvil_opt %s --pass-pipeline="builtin.module(cuvil-cpu-pipeline{up-to=bogus})" 2>&1 | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=up-to=linalg | FileCheck %s --check-prefix=LINALG
// The help names the phases (its text once dangled and printed garbage).
// RUN: %cuvil_opt --help | FileCheck %s --check-prefix=HELP

// CHECK: error: unknown phase 'bogus' for up-to; expected cuvil, linalg, {{.*}} or llvm
// HELP: --cuvil-cpu-pipeline
// HELP: --up-to=<string> {{.*}}- Stop after this phase (cuvil, linalg, fusion, schedule, bufferize or llvm)
// LINALG-LABEL: func.func @f
// LINALG: linalg.generic
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.neg %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
