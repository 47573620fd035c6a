//===- PackageBindings.cpp - Packages and the deployment runtime ---------===//
//
// cuvil._cuvil.packages: the package container (write, read), IR packages
// and executable packages with their functions. cuvil.runtime and
// IRModule.save/cuvil.load_irpkg are written over these.
//
//===----------------------------------------------------------------------===//

#include "PackageBindings.h"
#include "ArrayArgs.h"
#include "ProfilingBindings.h"
#include "PyText.h"

#include "cuvil/Driver/Compiler.h"
#include "cuvil/Runtime/ExecutablePackage.h"
#include "cuvil/Runtime/MemoryPool.h"
#include "cuvil/Serialization/Package.h"

#include <pybind11/stl.h>

#include <optional>

namespace py = pybind11;
using namespace cuvil;

namespace {

/// A package that is damaged, of another kind or from a newer Cuvil.
struct PackageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// "ir", "executable", or "" for either.
std::optional<PackageKind> kindNamed(const std::string &name) {
  if (name == "ir")
    return PackageKind::IR;
  if (name == "executable")
    return PackageKind::Executable;
  if (name.empty())
    return std::nullopt;
  throw py::value_error("package kind must be 'ir' or 'executable', not '" +
                        name + "'");
}

const char *kindText(PackageKind kind) {
  return kind == PackageKind::IR ? "ir" : "executable";
}

std::unique_ptr<PackageReader> openReader(const std::string &path,
                                          const std::string &kind) {
  std::string error;
  auto reader = PackageReader::open(path, kindNamed(kind), error);
  if (!reader)
    throw PackageError(error);
  return reader;
}

py::list tensorList(const std::vector<TensorSignature> &sigs,
                    const std::vector<std::vector<std::string>> &dims) {
  py::list list;
  for (size_t i = 0; i < sigs.size(); ++i) {
    py::list shape;
    for (size_t d = 0; d < sigs[i].shape.size(); ++d) {
      if (sigs[i].shape[d] >= 0)
        shape.append(sigs[i].shape[d]);
      else if (!dims[i][d].empty())
        shape.append(dims[i][d]);
      else
        shape.append(py::none());
    }
    list.append(py::make_tuple(sigs[i].dtype, py::tuple(shape)));
  }
  return list;
}

/// One function of an opened package, keeping the package alive.
struct FunctionHandle {
  std::shared_ptr<ExecutablePackage> package;
  const PackagedFunction *function;

  std::vector<std::vector<int64_t>>
  outputShapes(const std::vector<std::vector<int64_t>> &inputs) const {
    std::vector<std::vector<int64_t>> out;
    std::string error;
    if (!cuvil::outputShapes(*function, inputs, out, error))
      throw py::value_error(function->name + ": " + error);
    return out;
  }

  /// The function's code, loaded on first use.
  std::shared_ptr<Executable> load() const {
    std::string error;
    std::shared_ptr<Executable> executable;
    {
      py::gil_scoped_release release;
      executable = package->load(*function, error);
    }
    if (!executable)
      throw PackageError(error);
    return executable;
  }

  /// The code and data pointers of one call, checked against the
  /// signature (throws naming the argument).
  struct Prepared {
    std::shared_ptr<Executable> executable;
    std::vector<void *> in, out;
    Shapes shapes;
  };
  Prepared prepare(const std::vector<py::array> &in,
                   const std::vector<py::array> &out) const {
    const PackagedFunction &fn = *function;
    if (in.size() != fn.inputs.size() || out.size() != fn.outputs.size())
      throw py::value_error(fn.name + " takes " +
                            std::to_string(fn.inputs.size()) + " inputs and " +
                            std::to_string(fn.outputs.size()) +
                            " outputs, got " + std::to_string(in.size()) +
                            " and " + std::to_string(out.size()));
    Prepared p{load(), {}, {}, {}};
    for (size_t i = 0; i < in.size(); ++i) {
      p.in.push_back(
          python::checkedData(in[i], fn.inputs[i], "input", i, false));
      p.shapes.emplace_back(in[i].shape(), in[i].shape() + in[i].ndim());
    }
    for (size_t i = 0; i < out.size(); ++i) {
      p.out.push_back(
          python::checkedData(out[i], fn.outputs[i], "output", i, true));
      p.shapes.emplace_back(out[i].shape(), out[i].shape() + out[i].ndim());
    }
    return p;
  }

  void call(const std::vector<py::array> &in, const std::vector<py::array> &out,
            MemoryPool *pool, int threads) const;
};

/// A call started by PackagedFunction.enqueue: holds the code and the
/// output arrays until wait() has run.
struct QueuedFunctionCall {
  std::string name;
  std::shared_ptr<Executable> executable;
  std::unique_ptr<PendingCall> pending;
  std::vector<py::array> outputs;

  void wait() {
    if (!pending)
      throw py::value_error(name + ": this call was already waited for");
    {
      py::gil_scoped_release release;
      pending->wait();
      pending.reset();
    }
    outputs.clear();
    python::checkCall(name);
  }
};

QueuedFunctionCall enqueueCall(const FunctionHandle &f,
                               const std::vector<py::array> &in,
                               const std::vector<py::array> &out,
                               MemoryPool *pool, int threads) {
  FunctionHandle::Prepared p = f.prepare(in, out);
  QueuedFunctionCall queued{f.function->name, p.executable, nullptr, out};
  {
    py::gil_scoped_release release;
    MemoryPool::Scope scope(pool);
    ScopedThreadCount threadCount(threads);
    queued.pending =
        p.executable->enqueue(p.in.data(), p.out.data(), nullptr, &p.shapes);
  }
  python::checkCall(f.function->name);
  return queued;
}

/// A call runs as a queued one waited for at once (on the CPU, enqueue
/// runs it; a GPU's call is the same pair).
void FunctionHandle::call(const std::vector<py::array> &in,
                          const std::vector<py::array> &out, MemoryPool *pool,
                          int threads) const {
  enqueueCall(*this, in, out, pool, threads).wait();
}

void bindExecutablePackages(py::module_ &m) {
  py::class_<FunctionHandle>(m, "PackagedFunction")
      .def_property_readonly(
          "name", [](const FunctionHandle &f) { return f.function->name; })
      .def_property_readonly(
          "aliases",
          [](const FunctionHandle &f) { return f.function->aliases; })
      .def_property_readonly(
          "input_names",
          [](const FunctionHandle &f) { return f.function->inputNames; })
      .def_property_readonly(
          "input_types",
          [](const FunctionHandle &f) {
            return tensorList(f.function->inputs, f.function->inputDims);
          },
          "(dtype, shape) per input; a symbolic dim is its symbol, an "
          "unnamed one None")
      .def_property_readonly(
          "output_types",
          [](const FunctionHandle &f) {
            return tensorList(f.function->outputs, f.function->outputDims);
          },
          "(dtype, shape) per output; a symbolic dim is its size expression")
      .def_property_readonly(
          "signature",
          [](const FunctionHandle &f) { return f.function->signatureText(); })
      .def("output_shapes", &FunctionHandle::outputShapes,
           py::arg("input_shapes"),
           "The outputs' shapes for inputs of these shapes")
      .def(
          "load", [](const FunctionHandle &f) { f.load(); },
          "Loads the function's code now (otherwise on the first call)")
      .def("__call__", &FunctionHandle::call, py::arg("inputs"),
           py::arg("outputs"), py::arg("pool") = nullptr,
           py::arg("threads") = 0,
           "Runs the code on C-contiguous arrays; writes `outputs`. "
           "Intermediates come from `pool` when given; `threads` > 0 sets "
           "the OpenMP threads for this call.")
      .def("enqueue", &enqueueCall, py::arg("inputs"), py::arg("outputs"),
           py::arg("pool") = nullptr, py::arg("threads") = 0,
           "Starts a call as __call__ does and returns a QueuedCall: GPU code "
           "has taken a copy of the inputs and queued its work on its "
           "stream; `outputs` are written by QueuedCall.wait(). Code for the "
           "CPU runs now.");

  py::class_<QueuedFunctionCall>(m, "QueuedCall")
      .def("wait", &QueuedFunctionCall::wait,
           "Blocks until the call is done and its outputs are written; "
           "raises what the call would raise.");

  py::class_<MemoryPool>(m, "MemoryPool")
      .def(py::init([](size_t bytes, const std::string &growth) {
             if (growth != "grow" && growth != "fixed")
               throw py::value_error("pool growth must be 'grow' or 'fixed', "
                                     "not '" +
                                     growth + "'");
             return std::make_unique<MemoryPool>(
                 bytes, growth == "grow" ? MemoryPool::Growth::Grow
                                         : MemoryPool::Growth::Fixed);
           }),
           py::arg("bytes"), py::arg("growth") = "grow")
      .def_property_readonly("capacity", &MemoryPool::capacity)
      .def_property_readonly("peak_bytes", &MemoryPool::peakBytes)
      .def_property_readonly("calls", &MemoryPool::calls)
      .def_property_readonly("overflows", &MemoryPool::overflows)
      .def_property_readonly("grows", &MemoryPool::grows);

  py::class_<ExecutablePackage, std::shared_ptr<ExecutablePackage>>(
      m, "ExecutablePackage")
      .def(py::init([](const std::string &path,
                       const std::string &mappedCodeDirectory) {
             std::string error;
             std::unique_ptr<ExecutablePackage> package;
             {
               py::gil_scoped_release release;
               package =
                   ExecutablePackage::open(path, error, mappedCodeDirectory);
             }
             if (!package)
               throw PackageError(error);
             return std::shared_ptr<ExecutablePackage>(std::move(package));
           }),
           py::arg("path"), py::arg("mapped_code_directory") = "")
      .def("set_device", &ExecutablePackage::setDevice, py::arg("device"),
           "The GPU functions compiled for cuda run on (before their first "
           "call)")
      .def_property_readonly("path", &ExecutablePackage::path)
      .def_property_readonly("metadata", &ExecutablePackage::metadata)
      .def_property_readonly("fingerprint", &ExecutablePackage::fingerprint)
      .def_property_readonly("function_names",
                             [](const ExecutablePackage &p) {
                               std::vector<std::string> names;
                               for (const PackagedFunction &f : p.functions())
                                 names.push_back(f.name);
                               return names;
                             })
      .def(
          "function",
          [](std::shared_ptr<ExecutablePackage> &p, const std::string &name) {
            std::string error;
            const PackagedFunction *f = p->find(name, error);
            if (!f)
              throw py::key_error(error);
            return FunctionHandle{p, f};
          },
          py::arg("name"));
}

} // namespace

void cuvil::python::bindPackages(py::module_ &parent) {
  py::module_ m = parent.def_submodule(
      "packages", "Package container, IR packages and executable packages");
  registerException<PackageError>(m, "PackageError", PyExc_ValueError);
  m.attr("FORMAT_VERSION") =
      py::make_tuple(kPackageFormat.major, kPackageFormat.minor);

  m.def(
      "write",
      [](const std::string &path, const std::string &kind,
         const std::string &metadata,
         const std::vector<std::tuple<std::string, py::bytes, bool>> &entries) {
        std::optional<PackageKind> parsed = kindNamed(kind);
        if (!parsed)
          throw py::value_error("write: give the package kind, 'ir' or "
                                "'executable'");
        PackageWriter writer(*parsed);
        std::string error;
        bool ok = writer.setMetadata(metadata, error);
        for (const auto &[name, data, compress] : entries) {
          if (!ok)
            break;
          std::string_view bytes = static_cast<std::string_view>(data);
          ok = writer.add(name, bytes, compress, error);
        }
        {
          py::gil_scoped_release release;
          ok = ok && writer.write(path, error);
        }
        if (!ok)
          throw PackageError(error);
      },
      py::arg("path"), py::arg("kind"), py::arg("metadata"), py::arg("entries"),
      "Writes a package: kind 'ir' or 'executable', a JSON object, and "
      "(name, bytes, compress) entries");

  m.def(
      "read",
      [](const std::string &path, const std::string &kind) {
        auto reader = openReader(path, kind);
        py::dict result;
        result["version"] =
            py::make_tuple(reader->version().major, reader->version().minor);
        result["metadata"] = reader->metadata();
        py::dict entries;
        for (const PackageEntry &e : reader->entries()) {
          std::string bytes, error;
          if (!reader->read(e.name, bytes, error))
            throw PackageError(error);
          entries[py::str(e.name)] = py::bytes(bytes);
        }
        result["entries"] = entries;
        return result;
      },
      py::arg("path"), py::arg("kind"),
      "Reads and checks every part of a package: {version, metadata, "
      "entries: {name: bytes}}");

  m.def(
      "verify",
      [](const std::string &path, const std::string &kind) {
        auto reader = openReader(path, kind);
        std::string error;
        bool ok = true;
        {
          py::gil_scoped_release release;
          for (const PackageEntry &e : reader->entries()) {
            std::string bytes; // one entry in memory at a time
            if (!(ok = reader->read(e.name, bytes, error)))
              break;
          }
        }
        if (!ok)
          throw PackageError(error);
      },
      py::arg("path"), py::arg("kind") = "",
      "Reads and checks every entry (digest, decompressed size), keeping "
      "none");

  m.def(
      "describe",
      [](const std::string &path, const std::string &kind) {
        auto reader = openReader(path, kind);
        py::list entries;
        for (const PackageEntry &e : reader->entries()) {
          py::dict d;
          d["name"] = e.name;
          d["codec"] = e.codec;
          d["size"] = e.size;
          d["raw_size"] = e.rawSize;
          d["sha256"] = e.sha256;
          entries.append(d);
        }
        return py::make_tuple(kindText(reader->kind()), reader->metadata(),
                              entries);
      },
      py::arg("path"), py::arg("kind") = "",
      "(kind, metadata JSON, [entry dicts]) without reading the entries; "
      "kind '' accepts either");

  m.def(
      "save_irpkg",
      [](const std::string &text, const std::string &metadata,
         const std::string &path) {
        std::string error;
        bool ok;
        {
          py::gil_scoped_release release;
          ok = saveIRPackage(text, metadata, path, error);
        }
        if (!ok)
          throw PackageError(error);
      },
      py::arg("mlir_text"), py::arg("metadata"), py::arg("path"));

  m.def(
      "load_irpkg",
      [](const std::string &path) {
        std::string text, metadata, form, error;
        bool ok;
        {
          py::gil_scoped_release release;
          ok = loadIRPackage(path, text, metadata, form, error);
        }
        if (!ok)
          throw PackageError(error);
        return py::make_tuple(text, metadata, form);
      },
      py::arg("path"),
      "(IR text, metadata JSON, 'bytecode' or 'text') of an IR package");

  m.def("host_cpu", [] {
    HostCpu host = hostCpu();
    return py::make_tuple(host.name, host.features);
  });

  bindExecutablePackages(m);
}
