//===- DialectQueries.h - What front ends ask the dialect -------*- C++ -*-===//
//
// Plain-data answers from the dialect for code that does not include MLIR
// (the Python bindings): the dtype table and result types from the ops' shape
// rules (InferTypeOpInterface).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_DIALECTQUERIES_H
#define CUVIL_DIALECT_CUVIL_IR_DIALECTQUERIES_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cuvil {

/// One row of the dtype table (mlir::cuvil::dtypes()).
struct DTypeRow {
  std::string name;     ///< "float32"
  std::string mlirName; ///< "f32"
  unsigned byteSize = 0;
  bool inNumPy = false;
  bool compiled = false;
};

/// The dtype table, in its fixed order.
std::vector<DTypeRow> dtypeTable();

/// The names of cuvil.compare's predicate enum, indexed by value ("eq" is 0).
std::vector<std::string> comparePredicates();

/// Infers (or checks) result types of cuvil ops from operand types and
/// attributes given as MLIR text, in a private MLIRContext made on the first
/// question it cannot answer from memory. Parsed types and attributes and
/// whole answers are cached, so asking again for a repeated layer is a
/// lookup; with a store (setStore) the answers outlive the process, and a new
/// process tracing a model it traced before neither builds the context (1-2
/// ms) nor computes an answer. Not thread-safe: callers serialize (the Python
/// bindings hold the GIL).
class ResultTypeInference {
public:
  ResultTypeInference();
  ~ResultTypeInference();

  /// The result type of `opName` (e.g. "cuvil.add") applied to operands of
  /// types `operandTypes` ("tensor<4x3xf32>") with the attribute dictionary
  /// `attributes` ("{axes = array<i64: 1>, keepdims = false}", or ""). On
  /// failure returns false and sets `error` to the op's diagnostic, e.g.
  /// "'cuvil.add' op operand shapes [4, 3] and [5] are not broadcast-...".
  bool infer(const std::string &opName,
             const std::vector<std::string> &operandTypes,
             const std::string &attributes, std::string &resultType,
             std::string &error);

  /// Checks `opName` on these operands with the given `resultType` using the
  /// op's verifier: how ops that take their result type as a parameter
  /// (reshape, broadcast_to, cast) are checked. Errors as for infer().
  bool check(const std::string &opName,
             const std::vector<std::string> &operandTypes,
             const std::string &attributes, const std::string &resultType,
             std::string &error);

  /// Keeps the successful answers in the file at `path` (of this build of
  /// the dialect: the caller names it by the build), read before the next
  /// question and appended to as answers are computed; "" for none. A file
  /// that is not one of its records in a row, or is over 4 MiB, is removed
  /// and started again.
  void setStore(const std::string &path);

  /// How many answers this object computed with the shape rules (the rest
  /// came from memory or the store).
  uint64_t rulesRun() const;

private:
  struct Engine;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_DIALECTQUERIES_H
