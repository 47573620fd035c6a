//===- DeviceBindings.cpp - GPU memory and DLPack for cuvil.nd ------------===//
//
// cuvil.nd arrays on a GPU hold a DeviceBuffer; they leave as DLPack
// capsules whose deleter releases the array, and DLPack tensors of other
// libraries (PyTorch, CuPy) come in without a copy, their capsule kept
// until the array that wraps them goes. Every capsule is checked: its
// name, device, dtype, that it is C-contiguous.
//
//===----------------------------------------------------------------------===//

#include "DeviceBindings.h"

#include "cuvil/Runtime/CudaExecutable.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using cuvil::cuda::DeviceBuffer;

namespace {

struct DTypeCode {
  const char *name;
  uint8_t code, bits;
};
constexpr DTypeCode kDTypes[] = {
    {"float32", kDLFloat, 32}, {"float16", kDLFloat, 16},
    {"float64", kDLFloat, 64}, {"bfloat16", kDLBfloat, 16},
    {"int8", kDLInt, 8},       {"int16", kDLInt, 16},
    {"int32", kDLInt, 32},     {"int64", kDLInt, 64},
    {"uint8", kDLUInt, 8},
};

DLDataType dlType(const std::string &name) {
  for (const DTypeCode &d : kDTypes)
    if (name == d.name)
      return DLDataType{d.code, d.bits, 1};
  throw py::value_error("cuvil.nd: dtype " + name +
                        " has no DLPack code Cuvil exchanges");
}

std::string dtypeName(DLDataType type) {
  for (const DTypeCode &d : kDTypes)
    if (type.code == d.code && type.bits == d.bits && type.lanes == 1)
      return d.name;
  throw py::value_error(
      "cuvil.nd.from_dlpack: a tensor of DLPack type code " +
      std::to_string(type.code) + ", " + std::to_string(type.bits) + " bits, " +
      std::to_string(type.lanes) + " lanes: not a dtype Cuvil computes on");
}

/// What an exported capsule owns: the array's Python owner and the shapes.
struct Exported {
  DLManagedTensor tensor;
  std::vector<int64_t> shape;
  py::object owner;
};

void deleteExported(DLManagedTensor *tensor) {
  py::gil_scoped_acquire gil;
  delete static_cast<Exported *>(tensor->manager_ctx);
}

void capsuleDestructor(PyObject *capsule) {
  // A capsule nobody consumed still owns its tensor.
  if (!PyCapsule_IsValid(capsule, "dltensor"))
    return;
  auto *tensor =
      static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (tensor && tensor->deleter)
    tensor->deleter(tensor);
}

/// Keeps a consumed DLPack tensor alive until released.
class Imported {
public:
  explicit Imported(DLManagedTensor *tensor) : tensor(tensor) {}
  ~Imported() {
    if (tensor && tensor->deleter)
      tensor->deleter(tensor);
  }
  Imported(const Imported &) = delete;
  Imported &operator=(const Imported &) = delete;

private:
  DLManagedTensor *tensor;
};

/// The array's bytes as NumPy counts them (pybind11 2.10's nbytes() reads
/// the itemsize from a descriptor layout NumPy 2 changed).
size_t bytesOf(const py::array &array) {
  return array.attr("nbytes").cast<size_t>();
}

/// Runs `copy(data, bytes, error)` on `array`'s memory without the GIL:
/// the array must be C-contiguous (and writable when `writing`); failures
/// raise, naming `what`.
template <typename Copy>
void copyArray(py::array array, bool writing, const char *what, Copy copy) {
  if (!(array.flags() & py::array::c_style) || (writing && !array.writeable()))
    throw py::value_error(std::string("cuvil.nd: ") + what + " needs a " +
                          (writing ? "writable " : "") + "C-contiguous array");
  // Read with the GIL held: both go through Python objects.
  size_t bytes = bytesOf(array);
  void *data =
      writing ? array.mutable_data() : const_cast<void *>(array.data());
  std::string error;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = copy(data, bytes, error);
  }
  if (!ok)
    throw std::runtime_error("cuvil.nd: " + error);
}

} // namespace

void cuvil::python::bindDevices(py::module_ &m) {
  py::module_ cuda = m.def_submodule(
      "cuda", "GPU memory for cuvil.nd arrays, and DLPack capsules of it");

  py::class_<DeviceBuffer, std::shared_ptr<DeviceBuffer>>(cuda, "DeviceBuffer")
      .def(py::init([](size_t bytes, int device) {
             std::string error;
             std::unique_ptr<DeviceBuffer> buffer =
                 DeviceBuffer::allocate(device, bytes, error);
             if (!buffer)
               throw std::runtime_error(
                   "cuvil.nd: cannot allocate " + std::to_string(bytes) +
                   " bytes on cuda:" + std::to_string(device) + ": " + error);
             return std::shared_ptr<DeviceBuffer>(std::move(buffer));
           }),
           py::arg("nbytes"), py::arg("device") = 0)
      .def_property_readonly("ptr",
                             [](const DeviceBuffer &b) {
                               return reinterpret_cast<uintptr_t>(b.data());
                             })
      .def_property_readonly("nbytes", &DeviceBuffer::size)
      .def_property_readonly("device", &DeviceBuffer::device)
      .def(
          "upload",
          [](DeviceBuffer &self, py::array source) {
            copyArray(source, /*writing=*/false, "upload",
                      [&](void *data, size_t bytes, std::string &error) {
                        return self.copyFromHost(data, bytes, error);
                      });
          },
          py::arg("source"), "Copies a C-contiguous array into the buffer")
      .def(
          "download",
          [](const DeviceBuffer &self, py::array target) {
            copyArray(target, /*writing=*/true, "download",
                      [&](void *data, size_t bytes, std::string &error) {
                        return self.copyToHost(data, bytes, error);
                      });
          },
          py::arg("target"), "Copies the buffer into a C-contiguous array");

  cuda.def(
      "reserve_pool",
      [](int device, uint64_t bytes) {
        std::string error;
        bool ok;
        {
          py::gil_scoped_release release;
          ok = cuvil::cuda::reservePool(device, bytes, error);
        }
        if (!ok)
          throw std::runtime_error("cuda:" + std::to_string(device) + ": " +
                                   error);
      },
      py::arg("device"), py::arg("bytes"),
      "Makes the device's memory pool keep `bytes` between calls and "
      "reserves them now");

  cuda.def(
      "to_dlpack",
      [](py::object owner, uintptr_t pointer, int device,
         const std::vector<int64_t> &shape, const std::string &dtype) {
        auto *exported = new Exported();
        exported->shape = shape;
        exported->owner = std::move(owner);
        DLTensor &t = exported->tensor.dl_tensor;
        t.data = reinterpret_cast<void *>(pointer);
        t.device = DLDevice{kDLCUDA, device};
        t.ndim = static_cast<int32_t>(exported->shape.size());
        try {
          t.dtype = dlType(dtype);
        } catch (...) {
          delete exported;
          throw;
        }
        t.shape = exported->shape.data();
        t.strides = nullptr; // C-contiguous
        t.byte_offset = 0;
        exported->tensor.manager_ctx = exported;
        exported->tensor.deleter = deleteExported;
        return py::capsule(&exported->tensor, "dltensor", capsuleDestructor);
      },
      py::arg("owner"), py::arg("ptr"), py::arg("device"), py::arg("shape"),
      py::arg("dtype"),
      "A DLPack capsule of device memory kept alive by `owner`");

  cuda.def(
      "copy_to_host",
      [](uintptr_t source, int device, py::array target) {
        copyArray(target, /*writing=*/true, "copy_to_host",
                  [&](void *data, size_t bytes, std::string &error) {
                    return cuvil::cuda::copyDeviceToHost(
                        device, reinterpret_cast<const void *>(source), data,
                        bytes, error);
                  });
      },
      py::arg("ptr"), py::arg("device"), py::arg("target"),
      "Copies device memory at `ptr` (any owner) into a NumPy array");

  py::class_<Imported, std::shared_ptr<Imported>>(cuda, "ImportedTensor");
  cuda.def(
      "from_dlpack",
      [](py::capsule capsule) {
        if (std::string(capsule.name() ? capsule.name() : "") != "dltensor")
          throw py::value_error(
              "cuvil.nd.from_dlpack: the capsule was consumed already or is "
              "not a DLPack tensor");
        auto *tensor = static_cast<DLManagedTensor *>(capsule.get_pointer());
        if (!tensor)
          throw py::value_error("cuvil.nd.from_dlpack: an empty capsule");
        const DLTensor &t = tensor->dl_tensor;
        if (t.device.device_type != kDLCUDA)
          throw py::value_error("cuvil.nd.from_dlpack: a tensor on DLPack "
                                "device type " +
                                std::to_string(t.device.device_type) +
                                ", not a CUDA GPU");
        if (t.ndim < 0 || t.ndim > 32 || (t.ndim > 0 && !t.shape))
          throw py::value_error("cuvil.nd.from_dlpack: a malformed tensor (" +
                                std::to_string(t.ndim) + " dimensions)");
        std::string dtype = dtypeName(t.dtype);
        std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
        // C-contiguous: strides absent, or each the product of the sizes
        // after it (size-1 dimensions may have any stride).
        if (t.strides) {
          int64_t expected = 1;
          for (int d = t.ndim - 1; d >= 0; --d) {
            if (shape[d] < 0)
              throw py::value_error("cuvil.nd.from_dlpack: negative size");
            if (shape[d] != 1 && t.strides[d] != expected)
              throw py::value_error(
                  "cuvil.nd.from_dlpack: the tensor is not C-contiguous; fix: "
                  "make it contiguous first (.contiguous() in PyTorch)");
            expected *= shape[d];
          }
        }
        // Consumed: the capsule no longer owns the tensor; the holder does.
        PyCapsule_SetName(capsule.ptr(), "used_dltensor");
        auto holder = std::make_shared<Imported>(tensor);
        uintptr_t data =
            reinterpret_cast<uintptr_t>(t.data) + uintptr_t(t.byte_offset);
        return py::make_tuple(data, t.device.device_id, shape, dtype, holder);
      },
      py::arg("capsule"),
      "(ptr, device, shape, dtype, holder) of a CUDA DLPack capsule, which it "
      "consumes; the holder keeps the tensor alive");
}
