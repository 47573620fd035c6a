//===- PipelineBindings.h - Passes, pipelines and IR handles for Python ---===//
#ifndef CUVIL_PYTHON_PIPELINEBINDINGS_H
#define CUVIL_PYTHON_PIPELINEBINDINGS_H

#include "cuvil/Driver/Compiler.h"

#include <pybind11/pybind11.h>

#include <vector>

namespace cuvil::python {

/// Binds Operation, Value, default_pipeline, load_pass_plugin and
/// check_pass_pipeline.
void bindPipeline(pybind11::module_ &m);

/// Converts the `steps` argument of compile(): a sequence of
/// (name, phase, pipeline, optional, callable-or-None); None -> empty.
std::vector<PipelineStep> stepsFromPython(const pybind11::object &steps);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_PIPELINEBINDINGS_H
