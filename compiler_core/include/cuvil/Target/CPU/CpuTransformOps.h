//===- CpuTransformOps.h - Transform ops of the CPU schedule ----*- C++ -*-===//
#ifndef CUVIL_TARGET_CPU_CPUTRANSFORMOPS_H
#define CUVIL_TARGET_CPU_CPUTRANSFORMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#define GET_OP_CLASSES
#include "cuvil/Target/CPU/CpuTransformOps.h.inc"

namespace mlir::cuvil {

/// Adds the CPU schedule's transform ops (`transform.cuvil.*`) to the
/// transform dialect wherever it is loaded from `registry`.
void registerCpuTransformOps(DialectRegistry &registry);

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_CPU_CPUTRANSFORMOPS_H
