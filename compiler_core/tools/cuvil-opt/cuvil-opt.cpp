//===- cuvil-opt.cpp - mlir-opt for the cuvil dialect ---------------------===//
//
// Parses, verifies and transforms IR with every upstream dialect and pass
// plus the cuvil dialect, its passes and the Cuvil pipelines.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Conversion/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"
#include "cuvil/Pipelines/Pipelines.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::cuvil::registerCuvilPasses();
  mlir::cuvil::registerCuvilPipelines();

  mlir::DialectRegistry registry;
  mlir::cuvil::registerCuvilDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Cuvil optimizer driver\n", registry));
}
