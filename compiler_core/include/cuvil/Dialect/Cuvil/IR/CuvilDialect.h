//===- CuvilDialect.h - The cuvil dialect ------------------------*- C++
//-*-===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
#define CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilOpsDialect.h.inc"

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
