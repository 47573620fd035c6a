//===- Passes.td - The example pass plugin's passes --------*- tablegen -*-===//
#ifndef CUVIL_PLUGINS_EXAMPLE_PASSES_TD
#define CUVIL_PLUGINS_EXAMPLE_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldDoubleNegation : Pass<"cuvil-example-fold-double-negation"> {
  let summary = "Example out-of-tree pass: neg(neg(x)) -> x";
  let description = [{
    Shipped as an MLIR pass plugin to show the plugin contract: a shared
    library exporting `mlirGetPassPluginInfo`, loaded with
    `cuvil-opt --load-pass-plugin=<path>`. It matches cuvil ops by name
    (plugins do not link the dialect's C++ classes).

    Before:
    ```mlir
    %1 = cuvil.neg %0 : tensor<4xf32>
    %2 = cuvil.neg %1 : tensor<4xf32>
    ```
    After: uses of `%2` use `%0`.
  }];
}

#endif // CUVIL_PLUGINS_EXAMPLE_PASSES_TD
