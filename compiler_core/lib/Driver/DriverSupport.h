//===- DriverSupport.h - Contexts, diagnostics and IR helpers of the driver
//-===//
#ifndef CUVIL_LIB_DRIVER_DRIVERSUPPORT_H
#define CUVIL_LIB_DRIVER_DRIVERSUPPORT_H

#include "cuvil/Driver/Compiler.h"
#include "cuvil/Runtime/Executable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil {
class TargetBackend;
}

namespace cuvil::detail {

/// The registered target `name` with a device `device`; null with a message
/// listing what is registered otherwise.
const mlir::cuvil::TargetBackend *lookupTarget(const std::string &name,
                                               int device, std::string &error);

/// defaultPipeline's two halves: the target's steps for `options`, and the
/// check that each parses (which the driver skips when the disk cache's
/// text index finds code the same steps compiled).
bool defaultSteps(const CompileOptions &options,
                  std::vector<PipelineStep> &steps, std::string &error);
bool verifySteps(const std::string &target,
                 const std::vector<PipelineStep> &steps, std::string &error);

/// Replaces each `dense_resource<name>` attribute of `module` whose name
/// `constants` holds by the dense attribute of those bytes (copied into the
/// context), checking their size against the attribute's type. Fails naming
/// the constant when the sizes differ or a resource has no bytes at all.
mlir::LogicalResult bindConstants(mlir::ModuleOp module,
                                  const std::vector<ConstantBytes> &constants,
                                  std::string &error);

/// A context with every dialect Cuvil and the registered targets use.
std::unique_ptr<mlir::MLIRContext> createContext();

/// The user's "file:line:col" inside a (fused, named, call-site) location.
std::string formatLocation(mlir::Location loc);
/// The same location as structured data, with the innermost NameLoc's name
/// (a model's node name) kept.
SourceLocation structuredLocation(mlir::Location loc);

/// Collects diagnostics as "file:line:col: error: message" lines.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *ctx);
  /// The collected text, or `fallback` when nothing was reported.
  std::string take(const std::string &fallback);

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

std::string printOp(mlir::Operation *op, bool debugInfo = true);
mlir::OwningOpRef<mlir::ModuleOp> parseModule(const std::string &text,
                                              mlir::MLIRContext *context);
/// Signatures of statically shaped tensor types; an error at `loc` naming
/// `what` ("argument", "result") otherwise.
mlir::LogicalResult signatureOf(mlir::TypeRange types, mlir::Location loc,
                                const char *what,
                                std::vector<TensorSignature> &out);

} // namespace cuvil::detail

#endif // CUVIL_LIB_DRIVER_DRIVERSUPPORT_H
