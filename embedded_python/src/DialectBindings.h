//===- DialectBindings.h - The cuvil dialect's tables and rules for Python ===//
#ifndef CUVIL_PYTHON_DIALECTBINDINGS_H
#define CUVIL_PYTHON_DIALECTBINDINGS_H

#include <pybind11/pybind11.h>

namespace cuvil::python {

/// Binds dtypes(), infer_result_type(), check_op() and TypeInferenceError.
void bindDialect(pybind11::module_ &m);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_DIALECTBINDINGS_H
