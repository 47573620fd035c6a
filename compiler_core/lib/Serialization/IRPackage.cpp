//===- IRPackage.cpp - Writing and reading IR packages --------------------===//

#include "cuvil/Serialization/IRPackage.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"
#include "cuvil/Serialization/Package.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#ifndef CUVIL_VERSION
#define CUVIL_VERSION "0.0.0"
#endif

// Not `using namespace mlir`: mlir::cuvil (the dialect) would make this
// file's `cuvil::` ambiguous.
using json = nlohmann::json;
using mlir::Block;
using mlir::BytecodeWriterConfig;
using mlir::Diagnostic;
using mlir::DiagnosticSeverity;
using mlir::failed;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OpPrintingFlags;
using mlir::OwningOpRef;
using mlir::ParserConfig;
using mlir::ScopedDiagnosticHandler;
using mlir::succeeded;
using mlir::success;

namespace {
/// A stream that hashes what is written to it (SHA-256) instead of keeping
/// it: the printed form of a module with weights is tens of megabytes.
class HashingStream : public llvm::raw_ostream {
public:
  HashingStream() { SetBufferSize(1 << 16); }
  ~HashingStream() override { flush(); }
  std::string hexDigest() {
    flush();
    return hash.hexFinal();
  }

private:
  void write_impl(const char *data, size_t size) override {
    hash.update(std::string_view(data, size));
    written += size;
  }
  uint64_t current_pos() const override { return written; }

  cuvil::Sha256 hash;
  uint64_t written = 0;
};
} // namespace

namespace {
/// Feeds the hash what the fingerprint's text elides: the contents of every
/// dense elements attribute (the printer elides those over 16 elements),
/// one record per occurrence in walk order. Equal texts have equal
/// structure and so walk their attributes in the same order: two modules
/// with equal texts and equal records are equal.
class ElidedContents {
public:
  explicit ElidedContents(llvm::raw_ostream &os) : os(os) {}

  void operation(mlir::Operation *op) {
    attribute(op->getAttrDictionary());
    for (mlir::Type type : op->getResultTypes())
      typeRecord(type);
    for (mlir::Region &region : op->getRegions())
      for (Block &block : region)
        for (mlir::Type type : block.getArgumentTypes())
          typeRecord(type);
  }

private:
  void attribute(mlir::Attribute attr) {
    if (auto dense = llvm::dyn_cast<mlir::DenseIntOrFPElementsAttr>(attr)) {
      llvm::ArrayRef<char> raw = dense.getRawData();
      record('d', llvm::StringRef(raw.data(), raw.size()));
    } else if (auto array = llvm::dyn_cast<mlir::ArrayAttr>(attr)) {
      for (mlir::Attribute element : array)
        attribute(element);
    } else if (auto dictionary = llvm::dyn_cast<mlir::DictionaryAttr>(attr)) {
      for (mlir::NamedAttribute named : dictionary)
        attribute(named.getValue());
    } else if (llvm::isa<mlir::DenseElementsAttr, mlir::SparseElementsAttr>(
                   attr) ||
               holdsElided(attr)) {
      // Strings, sparse constants and anything else that holds an elements
      // attribute (a dialect attribute, a type with an encoding) are rare:
      // printed whole.
      record('a', printed(attr));
    }
  }
  void typeRecord(mlir::Type type) {
    if (holdsElided(type))
      record('t', printed(type));
  }
  template <typename T> static bool holdsElided(T attrOrType) {
    bool found = false;
    attrOrType.walk([&](mlir::Attribute sub) {
      if (llvm::isa<mlir::DenseElementsAttr, mlir::SparseElementsAttr>(sub)) {
        found = true;
        return mlir::WalkResult::interrupt();
      }
      return mlir::WalkResult::advance();
    });
    return found;
  }
  template <typename T> static std::string printed(T attrOrType) {
    std::string text;
    llvm::raw_string_ostream textStream(text);
    attrOrType.print(textStream);
    return text;
  }
  /// A tag, the length as 8 little-endian bytes, the bytes.
  void record(char tag, llvm::StringRef bytes) {
    char header[9] = {tag};
    uint64_t size = bytes.size();
    for (int i = 0; i < 8; ++i)
      header[1 + i] = char(size >> (8 * i));
    os.write(header, sizeof(header));
    os << bytes;
  }

  llvm::raw_ostream &os;
};
} // namespace

std::string cuvil::structuralFingerprint(ModuleOp module, int scheme) {
  // Function names and locations do not change what a graph computes; SSA
  // names are positional in the generic printed form.
  OwningOpRef<ModuleOp> clone = module.clone();
  unsigned index = 0;
  clone->walk([&](mlir::func::FuncOp func) {
    func.setSymName(("f" + std::to_string(index++)));
  });
  HashingStream os;
  OpPrintingFlags flags =
      OpPrintingFlags().printGenericOpForm().enableDebugInfo(false);
  if (scheme == 1) {
    // The weights as hex in the text: 43 ms for a 12 MB model (scheme 2: 10).
    clone->print(os, flags);
    return os.hexDigest();
  }
  os << "cuvil-fingerprint-" << scheme << "\n";
  clone->print(os, flags.elideLargeElementsAttrs(16));
  os << "\n";
  ElidedContents contents(os);
  clone->walk<mlir::WalkOrder::PreOrder>(
      [&](mlir::Operation *op) { contents.operation(op); });
  return os.hexDigest();
}

static std::string mlirVersion() {
  return std::to_string(LLVM_VERSION_MAJOR) + "." +
         std::to_string(LLVM_VERSION_MINOR);
}

bool cuvil::writeIRPackage(ModuleOp module, const std::string &metadataJson,
                           const std::string &path, std::string &error) {
  json metadata = json::parse(metadataJson, nullptr, false);
  if (!metadata.is_object()) {
    error = "IR package metadata must be a JSON object";
    return false;
  }
  metadata["format"] = "cuvil-irpkg";
  metadata["fingerprint"] = cuvil::structuralFingerprint(module);
  metadata["fingerprint_scheme"] = kFingerprintScheme;
  metadata["cuvil_version"] = CUVIL_VERSION;
  metadata["mlir_version"] = mlirVersion();
  metadata["dialect_versions"] = {{"cuvil", mlir::cuvil::kCuvilDialectVersion}};

  std::string bytecode, text;
  {
    llvm::raw_string_ostream os(bytecode);
    // The config keeps a StringRef to the producer: it must outlive it.
    const std::string producer = std::string("Cuvil ") + CUVIL_VERSION;
    BytecodeWriterConfig config(producer);
    if (failed(writeBytecodeToFile(module, os, config))) {
      error = "cannot write the IR as bytecode";
      return false;
    }
  }
  {
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo(true, false));
  }
  PackageWriter writer(PackageKind::IR);
  return writer.setMetadata(metadata.dump(), error) &&
         writer.add(kIRBytecodeEntry, bytecode, /*compress=*/true, error) &&
         writer.add(kIRTextEntry, text, /*compress=*/true, error) &&
         writer.write(path, error);
}

namespace {
/// Parses bytecode or text into a module, diagnostics into `error`.
OwningOpRef<ModuleOp> parseEntry(const std::string &bytes, bool bytecode,
                                 const std::string &name, MLIRContext *context,
                                 std::string &error) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> module;
  ParserConfig config(context);
  if (bytecode) {
    Block block;
    llvm::MemoryBufferRef buffer(bytes, name);
    if (succeeded(readBytecodeFile(buffer, &block, config)) &&
        llvm::hasSingleElement(block)) {
      if (auto op = llvm::dyn_cast<ModuleOp>(&block.front())) {
        op->remove();
        module = op;
        if (failed(verify(*module)))
          module = nullptr;
      }
    }
  } else {
    module = mlir::parseSourceString<ModuleOp>(bytes, config, name);
  }
  if (!module)
    error =
        diagnostics.empty() ? "it does not hold one valid module" : diagnostics;
  return module;
}
} // namespace

OwningOpRef<ModuleOp> cuvil::readIRPackage(const std::string &path,
                                           MLIRContext *context,
                                           std::string &metadataJson,
                                           std::string &form,
                                           std::string &error) {
  std::unique_ptr<PackageReader> reader =
      PackageReader::open(path, PackageKind::IR, error);
  if (!reader)
    return nullptr;
  json metadata = json::parse(reader->metadata(), nullptr, false);
  auto field = [&](const char *key) -> std::string {
    auto it = metadata.find(key);
    return it != metadata.end() && it->is_string() ? it->get<std::string>()
                                                   : "";
  };
  std::string fingerprint = field("fingerprint");
  if (fingerprint.size() != 64) {
    error = path + ": metadata field fingerprint: missing or not 64 hex digits";
    return nullptr;
  }
  // Packages from before the field have scheme 1.
  int scheme = 1;
  if (auto it = metadata.find("fingerprint_scheme"); it != metadata.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > kFingerprintScheme) {
      error = path + ": metadata field fingerprint_scheme: " + it->dump() +
              " is not a scheme this Cuvil computes (1 to " +
              std::to_string(kFingerprintScheme) +
              "); read the package with the Cuvil that wrote it";
      return nullptr;
    }
    scheme = int(it->get<int64_t>());
  }
  // Bytecode only from the same MLIR major; otherwise (or when it fails) the
  // text, which crosses versions.
  std::string writer = field("mlir_version");
  bool sameMajor =
      writer.substr(0, writer.find('.')) == std::to_string(LLVM_VERSION_MAJOR);
  std::string bytes, why;
  OwningOpRef<ModuleOp> module;
  if (sameMajor && reader->find(kIRBytecodeEntry)) {
    if (!reader->read(kIRBytecodeEntry, bytes, error))
      return nullptr;
    module = parseEntry(bytes, true, path, context, why);
    form = "bytecode";
  }
  if (!module) {
    if (!reader->find(kIRTextEntry)) {
      error = path + ": entry '" + kIRTextEntry + "': " +
              (why.empty() ? "missing, and no bytecode this MLIR (" +
                                 mlirVersion() + ") reads"
                           : "missing, and the bytecode failed: " + why);
      return nullptr;
    }
    if (!reader->read(kIRTextEntry, bytes, error))
      return nullptr;
    std::string textWhy;
    module = parseEntry(bytes, false, path, context, textWhy);
    form = "text";
    if (!module) {
      error = path + ": entry '" + kIRTextEntry + "': " + textWhy;
      return nullptr;
    }
  }
  std::string actual = cuvil::structuralFingerprint(*module, scheme);
  if (actual != fingerprint) {
    error = path + ": fingerprint: the IR's structural SHA-256 is " + actual +
            " but the metadata names " + fingerprint +
            " (the IR was changed after the package was written)";
    return nullptr;
  }
  metadataJson = reader->metadata();
  if (scheme != kFingerprintScheme) {
    // Checked in the writer's scheme, named in today's: equal to what
    // build_ir gives for the same graph.
    metadata["fingerprint"] = cuvil::structuralFingerprint(*module);
    metadata["fingerprint_scheme"] = kFingerprintScheme;
    metadataJson = metadata.dump();
  }
  return module;
}
