//===- DeviceBindings.h - GPU memory and DLPack for cuvil.nd ----*- C++ -*-===//
#ifndef CUVIL_EMBEDDED_PYTHON_DEVICEBINDINGS_H
#define CUVIL_EMBEDDED_PYTHON_DEVICEBINDINGS_H

#include <pybind11/pybind11.h>

namespace cuvil::python {

/// `_cuvil.cuda`: DeviceBuffer (device memory Cuvil owns), DLPack capsules
/// for device memory in and out.
void bindDevices(pybind11::module_ &m);

} // namespace cuvil::python

#endif // CUVIL_EMBEDDED_PYTHON_DEVICEBINDINGS_H
