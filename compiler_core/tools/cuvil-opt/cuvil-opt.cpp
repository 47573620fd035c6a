//===- cuvil-opt.cpp - mlir-opt for the cuvil dialect ---------------------===//
//
// Parses, verifies and transforms IR with every upstream dialect and pass
// plus the cuvil dialect, its passes, the registered targets' passes and
// one `cuvil-<target>-pipeline` per target.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/TargetBackend.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/raw_ostream.h"

/// MlirOptMain reports a plugin that fails to load, ignores the request and
/// exits 0 from a run that did not do what was asked. Each plugin named on
/// the command line is loaded here first (loading again is harmless) and a
/// failure is an error naming the plugin and the reason.
static bool loadPlugins(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    arg = arg.ltrim('-');
    bool dialect = arg.consume_front("load-dialect-plugin");
    if (!dialect && !arg.consume_front("load-pass-plugin"))
      continue;
    std::string path;
    if (arg.consume_front("="))
      path = arg.str();
    else if (arg.empty() && i + 1 < argc)
      path = argv[++i];
    else
      continue; // another flag with the same prefix
    llvm::Error error = dialect ? mlir::DialectPlugin::load(path).takeError()
                                : mlir::PassPlugin::load(path).takeError();
    if (error) {
      llvm::errs() << "cuvil-opt: cannot load the "
                   << (dialect ? "dialect" : "pass") << " plugin '" << path
                   << "': " << llvm::toString(std::move(error))
                   << "\n(give the path of a shared library built against "
                      "MLIR 19 that exports mlirGet"
                   << (dialect ? "Dialect" : "Pass") << "PluginInfo)\n";
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  if (!loadPlugins(argc, argv))
    return 1;
  mlir::cuvil::registerCuvilPasses();
  mlir::cuvil::registerBuiltinTargets();
  std::string error;
  if (!mlir::cuvil::registerCuvilPipelines(error)) {
    llvm::errs() << "cuvil-opt: " << error << "\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  mlir::cuvil::registerCuvilDialects(registry);
  // What the targets' passes need besides dialects (the NVVM target's
  // serialization for gpu-module-to-binary, LLVM IR translations).
  for (const std::string &name : mlir::cuvil::TargetRegistry::names())
    mlir::cuvil::TargetRegistry::lookup(name)->registerDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Cuvil optimizer driver\n", registry));
}
