// A plugin that cannot be loaded is an error (exit 1) naming it and why, not
// "Request ignored" and exit 0 from a run that did not do what was asked;
// both spellings of the flag, pass and dialect plugins.
// RUN: %not %cuvil_opt %s --load-pass-plugin=%t.missing.so 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: %not %cuvil_opt %s --load-pass-plugin %t.missing.so 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: %not %cuvil_opt %s -load-dialect-plugin=%t.missing.so 2>&1 | FileCheck %s --check-prefix=DIALECT
// A file that is not a plugin (no mlirGetPassPluginInfo) is refused too.
// RUN: %not %cuvil_opt %s --load-pass-plugin=%cuvil_lib/libCuvilNvtxRecordingTool.so 2>&1 | FileCheck %s --check-prefix=NOT-A-PLUGIN
// The working plugin still loads and runs.
// RUN: %cuvil_opt %s --load-pass-plugin=%cuvil_lib/CuvilExamplePlugin.so --pass-pipeline="builtin.module(cuvil-example-fold-double-negation)" | FileCheck %s --check-prefix=LOADED

// PASS: cuvil-opt: cannot load the pass plugin '{{.*}}.missing.so': {{.+}}
// PASS-NEXT: (give the path of a shared library built against MLIR 19 that exports mlirGetPassPluginInfo)
// DIALECT: cuvil-opt: cannot load the dialect plugin '{{.*}}.missing.so': {{.+}}
// NOT-A-PLUGIN: cannot load the pass plugin '{{.*}}libCuvilNvtxRecordingTool.so': Plugin entry point not found
// LOADED-LABEL: func.func @f
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
