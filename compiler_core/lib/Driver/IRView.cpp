//===- IRView.cpp - Operations and values for external passes -------------===//
//
// Every accessor first checks that the pass is still running and the op has
// not been erased, so a stale handle kept by a Python pass reports an error
// instead of reading freed memory.
//
//===----------------------------------------------------------------------===//

#include "IRSession.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/Support/raw_ostream.h"

using namespace cuvil;
using mlir::Operation;
using mlir::Value;

OpRef cuvil::makeOpRef(std::shared_ptr<IRSession> session, void *op) {
  return OpRef(std::move(session), op);
}

ValueRef cuvil::makeValueRef(std::shared_ptr<IRSession> session, void *value) {
  return ValueRef(std::move(session), value);
}

namespace {
Operation *unwrap(void *op) { return static_cast<Operation *>(op); }
Value unwrapValue(void *value) { return Value::getFromOpaquePointer(value); }

template <typename T> std::string printed(T entity) {
  std::string text;
  llvm::raw_string_ostream os(text);
  entity.print(os);
  return text;
}

std::string sessionProblem(const std::shared_ptr<IRSession> &session) {
  if (!session)
    return "null handle";
  if (!session->active)
    return "this handle belongs to pass '" + session->passName +
           "', which has returned; handles are valid only inside "
           "run_on_operation";
  return "";
}
} // namespace

//===----------------------------------------------------------------------===//
// OpRef
//===----------------------------------------------------------------------===//

std::string OpRef::invalidReason() const {
  std::string problem = sessionProblem(session);
  if (problem.empty() && !op)
    problem = "null operation";
  if (problem.empty() && session->erased.contains(unwrap(op)))
    problem = "the operation was erased";
  return problem;
}

std::string OpRef::name() const {
  return unwrap(op)->getName().getStringRef().str();
}

std::string OpRef::location() const {
  return detail::formatLocation(unwrap(op)->getLoc());
}

std::string OpRef::locationText() const {
  return printed(unwrap(op)->getLoc());
}

std::string OpRef::print() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  unwrap(op)->print(os, mlir::OpPrintingFlags().enableDebugInfo(true, false));
  return text;
}

AttributeList OpRef::attributes() const {
  AttributeList list;
  for (mlir::NamedAttribute attr : unwrap(op)->getAttrs())
    list.emplace_back(attr.getName().str(), printed(attr.getValue()));
  return list;
}

bool OpRef::setAttribute(const std::string &name, const std::string &text,
                         std::string &error) const {
  Operation *operation = unwrap(op);
  size_t numRead = 0;
  mlir::Attribute attr =
      mlir::parseAttribute(text, operation->getContext(), mlir::Type(),
                           &numRead, /*isKnownNullTerminated=*/false);
  if (!attr || numRead != text.size()) {
    error = "'" + text +
            "' is not an MLIR attribute (write e.g. '4 : i64', "
            "'\"text\"' or 'dense<1.0> : tensor<2xf32>')";
    return false;
  }
  operation->setAttr(name, attr);
  return true;
}

bool OpRef::removeAttribute(const std::string &name) const {
  return static_cast<bool>(unwrap(op)->removeAttr(name));
}

std::vector<ValueRef> OpRef::operands() const {
  std::vector<ValueRef> values;
  for (Value value : unwrap(op)->getOperands())
    values.push_back(ValueRef(session, value.getAsOpaquePointer()));
  return values;
}

std::vector<ValueRef> OpRef::results() const {
  std::vector<ValueRef> values;
  for (Value value : unwrap(op)->getResults())
    values.push_back(ValueRef(session, value.getAsOpaquePointer()));
  return values;
}

std::vector<OpRef> OpRef::children() const {
  std::vector<OpRef> ops;
  for (mlir::Region &region : unwrap(op)->getRegions())
    for (mlir::Block &block : region)
      for (Operation &child : block)
        ops.push_back(OpRef(session, &child));
  return ops;
}

std::vector<OpRef> OpRef::walk(const std::string &opName) const {
  std::vector<OpRef> ops;
  Operation *self = unwrap(op);
  self->walk<mlir::WalkOrder::PreOrder>([&](Operation *nested) {
    if (nested != self &&
        (opName.empty() || nested->getName().getStringRef() == opName))
      ops.push_back(OpRef(session, nested));
  });
  return ops;
}

OpRef OpRef::parent() const {
  Operation *self = unwrap(op);
  if (self == session->root)
    return OpRef(session, nullptr);
  return OpRef(session, self->getParentOp());
}

bool OpRef::replaceWith(const std::vector<ValueRef> &values,
                        std::string &error) const {
  Operation *self = unwrap(op);
  if (values.size() != self->getNumResults()) {
    error = "'" + name() + "' has " + std::to_string(self->getNumResults()) +
            " results but " + std::to_string(values.size()) +
            " replacement values were given";
    return false;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    std::string problem = values[i].invalidReason();
    if (!problem.empty()) {
      error = "replacement value " + std::to_string(i) + ": " + problem;
      return false;
    }
    Value replacement = unwrapValue(values[i].value);
    if (replacement.getType() != self->getResult(i).getType()) {
      error = "replacement value " + std::to_string(i) + " has type " +
              printed(replacement.getType()) + " but result " +
              std::to_string(i) + " of '" + name() + "' has type " +
              printed(self->getResult(i).getType());
      return false;
    }
  }
  for (size_t i = 0; i < values.size(); ++i)
    self->getResult(i).replaceAllUsesWith(unwrapValue(values[i].value));
  return erase(error);
}

bool OpRef::erase(std::string &error) const {
  Operation *self = unwrap(op);
  if (self == session->root) {
    error = "the module itself cannot be erased";
    return false;
  }
  if (!self->use_empty()) {
    error = "'" + name() +
            "' still has uses; replace them first (replace_with or "
            "Value.replace_all_uses_with)";
    return false;
  }
  // Handles onto nested ops die with it.
  self->walk([&](Operation *nested) { session->erased.insert(nested); });
  self->erase();
  return true;
}

OpRef OpRef::createBefore(const std::string &opName,
                          const std::vector<ValueRef> &operandList,
                          const std::vector<std::string> &resultTypes,
                          const AttributeList &attributeList,
                          std::string &error) const {
  Operation *self = unwrap(op);
  mlir::MLIRContext *context = self->getContext();
  if (!mlir::RegisteredOperationName::lookup(opName, context)) {
    error = "unknown operation '" + opName +
            "' (use a registered op such as 'cuvil.add' or 'arith.constant')";
    return OpRef();
  }
  mlir::OperationState state(self->getLoc(), opName);
  for (size_t i = 0; i < operandList.size(); ++i) {
    std::string problem = operandList[i].invalidReason();
    if (!problem.empty()) {
      error = "operand " + std::to_string(i) + ": " + problem;
      return OpRef();
    }
    state.operands.push_back(unwrapValue(operandList[i].value));
  }
  for (const std::string &text : resultTypes) {
    size_t numRead = 0;
    mlir::Type type = mlir::parseType(text, context, &numRead,
                                      /*isKnownNullTerminated=*/false);
    if (!type || numRead != text.size()) {
      error = "'" + text + "' is not an MLIR type (e.g. 'tensor<4x8xf32>')";
      return OpRef();
    }
    state.types.push_back(type);
  }
  for (const auto &[attrName, text] : attributeList) {
    size_t numRead = 0;
    mlir::Attribute attr = mlir::parseAttribute(
        text, context, mlir::Type(), &numRead, /*isKnownNullTerminated=*/false);
    if (!attr || numRead != text.size()) {
      error = "attribute '" + attrName + "': '" + text +
              "' is not an MLIR attribute";
      return OpRef();
    }
    state.addAttribute(attrName, attr);
  }
  mlir::OpBuilder builder(self);
  Operation *created = builder.create(state);
  session->erased.erase(created); // an address may be reused
  return OpRef(session, created);
}

//===----------------------------------------------------------------------===//
// ValueRef
//===----------------------------------------------------------------------===//

std::string ValueRef::invalidReason() const {
  std::string problem = sessionProblem(session);
  if (problem.empty() && !value)
    problem = "null value";
  if (problem.empty()) {
    Value v = unwrapValue(value);
    Operation *owner = v.getDefiningOp();
    if (!owner)
      owner = v.getParentBlock()->getParentOp();
    if (session->erased.contains(owner))
      problem = "the operation defining the value was erased";
  }
  return problem;
}

std::string ValueRef::type() const {
  return printed(unwrapValue(value).getType());
}

OpRef ValueRef::owner() const {
  Value v = unwrapValue(value);
  if (Operation *def = v.getDefiningOp())
    return OpRef(session, def);
  return OpRef(session, v.getParentBlock()->getParentOp());
}

bool ValueRef::isBlockArgument() const {
  return mlir::isa<mlir::BlockArgument>(unwrapValue(value));
}

unsigned ValueRef::index() const {
  Value v = unwrapValue(value);
  if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v))
    return arg.getArgNumber();
  return mlir::cast<mlir::OpResult>(v).getResultNumber();
}

std::vector<std::pair<OpRef, unsigned>> ValueRef::uses() const {
  std::vector<std::pair<OpRef, unsigned>> list;
  for (mlir::OpOperand &use : unwrapValue(value).getUses())
    list.emplace_back(OpRef(session, use.getOwner()), use.getOperandNumber());
  return list;
}

bool ValueRef::replaceAllUsesWith(const ValueRef &other,
                                  std::string &error) const {
  std::string problem = other.invalidReason();
  if (!problem.empty()) {
    error = "replacement: " + problem;
    return false;
  }
  Value from = unwrapValue(value), to = unwrapValue(other.value);
  if (from.getType() != to.getType()) {
    error = "cannot replace a value of type " + printed(from.getType()) +
            " with one of type " + printed(to.getType());
    return false;
  }
  from.replaceAllUsesWith(to);
  return true;
}
