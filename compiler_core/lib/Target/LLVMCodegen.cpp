//===- LLVMCodegen.cpp - From the LLVM dialect to machine code ------------===//
//
// What the backends that generate code through LLVM share: translation to
// LLVM IR for a target machine, its optimization, object and assembly
// emission.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/LLVMCodegen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::cuvil;

/// LLVM's IR pipeline level. The IR reaching LLVM is already tiled,
/// vectorized and unrolled by the CPU schedule; O3's extra IR passes blow
/// the long unrolled blocks up further and made the machine schedulers
/// quadratic on them (the example transformer block: 24 s of CPU to
/// compile at O3 against 0.9 s at O2, with no measurable gain in its run
/// time or the GEMMs'). Code generation itself stays at -O3.
static constexpr unsigned kIROptLevel = 2;

llvm::Error mlir::cuvil::optimizeLLVMIR(llvm::Module &module,
                                        llvm::TargetMachine &tm) {
  return makeOptimizingTransformer(kIROptLevel, 0, &tm)(&module);
}

namespace {
/// A constant global translated without its value, which is then given as
/// raw bytes (translateToLLVMIR).
struct HeldValue {
  LLVM::GlobalOp op;
  DenseIntOrFPElementsAttr value;
  LLVM::Linkage linkage;
};
} // namespace

/// The value of `global` when it can be stored as its raw data: a constant
/// array of 1 KiB or more of whole-byte numbers (a dense i1 attribute is
/// bit-packed, LLVM's i1 arrays are not), shaped as its LLVM array type,
/// with a linkage a definition of bytes keeps.
static DenseIntOrFPElementsAttr rawValue(LLVM::GlobalOp global) {
  auto dense =
      llvm::dyn_cast_or_null<DenseIntOrFPElementsAttr>(global.getValueOrNull());
  if (!dense || dense.isSplat() || !global.getConstant() ||
      global.getThreadLocal_() || !global.getInitializerRegion().empty() ||
      dense.getRawData().size() < 1024)
    return {};
  LLVM::Linkage linkage = global.getLinkage();
  if (linkage != LLVM::Linkage::Private && linkage != LLVM::Linkage::Internal)
    return {};
  Type element = dense.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
      !llvm::isPowerOf2_32(element.getIntOrFloatBitWidth()))
    return {};
  Type type = global.getGlobalType();
  for (int64_t extent : dense.getType().getShape()) {
    auto array = llvm::dyn_cast<LLVM::LLVMArrayType>(type);
    if (!array || int64_t(array.getNumElements()) != extent)
      return {};
    type = array.getElementType();
  }
  return type == element ? dense : DenseIntOrFPElementsAttr();
}

/// Replaces `global` by a constant array of `bytes` with `linkage` and the
/// name, attributes and alignment it had.
static void defineAsBytes(llvm::GlobalVariable *global, llvm::StringRef bytes,
                          llvm::GlobalValue::LinkageTypes linkage) {
  llvm::Module &module = *global->getParent();
  llvm::Constant *raw = llvm::ConstantDataArray::getRaw(
      bytes, bytes.size(), llvm::Type::getInt8Ty(module.getContext()));
  auto *defined = new llvm::GlobalVariable(
      module, raw->getType(), /*isConstant=*/true, linkage, raw, "", global,
      global->getThreadLocalMode(), global->getAddressSpace());
  defined->copyAttributesFrom(global);
  defined->setAlignment(module.getDataLayout().getPreferredAlign(global));
  defined->takeName(global);
  global->replaceAllUsesWith(defined);
  global->eraseFromParent();
}

/// Defines the global each held value was taken from as an array of its
/// bytes, with the alignment its numbers had.
static void defineHeldValues(llvm::Module &module,
                             llvm::ArrayRef<HeldValue> held) {
  for (HeldValue entry : held) {
    llvm::GlobalVariable *declared =
        module.getNamedGlobal(entry.op.getSymName());
    if (!declared)
      continue; // not translated: nothing refers to it
    llvm::ArrayRef<char> raw = entry.value.getRawData();
    defineAsBytes(declared, llvm::StringRef(raw.data(), raw.size()),
                  entry.linkage == LLVM::Linkage::Private
                      ? llvm::GlobalValue::PrivateLinkage
                      : llvm::GlobalValue::InternalLinkage);
  }
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::cuvil::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                               llvm::TargetMachine &tm, bool optimize,
                               bool constantsAsBytes) {
  // Large constant arrays as bytes: MLIR would build one LLVM constant per
  // innermost row (200,000 of them for a 12 MB transformer block, 30 ms
  // with their teardown), which the object writer then emits number by
  // number. Their globals are translated as declarations and defined
  // afterwards; the MLIR module gets its values back. Numbers are held in
  // the host's byte order.
  llvm::SmallVector<HeldValue> held;
  if (constantsAsBytes &&
      tm.createDataLayout().isLittleEndian() == llvm::sys::IsLittleEndianHost)
    for (auto global : module.getOps<LLVM::GlobalOp>())
      if (DenseIntOrFPElementsAttr value = rawValue(global)) {
        held.push_back({global, value, global.getLinkage()});
        global.removeValueAttr();
        global.setLinkage(LLVM::Linkage::External);
      }
  auto giveBack = llvm::make_scope_exit([&] {
    for (HeldValue entry : held) {
      entry.op.setValueAttr(entry.value);
      entry.op.setLinkage(entry.linkage);
    }
  });
  // MLIR reports why through diagnostics: keep the first one (its op and
  // location) for the message.
  std::string why;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      if (why.empty() && d.getSeverity() == DiagnosticSeverity::Error) {
        llvm::raw_string_ostream os(why);
        os << d.getLocation() << ": " << d.str();
      }
      return success();
    });
    llvmModule = mlir::translateModuleToLLVMIR(module, context, "cuvil");
  }
  if (!llvmModule)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "translation to LLVM IR failed%s%s",
                                   why.empty() ? "" : ": ", why.c_str());
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple().str());
  defineHeldValues(*llvmModule, held);
  if (optimize) {
    if (llvm::Error error = optimizeLLVMIR(*llvmModule, tm))
      return std::move(error);
  }
  return llvmModule;
}

/// Appends the bytes `value` is stored as, for arrays (nested to any depth)
/// of plain numbers or zeros; false for anything else.
static bool appendStoredBytes(const llvm::Constant *value,
                              const llvm::DataLayout &layout,
                              std::string &bytes) {
  if (auto *data = llvm::dyn_cast<llvm::ConstantDataSequential>(value)) {
    // Numbers are held in the host's byte order.
    if (!llvm::isa<llvm::ArrayType>(data->getType()) ||
        layout.isLittleEndian() != llvm::sys::IsLittleEndianHost)
      return false;
    bytes += data->getRawDataValues();
    return true;
  }
  if (auto *zero = llvm::dyn_cast<llvm::ConstantAggregateZero>(value)) {
    if (!llvm::isa<llvm::ArrayType>(zero->getType()))
      return false;
    bytes.append(layout.getTypeAllocSize(zero->getType()), '\0');
    return true;
  }
  auto *array = llvm::dyn_cast<llvm::ConstantArray>(value);
  if (!array)
    return false;
  for (const llvm::Use &element : array->operands())
    if (!appendStoredBytes(llvm::cast<llvm::Constant>(element.get()), layout,
                           bytes))
      return false;
  return true;
}

/// Gives every constant array of 1 KiB or more an initializer of raw bytes.
/// The object writer emits an array of numbers a number at a time (12.6 MB
/// of a transformer block's weights: 3.1 million calls, about 130 ms) and an
/// array of bytes in one piece. Code reaches the data through the global's
/// address alone, so nothing else changes; the alignment stays the one the
/// numbers had.
static void storeConstantArraysAsBytes(llvm::Module &module) {
  const llvm::DataLayout &layout = module.getDataLayout();
  llvm::SmallVector<llvm::GlobalVariable *> arrays;
  for (llvm::GlobalVariable &global : module.globals())
    if (global.isConstant() && global.hasDefinitiveInitializer() &&
        !global.isThreadLocal() &&
        llvm::isa<llvm::ArrayType>(global.getValueType()) &&
        !global.getValueType()->getArrayElementType()->isIntegerTy(8) &&
        layout.getTypeAllocSize(global.getValueType()) >= 1024)
      arrays.push_back(&global);
  for (llvm::GlobalVariable *global : arrays) {
    std::string bytes;
    if (appendStoredBytes(global->getInitializer(), layout, bytes) &&
        bytes.size() == layout.getTypeAllocSize(global->getValueType()))
      defineAsBytes(global, bytes, global->getLinkage());
  }
}

llvm::Error mlir::cuvil::emitMachineCode(llvm::Module &module,
                                         llvm::TargetMachine &tm, bool assembly,
                                         std::string &out) {
  // Assembly keeps the numbers, one per line, for reading.
  if (!assembly)
    storeConstantArraysAsBytes(module);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  auto fileType = assembly ? llvm::CodeGenFileType::AssemblyFile
                           : llvm::CodeGenFileType::ObjectFile;
  if (tm.addPassesToEmitFile(pm, os, nullptr, fileType))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the target cannot emit this file type");
  pm.run(module);
  out.assign(buffer.begin(), buffer.end());
  return llvm::Error::success();
}
