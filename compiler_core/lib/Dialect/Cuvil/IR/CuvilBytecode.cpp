//===- CuvilBytecode.cpp - The cuvil dialect's bytecode version -----------===//
//
// Bytecode written by Cuvil carries the cuvil dialect's version. A reader
// refuses IR from a newer dialect and upgrades IR from an older one before
// it is verified (upgradeFromVersion), the way MLIR's versioned dialects do.
// Version 1 is the first; when an op changes incompatibly the version goes
// up and the upgrade rewrites the old form.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Bytecode/BytecodeImplementation.h"

using namespace mlir;
using namespace mlir::cuvil;

namespace {

struct CuvilDialectVersion : public DialectVersion {
  explicit CuvilDialectVersion(uint64_t value) : value(value) {}
  uint64_t value;
};

struct CuvilBytecodeInterface : public BytecodeDialectInterface {
  explicit CuvilBytecodeInterface(Dialect *dialect)
      : BytecodeDialectInterface(dialect) {}

  void writeVersion(DialectBytecodeWriter &writer) const override {
    writer.writeVarInt(kCuvilDialectVersion);
  }

  std::unique_ptr<DialectVersion>
  readVersion(DialectBytecodeReader &reader) const override {
    uint64_t value;
    if (failed(reader.readVarInt(value)))
      return nullptr;
    if (value == 0 || value > kCuvilDialectVersion) {
      reader.emitError() << "the cuvil dialect of this IR has version " << value
                         << "; this Cuvil reads versions 1 to "
                         << kCuvilDialectVersion
                         << " (IR from a newer Cuvil: load it with that "
                            "version, or use the package's text form)";
      return nullptr;
    }
    return std::make_unique<CuvilDialectVersion>(value);
  }

  LogicalResult
  upgradeFromVersion(Operation *,
                     const DialectVersion &version) const override {
    // Every version up to kCuvilDialectVersion reads as is (there is one).
    (void)static_cast<const CuvilDialectVersion &>(version);
    return success();
  }
};

} // namespace

void mlir::cuvil::registerCuvilBytecodeInterface(CuvilDialect *dialect) {
  dialect->addInterfaces<CuvilBytecodeInterface>();
}
