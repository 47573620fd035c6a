//===- CuvilModule.cpp - The cuvil._cuvil Python extension ----------------===//
//
// Binds the compiler's public interface. NumPy arrays cross as buffers: the
// compiled code reads and writes their memory directly, without copies.
//
//===----------------------------------------------------------------------===//

#include "ArrayArgs.h"
#include "DeviceBindings.h"
#include "DialectBindings.h"
#include "PackageBindings.h"
#include "PipelineBindings.h"
#include "ProfilerBindings.h"
#include "ProfilingBindings.h"
#include "PyText.h"
#include "TargetBindings.h"

#include "cuvil/Driver/Compiler.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

/// Raised for IR that does not parse, verify or compile.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The bytes of a 1-D contiguous buffer (`what` names it in the error).
std::string_view contiguousBytes(const py::buffer_info &info,
                                 const std::string &what) {
  if (info.ndim != 1 || info.strides[0] != info.itemsize)
    throw py::value_error(what + ": pass contiguous bytes (a 1-D buffer), "
                                 "not a strided view");
  return {static_cast<const char *>(info.ptr),
          static_cast<size_t>(info.size * info.itemsize)};
}

py::dict sourceDict(const cuvil::SourceLocation &source) {
  py::dict d;
  d["file"] = source.file;
  d["line"] = source.line;
  d["column"] = source.column;
  d["name"] = source.name;
  return d;
}

cuvil::IRStage irStageNamed(const cuvil::CompiledFunction &fn,
                            const std::string &name) {
  if (std::optional<cuvil::IRStage> stage = cuvil::parseIRStage(name))
    return *stage;
  std::vector<std::string> names;
  for (cuvil::IRStage stage : fn.stages())
    names.push_back(cuvil::irStageName(stage));
  throw CompileError("unknown IR stage '" + name + "'; expected " +
                     cuvil::joinNames(names));
}

cuvil::ArtifactKind artifactNamed(const cuvil::CompiledFunction &fn,
                                  const std::string &name) {
  if (std::optional<cuvil::ArtifactKind> kind = cuvil::parseArtifactKind(name))
    return *kind;
  std::vector<std::string> names;
  for (cuvil::ArtifactKind kind : fn.artifacts())
    names.push_back(cuvil::artifactName(kind));
  throw CompileError("unknown artifact kind '" + name + "'; expected " +
                     cuvil::joinNames(names));
}

py::list signatures(const std::vector<cuvil::TensorSignature> &sigs) {
  py::list list;
  for (const cuvil::TensorSignature &sig : sigs)
    list.append(py::make_tuple(sig.dtype, py::tuple(py::cast(sig.shape))));
  return list;
}

} // namespace

std::string cuvil::python::shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

/// The dtype table's name of a native-order NumPy dtype of the usual kinds,
/// read from its type number; nullptr for the others (bfloat16, byte-swapped
/// dtypes), which are named by NumPy. NumPy's str(dtype) runs Python code, a
/// microsecond or two per argument of every call. (Only the type number and
/// byte order are read: pybind11 2.10's view of the descriptor predates
/// NumPy 2's, whose element size moved.)
static const char *plainDtypeName(const py::dtype &dtype) {
  if (dtype.byteorder() == '>')
    return nullptr;
  // NumPy's type numbers (NPY_BOOL ... NPY_HALF), the same in NumPy 1 and 2.
  switch (dtype.num()) {
  case 0:
    return "bool";
  case 1:
    return "int8";
  case 2:
    return "uint8";
  case 3:
    return "int16";
  case 5:
    return "int32";
  case 7: // NPY_LONG
    return sizeof(long) == 8 ? "int64" : "int32";
  case 9: // NPY_LONGLONG
    return "int64";
  case 11:
    return "float32";
  case 12:
    return "float64";
  case 23:
    return "float16";
  }
  return nullptr;
}

/// Checks one array against its signature; returns its data pointer.
void *cuvil::python::checkedData(const py::array &array,
                                 const cuvil::TensorSignature &sig,
                                 const char *role, size_t index,
                                 bool writable) {
  py::dtype type = array.dtype();
  const char *plain = plainDtypeName(type);
  std::string dtype = plain ? plain : py::str(type).cast<std::string>();
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  std::string what = std::string(role) + " " + std::to_string(index);
  bool fits = shape.size() == sig.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = sig.shape[d] == -1 || sig.shape[d] == shape[d];
  if (dtype != sig.dtype || !fits)
    throw py::value_error(what + " is " + dtype + shapeText(shape) +
                          " but the compiled function expects " + sig.dtype +
                          shapeText(sig.shape));
  if (!(array.flags() & py::array::c_style))
    throw py::value_error(what + " is not C-contiguous; pass "
                                 "np.ascontiguousarray(x)");
  if (writable && !array.writeable())
    throw py::value_error(what + " is read-only");
  return const_cast<void *>(array.data());
}

/// The options `compile` and `load_indexed` take.
static cuvil::CompileOptions
compileOptions(bool enableFusion, bool captureSnapshots,
               const std::string &cacheDir, bool parallel,
               const py::object &steps, const std::string &target, int device) {
  cuvil::CompileOptions options;
  options.target = target;
  options.device = device;
  options.steps = cuvil::python::stepsFromPython(steps);
  options.enableFusion = enableFusion;
  options.captureSnapshots = captureSnapshots;
  options.cacheDir = cacheDir;
  options.parallel = parallel;
  return options;
}

PYBIND11_MODULE(_cuvil, m) {
  m.doc() = "Cuvil compiler core: compile Cuvil IR for a target and call it";
  m.attr("version") = cuvil::version();
  cuvil::python::registerException<CompileError>(m, "CompileError",
                                                 PyExc_RuntimeError);

  py::class_<cuvil::CompiledFunction>(m, "CompiledFunction")
      .def(
          "__call__",
          [](cuvil::CompiledFunction &self, const std::vector<py::array> &in,
             const std::vector<py::array> &out) {
            const auto &inSigs = self.inputs();
            const auto &outSigs = self.outputs();
            if (in.size() != inSigs.size() || out.size() != outSigs.size())
              throw py::value_error(
                  "expected " + std::to_string(inSigs.size()) + " inputs and " +
                  std::to_string(outSigs.size()) + " outputs, got " +
                  std::to_string(in.size()) + " and " +
                  std::to_string(out.size()));
            std::vector<void *> inPtrs, outPtrs;
            for (size_t i = 0; i < in.size(); ++i)
              inPtrs.push_back(cuvil::python::checkedData(in[i], inSigs[i],
                                                          "input", i, false));
            for (size_t i = 0; i < out.size(); ++i)
              outPtrs.push_back(cuvil::python::checkedData(out[i], outSigs[i],
                                                           "output", i, true));
            // Dynamic sizes (-1) come from the arrays on every call; the
            // caller sized the outputs from the inputs' symbol sizes.
            cuvil::Shapes shapes;
            for (const auto *arrays : {&in, &out})
              for (const py::array &a : *arrays)
                shapes.emplace_back(a.shape(), a.shape() + a.ndim());
            cuvil::python::callCompiled(self, inPtrs, outPtrs, &shapes);
          },
          py::arg("inputs"), py::arg("outputs"),
          "Runs the compiled code on C-contiguous arrays; writes `outputs`.")
      .def(
          "call_device",
          [](cuvil::CompiledFunction &self, const std::vector<uintptr_t> &in,
             const std::vector<uintptr_t> &out) {
            if (in.size() != self.inputs().size() ||
                out.size() != self.outputs().size())
              throw py::value_error(
                  "expected " + std::to_string(self.inputs().size()) +
                  " inputs and " + std::to_string(self.outputs().size()) +
                  " outputs");
            std::vector<void *> inPtrs, outPtrs;
            for (uintptr_t p : in)
              inPtrs.push_back(reinterpret_cast<void *>(p));
            for (uintptr_t p : out)
              outPtrs.push_back(reinterpret_cast<void *>(p));
            cuvil::python::callCompiled(self, inPtrs, outPtrs, nullptr,
                                        /*onDevice=*/true);
          },
          py::arg("inputs"), py::arg("outputs"),
          "Runs the compiled code on device pointers (C-contiguous buffers of "
          "the signature's shapes in the target device's memory); writes "
          "`outputs`. ValueError for a target without device memory.")
      .def_property_readonly("name", &cuvil::CompiledFunction::name)
      .def_property_readonly("instrumented",
                             &cuvil::CompiledFunction::instrumented,
                             "True when kernels report to profiling hooks")
      .def_property_readonly(
          "kernels",
          [](cuvil::CompiledFunction &self) {
            std::vector<cuvil::KernelInfo> kernels;
            {
              py::gil_scoped_release release;
              kernels = self.kernels();
            }
            py::list list;
            for (const cuvil::KernelInfo &kernel : kernels)
              list.append(py::make_tuple(kernel.name, kernel.location,
                                         sourceDict(kernel.source)));
            return list;
          },
          "(name, 'file:line:col', {file, line, column, name}) of each "
          "kernel, in run order; name is the model node's (from a NameLoc)")
      .def_property_readonly("input_types",
                             [](cuvil::CompiledFunction &self) {
                               return signatures(self.inputs());
                             })
      .def_property_readonly("output_types",
                             [](cuvil::CompiledFunction &self) {
                               return signatures(self.outputs());
                             })
      .def_property_readonly("snapshots",
                             [](cuvil::CompiledFunction &self) {
                               py::list list;
                               for (const auto &s : self.snapshots()) {
                                 py::dict d;
                                 d["name"] = s.name;
                                 d["stage"] = cuvil::phaseName(s.phase);
                                 d["wall_ms"] = s.wallMs;
                                 d["changed"] =
                                     s.changeKnown
                                         ? py::object(py::bool_(s.changed))
                                         : py::object(py::none());
                                 d["ir"] = s.ir;
                                 list.append(d);
                               }
                               return list;
                             })
      .def_property_readonly("fingerprint",
                             &cuvil::CompiledFunction::fingerprint)
      .def_property_readonly("compile_ms", &cuvil::CompiledFunction::compileMs)
      .def_property_readonly(
          "planned_peak_bytes",
          [](cuvil::CompiledFunction &self) {
            py::gil_scoped_release release;
            return self.plannedPeakBytes();
          },
          "Bytes of the intermediate-buffer arena after memory planning")
      .def_property_readonly(
          "unplanned_bytes",
          [](cuvil::CompiledFunction &self) {
            py::gil_scoped_release release;
            return self.unplannedBytes();
          },
          "Sum of the intermediate buffers the plan packs into the arena")
      .def_property_readonly("from_cache", &cuvil::CompiledFunction::fromCache)
      .def_property_readonly(
          "call_memory",
          [](cuvil::CompiledFunction &self) {
            cuvil::CompiledFunction::CallMemory memory;
            {
              py::gil_scoped_release release; // waits for a running call
              memory = self.callMemory();
            }
            py::dict d;
            d["held_bytes"] = memory.heldBytes;
            d["peak_bytes"] = memory.peakBytes;
            d["calls"] = memory.calls;
            d["grows"] = memory.grows;
            return d;
          },
          "The memory host calls keep between calls for their "
          "intermediates: held_bytes, peak_bytes (the most one call took), "
          "calls that used it and grows (times it grew to fit a call)")
      .def(
          "release_call_memory",
          [](cuvil::CompiledFunction &self) {
            py::gil_scoped_release release; // waits for a running call
            return self.releaseCallMemory();
          },
          "Gives the memory of call_memory back to the system (the next call "
          "takes it again); returns the bytes released.")
      .def(
          "set_source_provider",
          [](cuvil::CompiledFunction &self, py::function provider) {
            // Called and dropped by the compiler with the GIL released.
            std::shared_ptr<py::function> held(
                new py::function(std::move(provider)), [](py::function *f) {
                  if (!Py_IsInitialized())
                    return; // the interpreter is gone: nothing to release
                  py::gil_scoped_acquire gil;
                  delete f;
                });
            self.setSourceProvider([held]() -> std::string {
              py::gil_scoped_acquire gil;
              try {
                return (*held)().cast<std::string>();
              } catch (py::error_already_set &error) {
                // No exception crosses the compiler: no text, and the stage
                // that asked for it reports the IR as unavailable.
                error.discard_as_unraisable("cuvil: formatting a module's IR");
                return std::string();
              }
            });
          },
          py::arg("provider"),
          "What gives the module's text when an IR stage needs it (a "
          "function load_indexed found).")
      .def_property_readonly(
          "counters",
          [](const cuvil::CompiledFunction &self) {
            py::dict counters;
            for (const auto &[name, value] : self.counters())
              counters[py::str(name)] = value;
            return counters;
          },
          "The loaded code's counters: for the cuda target the host<->device "
          "copies of its calls and their bytes (empty elsewhere)")
      .def_property_readonly("target", &cuvil::CompiledFunction::target)
      .def_property_readonly("device", &cuvil::CompiledFunction::device)
      .def_property_readonly(
          "stages",
          [](cuvil::CompiledFunction &self) {
            std::vector<std::string> names;
            for (cuvil::IRStage stage : self.stages())
              names.push_back(cuvil::irStageName(stage));
            return names;
          },
          "IR stages ir() can show for this function's target")
      .def_property_readonly(
          "artifacts",
          [](cuvil::CompiledFunction &self) {
            std::vector<std::string> names;
            for (cuvil::ArtifactKind kind : self.artifacts())
              names.push_back(cuvil::artifactName(kind));
            return names;
          },
          "Artifact kinds emit() can write for this function's target")
      .def(
          "ir",
          [](cuvil::CompiledFunction &self, const std::string &stage) {
            std::string out, error;
            bool ok;
            {
              py::gil_scoped_release release;
              ok = self.ir(irStageNamed(self, stage), out, error);
            }
            if (!ok)
              throw CompileError(error);
            return out;
          },
          py::arg("stage") = "input")
      .def(
          "emit",
          [](cuvil::CompiledFunction &self, const std::string &kind,
             const std::string &path) {
            std::string error;
            bool ok;
            cuvil::ArtifactKind parsed = artifactNamed(self, kind);
            {
              py::gil_scoped_release release;
              ok = self.emit(parsed, path, error);
            }
            if (!ok)
              throw CompileError(error);
          },
          py::arg("kind"), py::arg("path"));

  m.def(
      "compile",
      [](std::string text, const std::string &funcName, bool enableFusion,
         bool captureSnapshots, const std::string &cacheDir, bool parallel,
         const py::object &steps, const std::string &target, int device,
         const std::string &indexText,
         const std::vector<std::pair<std::string, py::buffer>> &constants) {
        cuvil::CompileOptions options =
            compileOptions(enableFusion, captureSnapshots, cacheDir, parallel,
                           steps, target, device);
        options.indexText = indexText;
        // The buffers stay held (and their memory valid) until the end of
        // this call.
        std::vector<py::buffer_info> held;
        held.reserve(constants.size());
        for (const auto &[name, data] : constants) {
          held.push_back(data.request());
          std::string_view bytes =
              contiguousBytes(held.back(), "constant '" + name + "'");
          options.constants.push_back({name, bytes.data(), bytes.size()});
        }
        std::string error;
        std::unique_ptr<cuvil::CompiledFunction> fn;
        {
          py::gil_scoped_release release;
          fn = cuvil::compile(std::move(text), funcName, options, error);
        }
        if (!fn)
          throw CompileError(error);
        return fn;
      },
      py::arg("mlir_text"), py::arg("func_name"),
      py::arg("enable_fusion") = true, py::arg("capture_snapshots") = false,
      py::arg("cache_dir") = "", py::arg("parallel") = true,
      py::arg("steps") = py::none(), py::arg("target") = "cpu",
      py::arg("device") = 0, py::arg("index_text") = "",
      py::arg("constants") = std::vector<std::pair<std::string, py::buffer>>{},
      "Compiles function `func_name` of a Cuvil IR module for `target`; "
      "`steps` replaces the default pipeline (see default_pipeline); "
      "`index_text` keys the disk cache's text index instead of the text; "
      "`constants`, (name, bytes) pairs, are the data of the text's "
      "`dense_resource<name>` attributes (the text is then not the whole "
      "module: set_source_provider gives that).");

  m.def(
      "load_indexed",
      [](const std::string &indexText, const std::string &funcName,
         bool enableFusion, bool captureSnapshots, const std::string &cacheDir,
         bool parallel, const py::object &steps, const std::string &target,
         int device) {
        cuvil::CompileOptions options =
            compileOptions(enableFusion, captureSnapshots, cacheDir, parallel,
                           steps, target, device);
        std::string error;
        std::unique_ptr<cuvil::CompiledFunction> fn;
        {
          py::gil_scoped_release release;
          fn = cuvil::loadIndexed(indexText, funcName, options, error);
        }
        if (!fn && !error.empty())
          throw CompileError(error);
        return fn;
      },
      py::arg("index_text"), py::arg("func_name"),
      py::arg("enable_fusion") = true, py::arg("capture_snapshots") = false,
      py::arg("cache_dir") = "", py::arg("parallel") = true,
      py::arg("steps") = py::none(), py::arg("target") = "cpu",
      py::arg("device") = 0,
      "The function the disk cache's text index holds for `index_text` (see "
      "compile), loaded without its IR, or None.");

  cuvil::python::bindPipeline(m);
  cuvil::python::bindTargets(m);
  cuvil::python::bindDevices(m);

  m.def(
      "verify",
      [](const std::string &text) {
        std::string error;
        if (!cuvil::verify(text, error))
          throw CompileError(error);
      },
      py::arg("mlir_text"), "Parses and verifies Cuvil IR.");

  m.def(
      "fingerprint",
      [](const std::string &text) {
        std::string error;
        std::string result = cuvil::fingerprint(text, error);
        if (result.empty())
          throw CompileError(error);
        return result;
      },
      py::arg("mlir_text"),
      "Structural SHA-256 of the IR (locations and SSA names ignored).");

  m.def(
      "content_digest",
      [](py::buffer data) {
        py::buffer_info info = data.request();
        std::string_view bytes = contiguousBytes(info, "content_digest");
        py::gil_scoped_release release;
        return cuvil::blake3Hex(bytes);
      },
      py::arg("data"),
      "BLAKE3 of a buffer's bytes, 64 lowercase hex digits (names a "
      "constant in a cache key; several times faster than SHA-256).");

  m.def("disk_cache_limit_bytes", &cuvil::diskCacheLimitBytes,
        "The disk cache's size limit in bytes (CUVIL_CACHE_MAX_MB; 0: none).");

  m.def(
      "transform_ir",
      [](const std::string &text, const std::string &pipeline) {
        std::string out, report, error;
        bool ok;
        {
          py::gil_scoped_release release;
          ok = cuvil::transformIR(text, pipeline, out, report, error);
        }
        if (!ok)
          throw CompileError(error);
        return py::make_tuple(out, report);
      },
      py::arg("mlir_text"), py::arg("pipeline"),
      "Runs a textual pass pipeline on Cuvil IR: (new text, remarks).");

  m.def(
      "result_symbols",
      [](const std::string &text, const std::string &funcName) {
        std::string error;
        std::vector<std::vector<std::string>> symbols;
        if (!cuvil::resultSymbols(text, funcName, symbols, error))
          throw CompileError(error);
        return symbols;
      },
      py::arg("mlir_text"), py::arg("func_name"),
      "Per result, the expression of each dynamic dimension in the "
      "arguments' symbol names (cuvil-propagate-symbols).");

  cuvil::python::bindProfiler(m);
  cuvil::python::bindDialect(m);
  cuvil::python::bindPackages(m);
}
