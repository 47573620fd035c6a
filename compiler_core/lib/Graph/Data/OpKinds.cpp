//===- OpKinds.cpp - Names and colours of op kinds in IR graphs -----------===//

#include "cuvil/Graph/IRGraph.h"

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

bool opKindFromName(const std::string &name, OpKind &kind) {
  for (int k = 0; k <= static_cast<int>(OpKind::Other); ++k) {
    if (name == opKindName(static_cast<OpKind>(k))) {
      kind = static_cast<OpKind>(k);
      return true;
    }
  }
  return false;
}

} // namespace cuvil::graph
