//===- ArrayArgs.h - NumPy arrays as arguments of compiled code -----------===//
#ifndef CUVIL_PYTHON_ARRAYARGS_H
#define CUVIL_PYTHON_ARRAYARGS_H

#include "cuvil/Runtime/Executable.h"

#include <pybind11/numpy.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::python {

/// "(2, 3)", "(4,)" for messages.
std::string shapeText(const std::vector<int64_t> &shape);

/// Checks one array against its signature (dtype, shape with -1 for any
/// size, C-contiguous, writable when `writable`); returns its data pointer.
/// ValueError naming `role` and `index` otherwise.
void *checkedData(const pybind11::array &array, const TensorSignature &sig,
                  const char *role, size_t index, bool writable);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_ARRAYARGS_H
