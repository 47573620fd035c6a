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
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
/// A store file past this starts again (16384 answers of about 200 bytes).
constexpr uint64_t kMaxStoreBytes = 4 << 20;
/// No key or answer is longer (a type of many dims, a long dictionary).
constexpr uint64_t kMaxFieldBytes = 64 << 10;
} // namespace

/// The MLIR side, made on the first question the answers do not hold.
struct ResultTypeInference::Engine {
  MLIRContext context{MLIRContext::Threading::DISABLED};
  Block scratch;
  llvm::StringMap<Type> types;
  llvm::StringMap<DictionaryAttr> attributes;
  std::string diagnostics;

  Engine() { context.loadDialect<mlir::cuvil::CuvilDialect>(); }

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

  bool compute(const std::string &opName, const std::vector<std::string> &types,
               const std::string &attrs, const std::string &given,
               std::string &result);
  bool inferOrVerify(OperationName name, ArrayRef<Type> operandTypes,
                     DictionaryAttr attrs, Type given, std::string &result);
};

struct ResultTypeInference::Impl {
  std::unique_ptr<Engine> engine;
  llvm::StringMap<std::pair<bool, std::string>> answers;
  std::string storePath;
  bool storeRead = false;
  uint64_t rulesRun = 0;

  bool answer(const std::string &opName, const std::vector<std::string> &types,
              const std::string &attrs, const std::string &given,
              std::string &result, std::string &error);
  void readStore();
  void store(llvm::StringRef key, llvm::StringRef text);
};

ResultTypeInference::ResultTypeInference() : impl(std::make_unique<Impl>()) {}
ResultTypeInference::~ResultTypeInference() = default;

void ResultTypeInference::setStore(const std::string &path) {
  if (path == impl->storePath)
    return;
  impl->storePath = path;
  impl->storeRead = false;
}

uint64_t ResultTypeInference::rulesRun() const { return impl->rulesRun; }

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
  if (!storeRead)
    readStore();
  std::string key = opName + '\n' + attrs + '\n' + given;
  for (const std::string &t : types)
    key += '\n' + t;
  auto found = answers.find(key);
  if (found == answers.end()) {
    if (answers.size() >= kMaxCachedAnswers)
      answers.clear();
    if (!engine)
      engine = std::make_unique<Engine>();
    std::string text;
    bool ok = engine->compute(opName, types, attrs, given, text);
    ++rulesRun;
    if (ok)
      store(key, text);
    found = answers.try_emplace(key, ok, std::move(text)).first;
  }
  (found->second.first ? result : error) = found->second.second;
  return found->second.first;
}

/// The store's records are "<key bytes> <answer bytes>\n<key><answer>\n",
/// each appended by one write (processes sharing a cache folder append to
/// one file).
void ResultTypeInference::Impl::readStore() {
  storeRead = true;
  if (storePath.empty())
    return;
  auto buffer = llvm::MemoryBuffer::getFile(storePath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return;
  llvm::StringRef rest = (*buffer)->getBuffer();
  bool whole = rest.size() <= kMaxStoreBytes;
  llvm::StringMap<std::string> read;
  while (whole && !rest.empty()) {
    auto [header, body] = rest.split('\n');
    auto [keyText, answerText] = header.split(' ');
    uint64_t keySize = 0, answerSize = 0;
    if (header.size() == rest.size() || keyText.getAsInteger(10, keySize) ||
        answerText.getAsInteger(10, answerSize) || keySize == 0 ||
        keySize > kMaxFieldBytes || answerSize > kMaxFieldBytes ||
        body.size() < keySize + answerSize + 1 ||
        body[keySize + answerSize] != '\n') {
      whole = false;
      break;
    }
    read[body.take_front(keySize)] = body.substr(keySize, answerSize).str();
    rest = body.drop_front(keySize + answerSize + 1);
  }
  if (!whole) {
    // Not a file of whole records (cut short by a full disk, or not written
    // by this code): it starts again; this process computes its answers.
    llvm::sys::fs::remove(storePath);
    return;
  }
  for (auto &entry : read)
    if (answers.size() < kMaxCachedAnswers)
      answers.try_emplace(entry.getKey(), true, std::move(entry.getValue()));
}

void ResultTypeInference::Impl::store(llvm::StringRef key,
                                      llvm::StringRef text) {
  if (storePath.empty() || key.size() > kMaxFieldBytes ||
      text.size() > kMaxFieldBytes)
    return;
  std::string record = std::to_string(key.size()) + " " +
                       std::to_string(text.size()) + "\n" + key.str() +
                       text.str() + "\n";
  int fd = ::open(storePath.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                  0644);
  if (fd < 0)
    return; // an unwritable store costs the next process the answer, no more
  struct stat status;
  if (::fstat(fd, &status) == 0 && status.st_size > 0 &&
      static_cast<uint64_t>(status.st_size) + record.size() > kMaxStoreBytes)
    (void)!::ftruncate(fd, 0);
  (void)!::write(fd, record.data(), record.size());
  ::close(fd);
}

bool ResultTypeInference::Engine::compute(
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
bool ResultTypeInference::Engine::inferOrVerify(OperationName name,
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
