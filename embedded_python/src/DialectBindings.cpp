//===- DialectBindings.cpp - The cuvil dialect's tables and rules for Python //
//
// Python derives its dtype lists from dtypes() and asks infer_result_type()
// for the result type of every op it traces, so the shape rules exist once,
// in the ops (InferTypeOpInterface).
//
//===----------------------------------------------------------------------===//

#include "DialectBindings.h"
#include "PyText.h"

#include "cuvil/Dialect/Cuvil/IR/DialectQueries.h"
#include "cuvil/Driver/Compiler.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

/// Raised when an op's shape rule rejects its operands or attributes.
struct TypeInferenceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One inference context for the process; the GIL serializes calls.
cuvil::ResultTypeInference &inference() {
  static cuvil::ResultTypeInference instance;
  return instance;
}

} // namespace

void cuvil::python::bindDialect(py::module_ &m) {
  cuvil::python::registerException<TypeInferenceError>(m, "TypeInferenceError",
                                                       PyExc_ValueError);

  m.def("compare_predicates", &cuvil::comparePredicates,
        "cuvil.compare's predicate names, indexed by their enum value");
  m.def(
      "dtypes",
      []() {
        py::list rows;
        for (const cuvil::DTypeRow &row : cuvil::dtypeTable()) {
          py::dict d;
          d["name"] = row.name;
          d["mlir"] = row.mlirName;
          d["itemsize"] = row.byteSize;
          d["in_numpy"] = row.inNumPy;
          d["compiled"] = row.compiled;
          rows.append(d);
        }
        return rows;
      },
      "The dtype table: one dict per element type (name, mlir, itemsize, "
      "in_numpy, compiled), in a fixed order.");

  m.def(
      "infer_result_type",
      [](const std::string &op, const std::vector<std::string> &operandTypes,
         const std::string &attributes) {
        std::string result, error;
        if (!inference().infer(op, operandTypes, attributes, result, error))
          throw TypeInferenceError(error);
        return result;
      },
      py::arg("op_name"), py::arg("operand_types"), py::arg("attributes") = "",
      "The result type (MLIR text) of `op_name` on operands of these types "
      "with this attribute dictionary ('{axis = 1 : i64}'), from the op's "
      "shape rule; raises TypeInferenceError with the op's diagnostic.");

  m.def(
      "set_shape_answer_store",
      [](const std::string &cacheDir) {
        inference().setStore(cacheDir.empty()
                                 ? ""
                                 : cuvil::buildScopedCacheFile(
                                       cacheDir, "shape-answers", "answers"));
      },
      py::arg("cache_dir"),
      "Keeps infer_result_type's and check_op's answers in this build's file "
      "in the disk cache folder `cache_dir` (\"\": in memory only), so a "
      "new process tracing a model traced before asks no shape rule.");

  m.def(
      "shape_rules_run", []() { return inference().rulesRun(); },
      "How many of infer_result_type's and check_op's answers this process "
      "computed with the ops' shape rules (the rest came from memory or the "
      "store).");

  m.def(
      "check_op",
      [](const std::string &op, const std::vector<std::string> &operandTypes,
         const std::string &attributes, const std::string &resultType) {
        std::string error;
        if (!inference().check(op, operandTypes, attributes, resultType, error))
          throw TypeInferenceError(error);
      },
      py::arg("op_name"), py::arg("operand_types"), py::arg("attributes"),
      py::arg("result_type"),
      "Runs the op's verifier on these operand types, attributes and result "
      "type (for ops that take their result type as a parameter); raises "
      "TypeInferenceError with its diagnostic.");
}
