//===- DialectQueries.cpp - What front ends ask the cuvil dialect ---------===//
//
// Inference builds the op for real (with scratch block arguments as operands)
// so that properties, default attributes and the generated adaptors behave
// exactly as in the verifier, then asks InferTypeOpInterface.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/DialectQueries.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"
#include "cuvil/Dialect/Cuvil/IR/DTypes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace cuvil {

std::vector<DTypeRow> dtypeTable() {
  std::vector<DTypeRow> rows;
  for (const mlir::cuvil::DType &d : mlir::cuvil::dtypes())
    rows.push_back(
        {d.name.str(), d.mlirName.str(), d.byteSize, d.inNumPy, d.compiled});
  return rows;
}

std::vector<std::string> comparePredicates() {
  std::vector<std::string> names;
  for (uint64_t v = 0; v <= mlir::cuvil::getMaxEnumValForComparePredicate();
       ++v)
    names.push_back(mlir::cuvil::stringifyComparePredicate(
                        static_cast<mlir::cuvil::ComparePredicate>(v))
                        .str());
  return names;
}

namespace {
/// Answers are cached up to this many distinct questions, then forgotten.
constexpr size_t kMaxCachedAnswers = 16384;
} // namespace

struct ResultTypeInference::Impl {
  MLIRContext context{MLIRContext::Threading::DISABLED};
  Block scratch;
  llvm::StringMap<Type> types;
  llvm::StringMap<DictionaryAttr> attributes;
  llvm::StringMap<std::pair<bool, std::string>> answers;
  std::string diagnostics;

  Impl() { context.loadDialect<mlir::cuvil::CuvilDialect>(); }

  Type type(const std::string &text) {
    auto [it, inserted] = types.try_emplace(text);
    if (inserted)
      it->second = parseType(text, &context);
    return it->second;
  }

  DictionaryAttr dictionary(const std::string &text) {
    auto [it, inserted] = attributes.try_emplace(text);
    if (inserted) {
      Attribute parsed = text.empty() ? DictionaryAttr::get(&context)
                                      : parseAttribute(text, &context);
      it->second = dyn_cast_or_null<DictionaryAttr>(parsed);
    }
    return it->second;
  }

  bool answer(const std::string &opName, const std::vector<std::string> &types,
              const std::string &attrs, const std::string &given,
              std::string &result, std::string &error);
  bool compute(const std::string &opName, const std::vector<std::string> &types,
               const std::string &attrs, const std::string &given,
               std::string &result);
  bool inferOrVerify(OperationName name, ArrayRef<Type> operandTypes,
                     DictionaryAttr attrs, Type given, std::string &result);
};

ResultTypeInference::ResultTypeInference() : impl(std::make_unique<Impl>()) {}
ResultTypeInference::~ResultTypeInference() = default;

bool ResultTypeInference::infer(const std::string &opName,
                                const std::vector<std::string> &operandTypes,
                                const std::string &attributes,
                                std::string &resultType, std::string &error) {
  return impl->answer(opName, operandTypes, attributes, "", resultType, error);
}

bool ResultTypeInference::check(const std::string &opName,
                                const std::vector<std::string> &operandTypes,
                                const std::string &attributes,
                                const std::string &resultType,
                                std::string &error) {
  std::string checked;
  return impl->answer(opName, operandTypes, attributes, resultType, checked,
                      error);
}

bool ResultTypeInference::Impl::answer(const std::string &opName,
                                       const std::vector<std::string> &types,
                                       const std::string &attrs,
                                       const std::string &given,
                                       std::string &result,
                                       std::string &error) {
  std::string key = opName + '\n' + attrs + '\n' + given;
  for (const std::string &t : types)
    key += '\n' + t;
  auto found = answers.find(key);
  if (found == answers.end()) {
    if (answers.size() >= kMaxCachedAnswers)
      answers.clear();
    std::string text;
    bool ok = compute(opName, types, attrs, given, text);
    found = answers.try_emplace(key, ok, std::move(text)).first;
  }
  (found->second.first ? result : error) = found->second.second;
  return found->second.first;
}

bool ResultTypeInference::Impl::compute(
    const std::string &opName, const std::vector<std::string> &typeTexts,
    const std::string &attrs, const std::string &given, std::string &result) {
  diagnostics.clear();
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += (diagnostics.empty() ? "" : "\n") + d.str();
    return success();
  });
  auto fail = [&](const Twine &message) {
    result = diagnostics.empty() ? message.str()
                                 : message.str() + ": " + diagnostics;
    return false;
  };
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(opName, &context);
  if (!name)
    return fail("unknown op '" + opName + "'");
  Type givenType = given.empty() ? Type() : type(given);
  if (!given.empty() && !givenType)
    return fail("cannot parse result type '" + given + "'");
  if (!givenType && !name->hasInterface<InferTypeOpInterface>())
    return fail("'" + opName +
                "' takes its result type as a parameter; give it explicitly");
  SmallVector<Type> operandTypes;
  for (const std::string &text : typeTexts) {
    Type t = type(text);
    if (!t)
      return fail("cannot parse operand type '" + text + "'");
    operandTypes.push_back(t);
  }
  DictionaryAttr dict = dictionary(attrs);
  if (!dict)
    return fail("cannot parse attribute dictionary '" + attrs + "'");
  return inferOrVerify(*name, operandTypes, dict, givenType, result);
}

/// Builds the op detached, with scratch block arguments as operands. Without a
/// `given` result type it asks the op's shape rule; with one it runs the op's
/// verifier, so ops that take their result type as a parameter are checked by
/// the same code as in a module.
bool ResultTypeInference::Impl::inferOrVerify(OperationName name,
                                              ArrayRef<Type> operandTypes,
                                              DictionaryAttr dict, Type given,
                                              std::string &result) {
  Location loc = UnknownLoc::get(&context);
  NamedAttrList attrs(dict);
  name.populateDefaultAttrs(attrs);
  SmallVector<Value> operands;
  for (Type t : operandTypes)
    operands.push_back(scratch.addArgument(t, loc));
  SmallVector<Type, 1> resultTypes;
  if (given)
    resultTypes.push_back(given);
  Operation *op = Operation::create(loc, name, resultTypes, operands,
                                    NamedAttrList(), nullptr, BlockRange(), 0);
  op->setAttrs(attrs.getDictionary(&context));
  std::string missing;
  for (StringAttr attrName : name.getAttributeNames()) {
    std::optional<Attribute> value = op->getInherentAttr(attrName);
    if (!value || !*value)
      missing = attrName.str();
  }
  SmallVector<Type, 1> inferred;
  bool ok = false;
  if (!missing.empty()) {
    result = "'" + name.getStringRef().str() + "' op requires attribute '" +
             missing + "' of the right kind";
  } else if (given) {
    ok = succeeded(mlir::verify(op));
    result = ok ? "" : diagnostics;
  } else if (succeeded(cast<InferTypeOpInterface>(op).inferReturnTypes(
                 &context, loc, op->getOperands(), op->getRawDictionaryAttrs(),
                 op->getPropertiesStorage(), op->getRegions(), inferred))) {
    llvm::raw_string_ostream os(result);
    os << inferred.front();
    ok = true;
  } else {
    result = diagnostics;
  }
  op->destroy();
  scratch.eraseArguments(0, scratch.getNumArguments());
  return ok;
}

} // namespace cuvil
