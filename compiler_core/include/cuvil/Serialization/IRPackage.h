//===- IRPackage.h - Portable Cuvil IR in a package, and its fingerprint -===//
//
// An IR package (.irpkg, docs/irpkg.md) holds one module twice: as MLIR
// bytecode, read when the reader's MLIR has the writer's major version, and
// as text, read otherwise (bytecode does not cross LLVM majors). Its
// metadata names the structural fingerprint of the IR, which the reader
// recomputes and compares.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SERIALIZATION_IRPACKAGE_H
#define CUVIL_SERIALIZATION_IRPACKAGE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace cuvil {

/// The fingerprint scheme structuralFingerprint computes by default; IR
/// packages record theirs (`fingerprint_scheme`, absent for 1).
constexpr int kFingerprintScheme = 2;

/// Hex SHA-256 over the generic form without locations, functions renamed
/// by position: equal for graphs that compute the same thing, whatever
/// front end built them. Scheme 1 hashes the text with every constant in
/// hex; scheme 2 hashes the text with large dense constants elided, then
/// their raw bytes (docs/irpkg.md).
std::string structuralFingerprint(mlir::ModuleOp module,
                                  int scheme = kFingerprintScheme);

/// Entry names inside an IR package.
constexpr const char *kIRBytecodeEntry = "ir/module.mlirbc";
constexpr const char *kIRTextEntry = "ir/module.mlir";

/// Writes `module` to `path`. `metadataJson` (a JSON object: signature,
/// target, ...) is stored with the fields the format adds: `fingerprint`,
/// `cuvil_version`, `mlir_version`, `dialect_versions`. False with `error`.
bool writeIRPackage(mlir::ModuleOp module, const std::string &metadataJson,
                    const std::string &path, std::string &error);

/// Reads the module of the IR package at `path` into `context`, verifies it
/// and its fingerprint; `metadataJson` receives the metadata object and
/// `form` "bytecode" or "text" (what was read). Null with `error` naming the
/// file and the field on failure.
mlir::OwningOpRef<mlir::ModuleOp>
readIRPackage(const std::string &path, mlir::MLIRContext *context,
              std::string &metadataJson, std::string &form, std::string &error);

} // namespace cuvil

#endif // CUVIL_SERIALIZATION_IRPACKAGE_H
