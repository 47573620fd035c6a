//===- TargetPlugin.h - Target backends from a shared library ---*- C++ -*-===//
//
// A target plugin is a shared library built against the same MLIR and Cuvil
// headers that exports
//
//   extern "C" CUVIL_TARGET_PLUGIN_EXPORT void
//   cuvilRegisterTargetPlugin(cuvil::TargetPluginRegistrar *registrar);
//
// and hands each of its backends to `registrar->add`. The process that
// loads it (cuvil.load_target_plugin, Workbench, CLI) owns the backends; the
// plugin stays loaded for the life of the process.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGET_TARGETPLUGIN_H
#define CUVIL_TARGET_TARGETPLUGIN_H

#include "cuvil/Target/TargetBackend.h"

#define CUVIL_TARGET_PLUGIN_EXPORT __attribute__((visibility("default")))

namespace cuvil {

/// Bumped when TargetBackend's layout changes; a plugin built against
/// another version is refused.
constexpr int kTargetPluginApiVersion = 1;

struct TargetPluginRegistrar {
  int apiVersion;
  /// Takes ownership of `backend`; false when a target of that name exists.
  bool (*add)(TargetPluginRegistrar *self, mlir::cuvil::TargetBackend *backend);
  void *context;
};

} // namespace cuvil

extern "C" {
typedef void (*CuvilRegisterTargetPluginFn)(cuvil::TargetPluginRegistrar *);
}

#endif // CUVIL_TARGET_TARGETPLUGIN_H
