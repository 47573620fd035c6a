//===- DTypes.cpp - The element types of Cuvil IR, in one table -----------===//
//
// Adding an element type here (and to Cuvil_Element in CuvilOps.td, which a
// test keeps in step with this table) makes it known to every consumer.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/DTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::cuvil;

static Type f16(MLIRContext *c) { return Builder(c).getF16Type(); }
static Type bf16(MLIRContext *c) { return Builder(c).getBF16Type(); }
static Type f32(MLIRContext *c) { return Builder(c).getF32Type(); }
static Type f64(MLIRContext *c) { return Builder(c).getF64Type(); }
static Type i1(MLIRContext *c) { return Builder(c).getI1Type(); }
static Type i8(MLIRContext *c) { return Builder(c).getI8Type(); }
static Type i32(MLIRContext *c) { return Builder(c).getI32Type(); }
static Type i64(MLIRContext *c) { return Builder(c).getI64Type(); }

static const DType kDTypes[] = {
    // name, MLIR name, bytes, in NumPy, compiled, builder
    {"float16", "f16", 2, true, false, f16},
    {"bfloat16", "bf16", 2, false, false, bf16},
    {"float32", "f32", 4, true, true, f32},
    {"float64", "f64", 8, true, true, f64},
    {"int8", "i8", 1, true, false, i8},
    {"int32", "i32", 4, true, true, i32},
    {"int64", "i64", 8, true, true, i64},
    {"bool", "i1", 1, true, true, i1},
};

llvm::ArrayRef<DType> mlir::cuvil::dtypes() { return kDTypes; }

const DType *mlir::cuvil::lookupDType(Type elementType) {
  const DType *found = llvm::find_if(
      kDTypes, [&](const DType &d) { return d.matches(elementType); });
  return found == std::end(kDTypes) ? nullptr : found;
}

const DType *mlir::cuvil::lookupDType(llvm::StringRef name) {
  const DType *found =
      llvm::find_if(kDTypes, [&](const DType &d) { return d.name == name; });
  return found == std::end(kDTypes) ? nullptr : found;
}

std::optional<llvm::StringRef> mlir::cuvil::dtypeName(Type elementType) {
  if (const DType *d = lookupDType(elementType))
    return llvm::StringRef(d->name);
  return std::nullopt;
}
