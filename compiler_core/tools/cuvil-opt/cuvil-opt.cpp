//===- cuvil-opt.cpp - mlir-opt for the cuvil dialect ---------------------===//
//
// Parses, verifies and transforms IR with every upstream dialect and pass
// plus the cuvil dialect, its passes, the registered targets' passes and
// one `cuvil-<target>-pipeline` per target.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/TargetBackend.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::cuvil::registerCuvilPasses();
  mlir::cuvil::registerBuiltinTargets();
  std::string error;
  if (!mlir::cuvil::registerCuvilPipelines(error)) {
    llvm::errs() << "cuvil-opt: " << error << "\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  mlir::cuvil::registerCuvilDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Cuvil optimizer driver\n", registry));
}
