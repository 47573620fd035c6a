//===- PackageBindings.h - Packages and the deployment runtime ------------===//
#ifndef CUVIL_PYTHON_PACKAGEBINDINGS_H
#define CUVIL_PYTHON_PACKAGEBINDINGS_H

#include <pybind11/pybind11.h>

namespace cuvil::python {

/// Adds the `packages` submodule to the extension.
void bindPackages(pybind11::module_ &m);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_PACKAGEBINDINGS_H
