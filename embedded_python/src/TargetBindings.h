//===- TargetBindings.h - Targets, devices and phase tables for Python ----===//
#ifndef CUVIL_PYTHON_TARGETBINDINGS_H
#define CUVIL_PYTHON_TARGETBINDINGS_H

#include <pybind11/pybind11.h>

namespace cuvil::python {

/// Binds available_targets, parse_device, load_target_plugin and the name
/// tables of phases, IR stages and artifact kinds.
void bindTargets(pybind11::module_ &m);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_TARGETBINDINGS_H
