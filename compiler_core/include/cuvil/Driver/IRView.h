//===- IRView.h - Operations and values for passes written outside C++ -*-===//
//
// Handles onto the IR of a compilation in progress, for external passes (the
// Python `cuvil.Pass`): read an op's name, operands, results, attributes and
// location; rewrite by setting attributes, building ops, replacing uses and
// erasing. No MLIR headers here.
//
// A handle is valid only while its pass runs: afterwards, or once its op is
// erased, every use reports why instead of touching freed memory.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_IRVIEW_H
#define CUVIL_DRIVER_IRVIEW_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cuvil {

struct IRSession;
class ValueRef;

/// Printed attributes by name: {"predicate", "\"lt\""}.
using AttributeList = std::vector<std::pair<std::string, std::string>>;

class OpRef {
public:
  OpRef() = default;

  /// Why the handle cannot be used (pass returned, op erased), or "".
  std::string invalidReason() const;
  bool isNull() const { return op == nullptr; }
  /// Identity of the op for this pass run (equal handles, equal ids).
  uintptr_t id() const { return reinterpret_cast<uintptr_t>(op); }

  std::string name() const;
  /// The user's "file:line:col" from the op's location, or "".
  std::string location() const;
  /// The whole location as MLIR prints it.
  std::string locationText() const;
  std::string print() const;

  AttributeList attributes() const;
  /// Parses `text` as an MLIR attribute ("4 : i64", "\"lt\"",
  /// "dense<1.0> : tensor<2xf32>") and sets it.
  bool setAttribute(const std::string &name, const std::string &text,
                    std::string &error) const;
  bool removeAttribute(const std::string &name) const;

  std::vector<ValueRef> operands() const;
  std::vector<ValueRef> results() const;
  /// Ops directly inside this op's regions, in order.
  std::vector<OpRef> children() const;
  /// Ops nested anywhere below this op, pre-order; only those named
  /// `opName` unless it is empty.
  std::vector<OpRef> walk(const std::string &opName) const;
  /// The enclosing op; null at the top.
  OpRef parent() const;

  /// Replaces every use of the results with `values` (same count and types),
  /// then erases the op.
  bool replaceWith(const std::vector<ValueRef> &values,
                   std::string &error) const;
  /// Erases the op; it must have no remaining uses.
  bool erase(std::string &error) const;
  /// Builds an op named `name` just before this one, at this op's location.
  /// Result types and attributes are MLIR text ("tensor<4xf32>").
  OpRef createBefore(const std::string &name,
                     const std::vector<ValueRef> &operands,
                     const std::vector<std::string> &resultTypes,
                     const AttributeList &attributes, std::string &error) const;

  bool operator==(const OpRef &other) const { return op == other.op; }

private:
  friend class ValueRef;
  friend OpRef makeOpRef(std::shared_ptr<IRSession>, void *);
  OpRef(std::shared_ptr<IRSession> session, void *op)
      : session(std::move(session)), op(op) {}
  std::shared_ptr<IRSession> session;
  void *op = nullptr;
};

class ValueRef {
public:
  ValueRef() = default;

  std::string invalidReason() const;
  std::string type() const;
  /// The op defining it; for a block argument, the op owning the block.
  OpRef owner() const;
  bool isBlockArgument() const;
  /// Result number, or argument number for a block argument.
  unsigned index() const;
  /// (user op, operand number) for every use.
  std::vector<std::pair<OpRef, unsigned>> uses() const;
  bool replaceAllUsesWith(const ValueRef &other, std::string &error) const;

  bool operator==(const ValueRef &other) const { return value == other.value; }
  uintptr_t id() const { return reinterpret_cast<uintptr_t>(value); }

private:
  friend class OpRef;
  friend ValueRef makeValueRef(std::shared_ptr<IRSession>, void *);
  ValueRef(std::shared_ptr<IRSession> session, void *value)
      : session(std::move(session)), value(value) {}
  std::shared_ptr<IRSession> session;
  void *value = nullptr; // mlir::Value's opaque pointer
};

} // namespace cuvil

#endif // CUVIL_DRIVER_IRVIEW_H
