//===- ExecutablePackage.cpp - Compiled functions loaded from a .cuvil ----===//

#include "cuvil/Runtime/ExecutablePackage.h"
#include "cuvil/Runtime/CudaExecutable.h"
#include "cuvil/Runtime/SharedLibrary.h"
#include "cuvil/Runtime/ThreadPool.h"
#include "cuvil/Serialization/Package.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <iterator>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

using namespace cuvil;
using json = nlohmann::json;

HostCpu cuvil::hostCpu() {
  HostCpu host;
  host.name = llvm::sys::getHostCPUName().str();
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      host.features.push_back(feature.first().str());
  std::sort(host.features.begin(), host.features.end());
  return host;
}

bool PackagedFunction::isSymbolic() const {
  for (const auto *list : {&inputs, &outputs})
    for (const TensorSignature &sig : *list)
      for (int64_t d : sig.shape)
        if (d < 0)
          return true;
  return false;
}

static std::string tensorText(const TensorSignature &sig,
                              const std::vector<std::string> &dims) {
  std::string text = sig.dtype + "[";
  for (size_t d = 0; d < sig.shape.size(); ++d) {
    text += d ? ", " : "";
    text += sig.shape[d] >= 0                     ? std::to_string(sig.shape[d])
            : d < dims.size() && !dims[d].empty() ? dims[d]
                                                  : "?";
  }
  return text + "]";
}

std::string PackagedFunction::signatureText() const {
  std::string text = name + "(";
  for (size_t i = 0; i < inputs.size(); ++i)
    text += (i ? ", " : "") + inputNames[i] + ": " +
            tensorText(inputs[i], inputDims[i]);
  text += ") -> (";
  for (size_t i = 0; i < outputs.size(); ++i)
    text += (i ? ", " : "") + tensorText(outputs[i], outputDims[i]);
  return text + ")";
}

struct ExecutablePackage::Impl {
  std::unique_ptr<PackageReader> reader;
  std::string mappedCodeDirectory;
  std::string fingerprint;
  std::vector<PackagedFunction> functions;
  std::vector<std::string> hostFeatures;
  std::string hostName;
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Executable>> loaded;
  int device = 0; ///< the GPU of functions compiled for cuda
};

ExecutablePackage::ExecutablePackage() : impl(std::make_unique<Impl>()) {}
ExecutablePackage::~ExecutablePackage() = default;

const std::string &ExecutablePackage::path() const {
  return impl->reader->path();
}
const std::string &ExecutablePackage::metadata() const {
  return impl->reader->metadata();
}
const std::string &ExecutablePackage::fingerprint() const {
  return impl->fingerprint;
}
const std::vector<PackagedFunction> &ExecutablePackage::functions() const {
  return impl->functions;
}

namespace {

const char *const kDtypes[] = {"float16", "bfloat16", "float32", "float64",
                               "int8",    "int16",    "int32",   "int64",
                               "uint8",   "bool"};
/// Bytes of one element of each of kDtypes, in order.
constexpr size_t kDtypeBytes[] = {2, 2, 4, 8, 1, 2, 4, 8, 1, 1};
static_assert(std::size(kDtypes) == std::size(kDtypeBytes));

/// Bytes of one element of `dtype` (one of kDtypes; the reader checked).
size_t elementBytes(const std::string &dtype) {
  for (size_t i = 0; i < std::size(kDtypes); ++i)
    if (dtype == kDtypes[i])
      return kDtypeBytes[i];
  return 0;
}

/// Reads one tensor description {name?, dtype, shape: [int | string | null]}.
bool parseTensor(const json &item, bool isInput, TensorSignature &sig,
                 std::vector<std::string> &dims, std::string &name,
                 std::string &why) {
  if (!item.is_object() || !item.contains("dtype") ||
      !item["dtype"].is_string() || !item.contains("shape") ||
      !item["shape"].is_array() || item["shape"].size() > 16) {
    why = "needs a dtype string and a shape array of at most 16 dims";
    return false;
  }
  sig.dtype = item["dtype"].get<std::string>();
  if (std::find(std::begin(kDtypes), std::end(kDtypes), sig.dtype) ==
      std::end(kDtypes)) {
    why = "dtype '" + sig.dtype.substr(0, 40) + "' is not one Cuvil computes";
    return false;
  }
  if (isInput) {
    if (!item.contains("name") || !item["name"].is_string()) {
      why = "an input needs a name";
      return false;
    }
    name = item["name"].get<std::string>();
  }
  for (const json &d : item["shape"]) {
    if (d.is_number_unsigned() && d.get<uint64_t>() < (uint64_t(1) << 48)) {
      sig.shape.push_back(d.get<int64_t>());
      dims.emplace_back();
    } else if (d.is_string() && !d.get<std::string>().empty() &&
               d.get<std::string>().size() < 256) {
      sig.shape.push_back(-1);
      dims.push_back(d.get<std::string>());
    } else if (d.is_null() && isInput) {
      sig.shape.push_back(-1);
      dims.emplace_back();
    } else {
      why = "a dim must be a size below 2^48 or a symbol";
      return false;
    }
  }
  return true;
}

bool parseFunction(const json &item, PackagedFunction &fn, std::string &why) {
  auto text = [&](const char *key, std::string &out) {
    if (!item.contains(key) || !item[key].is_string())
      return false;
    out = item[key].get<std::string>();
    return true;
  };
  if (!item.is_object() || !text("name", fn.name) ||
      !text("symbol", fn.symbol) || !text("target", fn.target) ||
      !text("code", fn.codeEntry) || !item.contains("inputs") ||
      !item["inputs"].is_array() || !item.contains("outputs") ||
      !item["outputs"].is_array() || item["outputs"].empty()) {
    why = "needs name, symbol, target and code strings and inputs and "
          "outputs arrays";
    return false;
  }
  if (item.contains("aliases") && item["aliases"].is_array())
    for (const json &alias : item["aliases"])
      if (alias.is_string())
        fn.aliases.push_back(alias.get<std::string>());
  fn.instrumented = item.value("instrumented", false);
  if (item.contains("symbol_ranges") && item["symbol_ranges"].is_object())
    for (const auto &[symbol, range] : item["symbol_ranges"].items()) {
      if (!range.is_array() || range.size() != 2 ||
          !range[0].is_number_integer() ||
          !(range[1].is_null() || range[1].is_number_integer())) {
        why = "symbol_ranges." + symbol.substr(0, 40) +
              ": not [lowest, highest or null]";
        return false;
      }
      fn.symbolRanges.push_back(
          {symbol, range[0].get<int64_t>(),
           range[1].is_null() ? -1 : range[1].get<int64_t>()});
    }
  for (size_t i = 0; i < item["inputs"].size(); ++i) {
    fn.inputs.emplace_back();
    fn.inputDims.emplace_back();
    fn.inputNames.emplace_back();
    if (!parseTensor(item["inputs"][i], true, fn.inputs.back(),
                     fn.inputDims.back(), fn.inputNames.back(), why)) {
      why = "input " + std::to_string(i) + ": " + why;
      return false;
    }
  }
  for (size_t i = 0; i < item["outputs"].size(); ++i) {
    std::string unused;
    fn.outputs.emplace_back();
    fn.outputDims.emplace_back();
    if (!parseTensor(item["outputs"][i], false, fn.outputs.back(),
                     fn.outputDims.back(), unused, why)) {
      why = "output " + std::to_string(i) + ": " + why;
      return false;
    }
  }
  return true;
}

} // namespace

std::unique_ptr<ExecutablePackage>
ExecutablePackage::open(const std::string &path, std::string &error,
                        const std::string &mappedCodeDirectory) {
  std::unique_ptr<ExecutablePackage> package(new ExecutablePackage());
  Impl &impl = *package->impl;
  impl.mappedCodeDirectory = mappedCodeDirectory;
  impl.reader = PackageReader::open(path, PackageKind::Executable, error);
  if (!impl.reader)
    return nullptr;
  json meta = json::parse(impl.reader->metadata(), nullptr, false);
  auto field = [&](const std::string &name) {
    return path + ": metadata field " + name + ": ";
  };
  if (!meta.contains("fingerprint") || !meta["fingerprint"].is_string() ||
      meta["fingerprint"].get<std::string>().size() != 64) {
    error = field("fingerprint") + "missing or not 64 hex digits";
    return nullptr;
  }
  impl.fingerprint = meta["fingerprint"].get<std::string>();
  if (meta.contains("host") && meta["host"].is_object()) {
    const json &host = meta["host"];
    if (host.contains("cpu") && host["cpu"].is_string())
      impl.hostName = host["cpu"].get<std::string>();
    if (host.contains("features") && host["features"].is_array())
      for (const json &f : host["features"])
        if (f.is_string())
          impl.hostFeatures.push_back(f.get<std::string>());
  }
  if (!meta.contains("functions") || !meta["functions"].is_array() ||
      meta["functions"].empty() || meta["functions"].size() > 10000) {
    error = field("functions") + "missing, empty or not an array";
    return nullptr;
  }
  for (size_t i = 0; i < meta["functions"].size(); ++i) {
    PackagedFunction fn;
    std::string why;
    if (!parseFunction(meta["functions"][i], fn, why)) {
      error = field("functions[" + std::to_string(i) + "]") + why;
      return nullptr;
    }
    if (!impl.reader->find(fn.codeEntry)) {
      error = field("functions[" + std::to_string(i) + "].code") +
              "names the entry '" + fn.codeEntry.substr(0, 200) +
              "', which the package does not hold";
      return nullptr;
    }
    impl.functions.push_back(std::move(fn));
  }
  return package;
}

const PackagedFunction *ExecutablePackage::find(const std::string &name,
                                                std::string &error) const {
  for (const PackagedFunction &fn : impl->functions)
    if (fn.name == name || std::find(fn.aliases.begin(), fn.aliases.end(),
                                     name) != fn.aliases.end())
      return &fn;
  std::string names;
  for (const PackagedFunction &fn : impl->functions) {
    names += (names.empty() ? "'" : ", '") + fn.name + "'";
    for (const std::string &alias : fn.aliases)
      names += " (also '" + alias + "')";
  }
  error = path() + " has no function '" + name + "'; it has " + names;
  return nullptr;
}

void ExecutablePackage::setDevice(int device) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->device = device;
}

std::shared_ptr<Executable> ExecutablePackage::load(const PackagedFunction &fn,
                                                    std::string &error) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (auto it = impl->loaded.find(fn.name); it != impl->loaded.end())
    return it->second;
  std::string where = path() + ": function '" + fn.name + "': ";
  // GPU code is host code (a library like the CPU's) launching kernels
  // through Cuvil's CUDA runtime.
  bool gpu = fn.target == "cuda";
  if (fn.target != "cpu" && !gpu) {
    error = where + "compiled for target '" + fn.target.substr(0, 40) +
            "', which this runtime does not run (it runs cpu and cuda); fix: "
            "export the model for target='cpu'";
    return nullptr;
  }
  static const HostCpu host = hostCpu(); // the CPU does not change
  std::vector<std::string> missing;
  for (const std::string &feature : impl->hostFeatures)
    if (!std::binary_search(host.features.begin(), host.features.end(),
                            feature))
      missing.push_back(feature);
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 12; ++i)
      list += (i ? ", " : "") + missing[i].substr(0, 40);
    error = where + "compiled for a " + impl->hostName.substr(0, 40) +
            " CPU with features this " + host.name + " lacks (" + list +
            "); running it could stop the process with an illegal "
            "instruction. Fix: export it again on a machine like this one, "
            "or from its .irpkg";
    return nullptr;
  }
  std::string code, why;
  if (!impl->reader->read(fn.codeEntry, code, error))
    return nullptr;
  std::vector<std::string> runtimeLibraries = codeRuntimeLibraries();
  // GPU host code reports its kernels through the runtime, not through a
  // hooks argument.
  bool hooksArgument = fn.instrumented && !gpu;
  std::unique_ptr<Executable> executable;
  if (impl->mappedCodeDirectory.empty())
    executable = LibraryExecutable::loadFromMemory(
        code, "cuvil-" + fn.name, fn.symbol, runtimeLibraries, fn.inputs,
        fn.outputs, hooksArgument, why);
  else
    // The stored bytes' digest (checked by read) determines the code.
    executable = LibraryExecutable::loadMapped(
        code, impl->mappedCodeDirectory,
        impl->reader->find(fn.codeEntry)->sha256, fn.symbol, runtimeLibraries,
        fn.inputs, fn.outputs, hooksArgument, why);
  if (executable && gpu) {
    std::vector<size_t> bytes;
    for (const auto *list : {&fn.inputs, &fn.outputs})
      for (const TensorSignature &value : *list)
        bytes.push_back(elementBytes(value.dtype));
    executable = cuda::CudaExecutable::create(
        std::move(executable), impl->device, fn.inputs, fn.outputs,
        std::move(bytes), why);
  }
  if (!executable) {
    error = where + why;
    return nullptr;
  }
  std::shared_ptr<Executable> shared = std::move(executable);
  impl->loaded[fn.name] = shared;
  return shared;
}

ScopedThreadCount::ScopedThreadCount(int threads) {
  if (threads <= 0)
    return;
  previous = threads::callerThreads();
  restore = &threads::setCallerThreads;
  threads::setCallerThreads(threads);
}

ScopedThreadCount::~ScopedThreadCount() {
  if (restore)
    restore(previous);
}

//===----------------------------------------------------------------------===//
// Output sizes
//===----------------------------------------------------------------------===//

namespace {
/// Recursive descent over the size expressions cuvil-propagate-symbols
/// writes: expr := term (('+'|'-') term)*, term := unary (('*'|'//'|'%')
/// unary)*, unary := '-' unary | int | symbol | '(' expr ')'.
class SizeParser {
public:
  SizeParser(const std::string &text,
             const std::vector<std::pair<std::string, int64_t>> &bindings)
      : text(text), bindings(bindings) {}

  bool parse(int64_t &value, std::string &error) {
    if (!expr(value, 0) || (skip(), pos != text.size())) {
      error = why.empty() ? "'" + text + "' is not a size expression" : why;
      return false;
    }
    return true;
  }

private:
  void skip() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  bool eat(const char *token) {
    skip();
    size_t n = std::strlen(token);
    if (text.compare(pos, n, token) != 0)
      return false;
    pos += n;
    return true;
  }
  bool expr(int64_t &value, int depth) {
    if (depth > 64 || !term(value, depth))
      return false;
    for (;;) {
      int64_t rhs;
      if (eat("+")) {
        if (!term(rhs, depth) || __builtin_add_overflow(value, rhs, &value))
          return false;
      } else if (eat("-")) {
        if (!term(rhs, depth) || __builtin_sub_overflow(value, rhs, &value))
          return false;
      } else {
        return true;
      }
    }
  }
  bool term(int64_t &value, int depth) {
    if (!unary(value, depth))
      return false;
    for (;;) {
      int64_t rhs;
      if (eat("*")) {
        if (!unary(rhs, depth) || __builtin_mul_overflow(value, rhs, &value))
          return false;
      } else if (eat("//") || eat("%")) {
        bool divide = text[pos - 1] == '/';
        if (!unary(rhs, depth))
          return false;
        if (rhs == 0) {
          why = "'" + text + "' divides by zero for these sizes";
          return false;
        }
        // Python's floor division and modulo.
        int64_t q = value / rhs, r = value % rhs;
        if (r != 0 && ((r < 0) != (rhs < 0))) {
          --q;
          r += rhs;
        }
        value = divide ? q : r;
      } else {
        return true;
      }
    }
  }
  bool unary(int64_t &value, int depth) {
    skip();
    if (eat("-")) {
      if (!unary(value, depth + 1))
        return false;
      value = -value;
      return true;
    }
    if (eat("("))
      return expr(value, depth + 1) && eat(")");
    size_t start = pos;
    if (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
      value = 0;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[pos++] - '0', &value))
          return false;
      return true;
    }
    while (pos < text.size() &&
           (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
      ++pos;
    if (pos == start)
      return false;
    std::string name = text.substr(start, pos - start);
    for (const auto &[symbol, size] : bindings)
      if (symbol == name) {
        value = size;
        return true;
      }
    why = "size '" + text + "' uses the unbound symbol '" + name + "'";
    return false;
  }

  const std::string &text;
  const std::vector<std::pair<std::string, int64_t>> &bindings;
  size_t pos = 0;
  std::string why;
};
} // namespace

bool cuvil::evaluateSizeExpression(
    const std::string &expression,
    const std::vector<std::pair<std::string, int64_t>> &bindings,
    int64_t &value, std::string &error) {
  if (expression == "?") {
    error = "the compiler could not name this output size (a '?' dim)";
    return false;
  }
  return SizeParser(expression, bindings).parse(value, error);
}

bool cuvil::outputShapes(const PackagedFunction &fn,
                         const std::vector<std::vector<int64_t>> &inputShapes,
                         std::vector<std::vector<int64_t>> &out,
                         std::string &error) {
  if (inputShapes.size() != fn.inputs.size()) {
    error = fn.name + " takes " + std::to_string(fn.inputs.size()) +
            " inputs, got " + std::to_string(inputShapes.size());
    return false;
  }
  std::vector<std::pair<std::string, int64_t>> bindings;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const std::vector<int64_t> &shape = inputShapes[i];
    const std::string input = "input '" + fn.inputNames[i] + "'";
    if (shape.size() != fn.inputs[i].shape.size()) {
      error = input + " has rank " + std::to_string(shape.size()) +
              " but the function takes " +
              tensorText(fn.inputs[i], fn.inputDims[i]);
      return false;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t declared = fn.inputs[i].shape[d];
      const std::string &symbol = fn.inputDims[i][d];
      if (shape[d] < 0 || (declared >= 0 && declared != shape[d])) {
        error = input + " has size " + std::to_string(shape[d]) + " at dim " +
                std::to_string(d) + " but the function takes " +
                tensorText(fn.inputs[i], fn.inputDims[i]);
        return false;
      }
      if (declared >= 0 || symbol.empty())
        continue;
      auto it = std::find_if(bindings.begin(), bindings.end(),
                             [&](const auto &b) { return b.first == symbol; });
      if (it == bindings.end()) {
        bindings.emplace_back(symbol, shape[d]);
      } else if (it->second != shape[d]) {
        error = "symbol '" + symbol + "' is " + std::to_string(it->second) +
                " in an earlier input but " + std::to_string(shape[d]) +
                " at dim " + std::to_string(d) + " of " + input +
                "; equal names must have equal sizes";
        return false;
      }
    }
  }
  for (const PackagedFunction::SymbolRange &range : fn.symbolRanges)
    for (const auto &[symbol, size] : bindings)
      if (symbol == range.symbol &&
          (size < range.lowest ||
           (range.highest >= 0 && size > range.highest))) {
        error = "symbol '" + symbol + "' is " + std::to_string(size) +
                ", but the model allows " + std::to_string(range.lowest) +
                " <= " + symbol +
                (range.highest >= 0 ? " <= " + std::to_string(range.highest)
                                    : std::string());
        return false;
      }
  out.clear();
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    std::vector<int64_t> shape;
    for (size_t d = 0; d < fn.outputs[i].shape.size(); ++d) {
      int64_t size = fn.outputs[i].shape[d];
      if (size < 0 &&
          !evaluateSizeExpression(fn.outputDims[i][d], bindings, size, error)) {
        error = "output " + std::to_string(i) + " dim " + std::to_string(d) +
                ": " + error;
        return false;
      }
      if (size < 0) {
        error = "output " + std::to_string(i) + " dim " + std::to_string(d) +
                " evaluates to " + std::to_string(size) + " for these inputs";
        return false;
      }
      shape.push_back(size);
    }
    out.push_back(std::move(shape));
  }
  return true;
}
