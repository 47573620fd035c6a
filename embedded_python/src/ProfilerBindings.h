//===- ProfilerBindings.h - The profiler library for Python ---------------===//
#ifndef CUVIL_PYTHON_PROFILERBINDINGS_H
#define CUVIL_PYTHON_PROFILERBINDINGS_H

#include <pybind11/pybind11.h>

namespace cuvil::python {

/// Adds the `profiler` submodule: Trace, read/parse/convert of trace files,
/// per-op tables, flame trees and their diff, and the process-wide event
/// recorder the runtime and cuvil.profile() share.
void bindProfiler(pybind11::module_ &m);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_PROFILERBINDINGS_H
