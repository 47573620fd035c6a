//===- DriverSupport.cpp - Contexts, locations, diagnostics, fingerprints -===//

#include "DriverSupport.h"

#include "cuvil/Dialect/Cuvil/IR/DTypes.h"
#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using llvm::dyn_cast;
using mlir::CallSiteLoc;
using mlir::DenseElementsAttr;
using mlir::DenseResourceElementsAttr;
using mlir::Diagnostic;
using mlir::DiagnosticSeverity;
using mlir::DialectRegistry;
using mlir::emitError;
using mlir::failure;
using mlir::FileLineColLoc;
using mlir::FusedLoc;
using mlir::Location;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::NamedAttribute;
using mlir::NameLoc;
using mlir::Operation;
using mlir::OpPrintingFlags;
using mlir::OwningOpRef;
using mlir::ParserConfig;
using mlir::RankedTensorType;
using mlir::ShapedType;
using mlir::success;
using mlir::Type;
using mlir::TypeRange;
using mlir::WalkResult;
namespace func = mlir::func;

std::unique_ptr<MLIRContext> cuvil::detail::createContext() {
  mlir::cuvil::registerBuiltinTargets();
  DialectRegistry registry;
  mlir::cuvil::registerCuvilDialects(registry);
  for (const std::string &name : mlir::cuvil::TargetRegistry::names())
    mlir::cuvil::TargetRegistry::lookup(name)->registerDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->disableMultithreading();
  context->printOpOnDiagnostic(false);
  return context;
}

std::string cuvil::detail::formatLocation(Location loc) {
  return structuredLocation(loc).fileLineCol();
}

namespace {
/// Fills `out` from the first file location inside `loc` and the first
/// name met on the way to it, after the names it is nested around (its
/// scopes): an FX node in its nn.Module path is "stem.0/convolution".
bool collectLocation(Location loc, ::cuvil::SourceLocation &out) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    out.file = file.getFilename().str();
    out.line = file.getLine();
    out.column = file.getColumn();
    return true;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (out.name.empty()) {
      out.name = name.getName().str();
      for (auto scope = dyn_cast<NameLoc>(name.getChildLoc()); scope;
           scope = dyn_cast<NameLoc>(scope.getChildLoc()))
        out.name = scope.getName().str() + "/" + out.name;
    }
    return collectLocation(name.getChildLoc(), out);
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (collectLocation(inner, out))
        return true;
    return false;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return collectLocation(callSite.getCallee(), out);
  return false;
}
} // namespace

cuvil::SourceLocation cuvil::detail::structuredLocation(Location loc) {
  SourceLocation result;
  collectLocation(loc, result);
  return result;
}

cuvil::detail::DiagnosticCollector::DiagnosticCollector(MLIRContext *ctx)
    : handler(ctx, [this](Diagnostic &diag) {
        std::string where = formatLocation(diag.getLocation());
        const char *severity = "error";
        if (diag.getSeverity() == DiagnosticSeverity::Warning)
          severity = "warning";
        else if (diag.getSeverity() == DiagnosticSeverity::Note)
          severity = "note";
        else if (diag.getSeverity() == DiagnosticSeverity::Remark)
          severity = "remark";
        if (!text.empty())
          text += "\n";
        text +=
            (where.empty() ? "" : where + ": ") + severity + ": " + diag.str();
        for (Diagnostic &note : diag.getNotes()) {
          std::string noteWhere = formatLocation(note.getLocation());
          text += "\n" + (noteWhere.empty() ? "" : noteWhere + ": ") +
                  "note: " + note.str();
        }
        return success();
      }) {}

std::string
cuvil::detail::DiagnosticCollector::take(const std::string &fallback) {
  return text.empty() ? fallback : std::move(text);
}

std::string cuvil::detail::printOp(Operation *op, bool debugInfo) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().enableDebugInfo(debugInfo, false));
  return text;
}

OwningOpRef<ModuleOp> cuvil::detail::parseModule(const std::string &text,
                                                 MLIRContext *context) {
  return mlir::parseSourceString<ModuleOp>(text, ParserConfig(context),
                                           "<cuvil-ir>");
}

LogicalResult
cuvil::detail::bindConstants(ModuleOp module,
                             const std::vector<ConstantBytes> &constants,
                             std::string &error) {
  llvm::StringMap<const ConstantBytes *> byName;
  for (const ConstantBytes &c : constants)
    byName[c.name] = &c;
  auto bind = [&](Operation *op, NamedAttribute named) -> LogicalResult {
    auto resource = dyn_cast<DenseResourceElementsAttr>(named.getValue());
    if (!resource)
      return success();
    llvm::StringRef name = resource.getRawHandle().getKey();
    const ConstantBytes *bytes = byName.lookup(name);
    ShapedType type = resource.getType();
    auto fail = [&](const std::string &why) {
      error =
          "constant '" + name.str() + "' of " + printOp(op, false) + ": " + why;
      return failure();
    };
    if (!bytes) {
      if (resource.getRawHandle().getBlob())
        return success(); // its bytes are in the text's resource section
      return fail("the text names it as a resource but no bytes were given; "
                  "fix: pass its bytes with the text, or write it as dense<>");
    }
    int64_t bits = type.getElementTypeBitWidth();
    if (bits % 8 != 0)
      return fail("only constants of whole bytes per element can be passed "
                  "as bytes (this one has " +
                  std::to_string(bits) + "-bit elements)");
    uint64_t expected = uint64_t(type.getNumElements()) * uint64_t(bits / 8);
    if (bytes->size != expected)
      return fail(std::to_string(bytes->size) + " bytes were given for " +
                  std::to_string(expected) +
                  " (its type's elements at their width)");
    op->setAttr(named.getName(),
                DenseElementsAttr::getFromRawBuffer(
                    type, llvm::ArrayRef<char>(bytes->data, bytes->size)));
    return success();
  };
  WalkResult walked = module.walk([&](Operation *op) {
    llvm::SmallVector<NamedAttribute> attributes(op->getAttrs());
    for (NamedAttribute named : attributes)
      if (failed(bind(op, named)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

namespace {
/// "f16, bf16, f32, ..." from the dtype table, for messages.
std::string dtypeList() {
  std::string text;
  for (const mlir::cuvil::DType &dtype : mlir::cuvil::dtypes())
    text += (text.empty() ? "" : ", ") + dtype.mlirName.str();
  return text;
}
} // namespace

LogicalResult cuvil::detail::signatureOf(TypeRange types, Location loc,
                                         const char *what,
                                         std::vector<TensorSignature> &out) {
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<llvm::StringRef> dtype =
        tensor ? mlir::cuvil::dtypeName(tensor.getElementType()) : std::nullopt;
    if (!tensor || !dtype)
      return emitError(loc) << "unsupported " << what << " type " << type
                            << ": compiled functions take and return "
                               "ranked tensors of "
                            << dtypeList();
    std::vector<int64_t> shape;
    for (int64_t d : tensor.getShape())
      shape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
    out.push_back({dtype->str(), std::move(shape)});
  }
  return success();
}
