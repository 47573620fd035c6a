//===- RuntimeSlots.h - Runtime functions compiled code calls ---*- C++ -*-===//
//
// Generated code does not link against Cuvil's runtime: each runtime
// function it calls (CUDA host code's `mgpu*`, parallel regions' `__kmpc_*`)
// is defined in the generated library as a call through a pointer global,
// `cuvil_slot_<name>`, which the loader fills (SharedLibrary.cpp), so the
// code finds the runtime of whichever process loads it and nothing enters
// the global symbol scope. No MLIR headers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_RUNTIMESLOTS_H
#define CUVIL_RUNTIME_RUNTIMESLOTS_H

#include <string>
#include <string_view>

namespace cuvil {

/// Prefix of the pointer global through which a function is called.
constexpr const char *kSlotPrefix = "cuvil_slot_";

inline std::string slotName(std::string_view function) {
  return std::string(kSlotPrefix) + std::string(function);
}

/// A runtime function and its address, for the loader.
struct RuntimeFunction {
  const char *name;
  void *address;
};

} // namespace cuvil

#endif // CUVIL_RUNTIME_RUNTIMESLOTS_H
