//===- OpKinds.cpp - Op classification and colours for IR graphs ----------===//

#include "cuvil/Graph/IRGraph.h"

#include <cstring>

namespace cuvil::graph {

const char *opKindName(OpKind kind) {
  switch (kind) {
  case OpKind::Argument:
    return "argument";
  case OpKind::Block:
    return "block";
  case OpKind::Contraction:
    return "contraction";
  case OpKind::Elementwise:
    return "elementwise";
  case OpKind::Reduction:
    return "reduction";
  case OpKind::Shape:
    return "shape";
  case OpKind::Memory:
    return "memory";
  case OpKind::Control:
    return "control";
  case OpKind::Constant:
    return "constant";
  case OpKind::Call:
    return "call";
  case OpKind::Other:
    return "other";
  }
  return "other";
}

const char *opKindColor(OpKind kind) {
  switch (kind) {
  case OpKind::Argument:
    return "#e0e0e0";
  case OpKind::Block:
    return "#d9d2e9";
  case OpKind::Contraction:
    return "#f4a582";
  case OpKind::Elementwise:
    return "#92c5de";
  case OpKind::Reduction:
    return "#b8e186";
  case OpKind::Shape:
    return "#fddc8e";
  case OpKind::Memory:
    return "#c2a5cf";
  case OpKind::Control:
    return "#d0d0f0";
  case OpKind::Constant:
    return "#f0f0f0";
  case OpKind::Call:
    return "#f1b6da";
  case OpKind::Other:
    return "#ffffff";
  }
  return "#ffffff";
}

namespace {

bool startsWith(const std::string &s, const char *prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

bool contains(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

bool anyOf(const std::string &s, std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (s == name)
      return true;
  return false;
}

} // namespace

OpKind classifyOp(const std::string &opName) {
  // The mnemonic after the dialect prefix decides most cases.
  std::string::size_type dot = opName.find('.');
  std::string dialect = dot == std::string::npos ? "" : opName.substr(0, dot);
  std::string op = dot == std::string::npos ? opName : opName.substr(dot + 1);

  if (contains(op, "constant") || op == "mlir.zero" || op == "mlir.undef" ||
      op == "mlir.poison" || op == "mlir.addressof")
    return OpKind::Constant;
  if (contains(op, "matmul") || startsWith(op, "conv") || op == "fma" ||
      op == "contract" || op == "dot" || contains(op, "intr.fmuladd") ||
      contains(op, "intr.fma") || op == "outerproduct")
    return OpKind::Contraction;
  if (contains(op, "reduce") || contains(op, "reduction") || op == "sum" ||
      op == "mean" || op == "softmax" || op == "layer_norm" ||
      contains(op, "pool") || op == "multi_reduction")
    return OpKind::Reduction;
  if (op == "call" || op == "call_indirect" || dialect == "call")
    return OpKind::Call;
  if (dialect == "scf" || dialect == "cf" || dialect == "omp" ||
      (dialect == "affine" && op != "apply") ||
      anyOf(op, {"return", "yield", "br", "cond_br", "switch", "func",
                 "terminator", "module"}) ||
      opName == "return")
    return OpKind::Control;
  if (dialect == "memref" || dialect == "bufferization" ||
      anyOf(op, {"empty", "alloc", "alloca", "load", "store", "getelementptr",
                 "transfer_read", "transfer_write", "copy", "fill",
                 "insertvalue", "extractvalue", "intr.memcpy",
                 "materialize_in_destination", "ptrtoint", "inttoptr"}))
    return OpKind::Memory;
  if (anyOf(op, {"reshape", "transpose", "broadcast", "broadcast_to",
                 "concat", "slice", "extract_slice", "insert_slice",
                 "expand_shape", "collapse_shape", "cast", "bitcast",
                 "extract", "insert", "shuffle", "splat", "where",
                 "shape_cast", "index_cast", "sitofp", "fptosi", "fpext",
                 "fptrunc", "extf", "truncf", "pad", "apply"}))
    return OpKind::Shape;
  if (dialect == "arith" || dialect == "math" || dialect == "cuvil" ||
      op == "generic" || op == "map" || op == "elemwise_unary" ||
      op == "elemwise_binary" || (dialect == "llvm" && !contains(op, ".")))
    return OpKind::Elementwise;
  return OpKind::Other;
}

} // namespace cuvil::graph
