//===- TextIndex.cpp - The disk cache's index by traced text --------------===//

#include "TextIndex.h"

#include "cuvil/Dialect/Cuvil/IR/DTypes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace cuvil;
namespace json = llvm::json;

namespace {

constexpr int kFormat = 2;
/// Bounds no compiled signature reaches; anything beyond is not an index.
constexpr size_t kMaxTensors = 4096, kMaxRank = 64;
constexpr uint64_t kMaxFileBytes = 16ull << 20;

json::Array signatureJson(const std::vector<TensorSignature> &tensors) {
  json::Array out;
  for (const TensorSignature &t : tensors) {
    json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    out.push_back(
        json::Object{{"dtype", t.dtype}, {"shape", std::move(shape)}});
  }
  return out;
}

bool readSignature(const json::Object &root, llvm::StringRef field,
                   std::vector<TensorSignature> &out) {
  const json::Array *tensors = root.getArray(field);
  if (!tensors || tensors->size() > kMaxTensors)
    return false;
  for (const json::Value &value : *tensors) {
    const json::Object *tensor = value.getAsObject();
    if (!tensor)
      return false;
    std::optional<llvm::StringRef> dtype = tensor->getString("dtype");
    const json::Array *shape = tensor->getArray("shape");
    if (!dtype || !mlir::cuvil::lookupDType(*dtype) || !shape ||
        shape->size() > kMaxRank)
      return false;
    TensorSignature sig{dtype->str(), {}};
    for (const json::Value &dim : *shape) {
      std::optional<int64_t> d = dim.getAsInteger();
      if (!d || *d < -1) // -1: a dimension of run-time size
        return false;
      sig.shape.push_back(*d);
    }
    out.push_back(std::move(sig));
  }
  return true;
}

} // namespace

bool detail::readTextIndex(const std::string &path, TextIndexEntry &entry) {
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size) || size > kMaxFileBytes)
    return false;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return false;
  llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return false;
  }
  const json::Object *root = parsed->getAsObject();
  if (!root || root->getInteger("format") != kFormat)
    return false;
  std::optional<llvm::StringRef> key = root->getString("key");
  std::optional<llvm::StringRef> fingerprint = root->getString("fingerprint");
  // The key names a file in the cache folder: 64 hex digits, nothing else.
  if (!key || key->size() != 64 ||
      key->find_first_not_of("0123456789abcdef") != llvm::StringRef::npos ||
      !fingerprint)
    return false;
  TextIndexEntry read;
  if (!readSignature(*root, "inputs", read.inputs) ||
      !readSignature(*root, "outputs", read.outputs))
    return false;
  read.cacheKey = key->str();
  read.fingerprint = fingerprint->str();
  entry = std::move(read);
  return true;
}

void detail::writeTextIndex(const std::string &path,
                            const TextIndexEntry &entry) {
  if (!json::isUTF8(entry.fingerprint))
    return;
  json::Object root{{"format", kFormat},
                    {"key", entry.cacheKey},
                    {"fingerprint", entry.fingerprint},
                    {"inputs", signatureJson(entry.inputs)},
                    {"outputs", signatureJson(entry.outputs)}};
  // Through a temporary file renamed into place: readers never see half
  // an entry. A failure is dropped (best effort, see the header).
  llvm::consumeError(llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << json::Value(std::move(root));
    return llvm::Error::success();
  }));
}
