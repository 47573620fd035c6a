//===- PyText.h - C++ bytes to Python text without losing any of it -------===//
//
// Names and messages come from files and user code: any bytes at all.
// pybind11 decodes std::string strictly, so one bad byte turns a name into a
// UnicodeDecodeError and an exception message into an empty str(error).
// Everything crossing into Python as text goes through these helpers.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PYTHON_PYTEXT_H
#define CUVIL_PYTHON_PYTEXT_H

#include <pybind11/pybind11.h>

#include <exception>
#include <string_view>

namespace cuvil::python {

/// `bytes` as UTF-8, each invalid byte replaced by U+FFFD.
inline pybind11::str pyText(std::string_view bytes) {
  PyObject *text =
      PyUnicode_DecodeUTF8(bytes.data(), Py_ssize_t(bytes.size()), "replace");
  if (!text)
    throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::str>(text);
}

/// Raises `type` with `message` decoded as pyText does (PyErr_SetString
/// would drop the whole message at the first invalid byte).
inline void setPythonError(PyObject *type, std::string_view message) {
  pybind11::str text = pyText(message);
  PyErr_SetObject(type, text.ptr());
}

/// Adds the Python exception `name` (a subclass of `base`) to `m` and
/// translates C++ exceptions of type `E` to it, message through pyText.
template <typename E>
void registerException(pybind11::module_ &m, const char *name, PyObject *base) {
  static pybind11::exception<E> type(m, name, base);
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const E &e) {
      setPythonError(type.ptr(), e.what());
    }
  });
}

} // namespace cuvil::python

#endif // CUVIL_PYTHON_PYTEXT_H
