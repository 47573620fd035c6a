//===- TargetRegistry.cpp - The process's target backends -----------------===//

#include "cuvil/Target/TargetBackend.h"
#include "cuvil/Target/TargetSupport.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <mutex>

using namespace mlir;
using namespace mlir::cuvil;

namespace {
struct Registry {
  std::mutex mutex;
  llvm::StringMap<std::unique_ptr<TargetBackend>> backends;
};

Registry &registry() {
  static Registry instance;
  return instance;
}

std::string unsupported(const TargetBackend &target, const char *what,
                        const std::string &name,
                        const std::vector<std::string> &supported) {
  return "the " + target.name().str() + " target cannot " + what + " '" + name +
         "'; it supports " + ::cuvil::joinNames(supported);
}
} // namespace

bool TargetRegistry::registerBackend(std::unique_ptr<TargetBackend> backend) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string name = backend->name().str();
  if (r.backends.count(name))
    return false;
  backend->registerPasses();
  r.backends[name] = std::move(backend);
  return true;
}

const TargetBackend *TargetRegistry::lookup(StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.backends.find(name);
  return it == r.backends.end() ? nullptr : it->second.get();
}

std::vector<std::string> TargetRegistry::names() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> result;
  for (const auto &entry : r.backends)
    result.push_back(entry.getKey().str());
  std::sort(result.begin(), result.end());
  return result;
}

LogicalResult TargetBackend::printStage(ModuleOp lowered,
                                        ::cuvil::IRStage stage,
                                        const LoadRequest &request,
                                        std::string &out,
                                        std::string &error) const {
  std::vector<std::string> names;
  for (::cuvil::IRStage s : irStages())
    names.push_back(::cuvil::irStageName(s));
  error =
      unsupported(*this, "show IR stage", ::cuvil::irStageName(stage), names);
  return failure();
}

LogicalResult TargetBackend::emitStage(ModuleOp lowered, ::cuvil::IRStage stage,
                                       const LoadRequest &request,
                                       StringRef path,
                                       std::string &error) const {
  std::string text;
  if (failed(printStage(lowered, stage, request, text, error)))
    return failure();
  return writeFile(path, text, error);
}

LogicalResult TargetBackend::emit(ModuleOp lowered, ::cuvil::ArtifactKind kind,
                                  const LoadRequest &request, StringRef path,
                                  std::string &error) const {
  std::vector<std::string> names;
  for (::cuvil::ArtifactKind k : artifacts())
    names.push_back(::cuvil::artifactName(k));
  error =
      unsupported(*this, "write artifact", ::cuvil::artifactName(kind), names);
  return failure();
}
