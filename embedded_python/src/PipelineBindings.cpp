//===- PipelineBindings.cpp - Passes, pipelines and IR handles for Python -===//
//
// Python passes run inside the compiler's pipeline: compile() receives them
// as callables, the compiler calls back with an Operation handle onto the
// module, and handles die when the pass returns. Python exceptions never
// cross the compiler's (exception-free) frames: they become error strings.
//
//===----------------------------------------------------------------------===//

#include "PipelineBindings.h"
#include "PyText.h"

#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <sstream>

namespace py = pybind11;
using cuvil::AttributeList;
using cuvil::OpRef;
using cuvil::ValueRef;

namespace {

/// Raised when a handle is used after its pass returned or its op was
/// erased, and for rewrites the IR does not allow.
struct IRError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename Handle> const Handle &checked(const Handle &handle) {
  std::string problem = handle.invalidReason();
  if (!problem.empty())
    throw IRError(problem);
  return handle;
}

void throwIf(bool failed, const std::string &error) {
  if (failed)
    throw IRError(error);
}

/// Python values as MLIR attribute text: str is taken as MLIR text already
/// (so '"lt"' is a string attribute and '4 : i32' an integer).
std::string attributeText(const py::handle &value) {
  if (py::isinstance<py::bool_>(value))
    return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(value))
    return std::to_string(value.cast<int64_t>()) + " : i64";
  if (py::isinstance<py::float_>(value)) {
    std::ostringstream os;
    os.precision(17);
    os << value.cast<double>();
    std::string text = os.str();
    if (text.find_first_of(".eEn") == std::string::npos)
      text += ".0";
    return text + " : f64";
  }
  if (py::isinstance<py::str>(value))
    return value.cast<std::string>();
  throw py::type_error("attribute values are MLIR text (str), bool, int or "
                       "float, not " +
                       std::string(py::str(value.get_type())));
}

std::string describe(const OpRef &op) {
  std::string problem = op.invalidReason();
  if (!problem.empty())
    return "<cuvil.Operation (" + problem + ")>";
  std::string loc = op.location();
  return "<cuvil.Operation " + op.name() + (loc.empty() ? "" : " at " + loc) +
         ">";
}

/// Keeps a Python callable alive inside std::function copies made without
/// the GIL: only the last owner, holding the GIL, drops the reference.
std::shared_ptr<py::object> holdWithGil(py::object object) {
  return std::shared_ptr<py::object>(new py::object(std::move(object)),
                                     [](py::object *o) {
                                       py::gil_scoped_acquire gil;
                                       delete o;
                                     });
}

} // namespace

std::vector<cuvil::PipelineStep>
cuvil::python::stepsFromPython(const py::object &steps) {
  std::vector<PipelineStep> result;
  if (steps.is_none())
    return result;
  for (py::handle item : steps) {
    auto tuple = item.cast<py::tuple>();
    if (tuple.size() != 5)
      throw py::value_error("a pipeline step is (name, phase, pipeline, "
                            "optional, callable or None)");
    PipelineStep step;
    step.name = tuple[0].cast<std::string>();
    std::string phase = tuple[1].cast<std::string>();
    std::optional<Phase> parsed = parsePhase(phase);
    if (!parsed)
      throw py::value_error("unknown phase '" + phase + "' of pass '" +
                            step.name + "'; expected " + phaseNames());
    step.phase = *parsed;
    step.pipeline = tuple[2].cast<std::string>();
    step.optional = tuple[3].cast<bool>();
    if (!tuple[4].is_none()) {
      std::shared_ptr<py::object> callable =
          holdWithGil(py::reinterpret_borrow<py::object>(tuple[4]));
      step.run = [callable](OpRef module, bool &changed, std::string &error) {
        py::gil_scoped_acquire gil;
        try {
          changed = py::bool_((*callable)(py::cast(module)));
          return true;
        } catch (py::error_already_set &e) {
          error = e.what();
        } catch (const std::exception &e) {
          error = e.what();
        }
        return false;
      };
    }
    result.push_back(std::move(step));
  }
  return result;
}

void cuvil::python::bindPipeline(py::module_ &m) {
  cuvil::python::registerException<IRError>(m, "IRError", PyExc_RuntimeError);

  py::class_<ValueRef>(m, "Value",
                       "An SSA value of the IR a pass is rewriting.")
      .def_property_readonly(
          "type", [](const ValueRef &v) { return checked(v).type(); },
          "MLIR type, e.g. 'tensor<4x8xf32>'")
      .def_property_readonly(
          "owner", [](const ValueRef &v) { return checked(v).owner(); },
          "Defining op (for a block argument: the op owning the block)")
      .def_property_readonly(
          "is_block_argument",
          [](const ValueRef &v) { return checked(v).isBlockArgument(); })
      .def_property_readonly(
          "index", [](const ValueRef &v) { return checked(v).index(); },
          "Result number, or argument number for a block argument")
      .def_property_readonly(
          "uses", [](const ValueRef &v) { return checked(v).uses(); },
          "[(user Operation, operand number), ...]")
      .def(
          "replace_all_uses_with",
          [](ValueRef &v, const ValueRef &other) {
            std::string error;
            throwIf(!checked(v).replaceAllUsesWith(other, error), error);
          },
          py::arg("other"))
      .def("__eq__",
           [](const ValueRef &a, const ValueRef &b) { return a == b; })
      .def("__hash__", &ValueRef::id)
      .def("__repr__", [](const ValueRef &v) {
        std::string problem = v.invalidReason();
        if (!problem.empty())
          return "<cuvil.Value (" + problem + ")>";
        return "<cuvil.Value " + v.type() + ">";
      });

  py::class_<OpRef>(m, "Operation",
                    "An operation of the IR a pass is rewriting; valid only "
                    "inside run_on_operation.")
      .def_property_readonly(
          "valid", [](const OpRef &op) { return op.invalidReason().empty(); },
          "False once the op was erased or its pass returned")
      .def_property_readonly(
          "name", [](const OpRef &op) { return checked(op).name(); },
          "e.g. 'cuvil.add', 'func.func', 'builtin.module'")
      .def_property_readonly(
          "location", [](const OpRef &op) { return checked(op).location(); },
          "The user's 'file:line:col', or '' when unknown")
      .def_property_readonly(
          "location_text",
          [](const OpRef &op) { return checked(op).locationText(); })
      .def_property_readonly(
          "operands", [](const OpRef &op) { return checked(op).operands(); })
      .def_property_readonly(
          "results", [](const OpRef &op) { return checked(op).results(); })
      .def_property_readonly(
          "attributes",
          [](const OpRef &op) {
            py::dict attrs;
            for (const auto &[name, text] : checked(op).attributes())
              attrs[py::str(name)] = text;
            return attrs;
          },
          "{name: MLIR text}")
      .def_property_readonly(
          "children", [](const OpRef &op) { return checked(op).children(); },
          "Ops directly inside this op's regions")
      .def_property_readonly("parent",
                             [](const OpRef &op) -> py::object {
                               OpRef parent = checked(op).parent();
                               if (parent.isNull())
                                 return py::none();
                               return py::cast(parent);
                             })
      .def(
          "walk",
          [](const OpRef &op, const std::string &name) {
            return checked(op).walk(name);
          },
          py::arg("name") = "",
          "Nested ops in pre-order, only those called `name` if given")
      .def(
          "set_attribute",
          [](OpRef &op, const std::string &name, const py::object &value) {
            std::string error;
            throwIf(
                !checked(op).setAttribute(name, attributeText(value), error),
                error);
          },
          py::arg("name"), py::arg("value"),
          "Value: MLIR attribute text, bool, int (i64) or float (f64)")
      .def(
          "remove_attribute",
          [](OpRef &op, const std::string &name) {
            return checked(op).removeAttribute(name);
          },
          py::arg("name"))
      .def(
          "replace_with",
          [](OpRef &op, const std::vector<ValueRef> &values) {
            std::string error;
            throwIf(!checked(op).replaceWith(values, error), error);
          },
          py::arg("values"),
          "Replaces the uses of every result, then erases the op")
      .def(
          "erase",
          [](OpRef &op) {
            std::string error;
            throwIf(!checked(op).erase(error), error);
          },
          "Erases an op whose results are unused")
      .def(
          "create_before",
          [](OpRef &op, const std::string &name,
             const std::vector<ValueRef> &operands,
             const std::vector<std::string> &resultTypes,
             const py::dict &attributes) {
            AttributeList attrs;
            for (auto [key, value] : attributes)
              attrs.emplace_back(py::str(key).cast<std::string>(),
                                 attributeText(value));
            std::string error;
            OpRef created = checked(op).createBefore(name, operands,
                                                     resultTypes, attrs, error);
            throwIf(created.isNull(), error);
            return created;
          },
          py::arg("name"), py::arg("operands") = std::vector<ValueRef>(),
          py::arg("result_types") = std::vector<std::string>(),
          py::arg("attributes") = py::dict(),
          "Builds an op just before this one, at its location")
      .def("print", [](const OpRef &op) { return checked(op).print(); })
      .def("__eq__", [](const OpRef &a, const OpRef &b) { return a == b; })
      .def("__hash__", &OpRef::id)
      .def("__repr__", &describe);

  m.def(
      "default_pipeline",
      [](bool enableFusion, bool parallel, const std::string &target,
         int device) {
        cuvil::CompileOptions options;
        options.target = target;
        options.device = device;
        options.enableFusion = enableFusion;
        options.parallel = parallel;
        std::vector<cuvil::PipelineStep> steps;
        std::string error;
        if (!cuvil::defaultPipeline(options, steps, error))
          throw py::value_error(error);
        py::list list;
        for (const cuvil::PipelineStep &step : steps)
          list.append(py::make_tuple(step.name, phaseName(step.phase),
                                     step.pipeline, step.optional));
        return list;
      },
      py::arg("enable_fusion") = true, py::arg("parallel") = true,
      py::arg("target") = "cpu", py::arg("device") = 0,
      "A target's pipeline as (pass, phase, textual pipeline, optional) "
      "tuples");

  m.def(
      "load_pass_plugin",
      [](const std::string &path) {
        std::string error;
        throwIf(!cuvil::loadPassPlugin(path, error), error);
      },
      py::arg("path"), "Loads an MLIR pass plugin (.so) and registers it");

  m.def(
      "check_pass_pipeline",
      [](const std::string &pipeline) {
        std::string error;
        throwIf(!cuvil::checkPassPipeline(pipeline, error), error);
      },
      py::arg("pipeline"), "Raises IRError when the pipeline does not parse");
}
