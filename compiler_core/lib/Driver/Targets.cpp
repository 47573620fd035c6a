//===- Targets.cpp - Targets, devices, plugins and default pipelines ------===//
//
// The public face of the target registry: what `target=` may name, device
// strings, target plugins, and the pipeline a target runs by default.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Driver/Compiler.h"

#include "DriverSupport.h"

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/TargetBackend.h"
#include "cuvil/Target/TargetPlugin.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/DynamicLibrary.h"

#include <mutex>

using mlir::cuvil::TargetBackend;
using mlir::cuvil::TargetRegistry;

namespace {
std::string registeredTargets() {
  return cuvil::joinNames(TargetRegistry::names());
}
} // namespace

const TargetBackend *cuvil::detail::lookupTarget(const std::string &name,
                                                 int device,
                                                 std::string &error) {
  mlir::cuvil::registerBuiltinTargets();
  const TargetBackend *target = TargetRegistry::lookup(name);
  if (!target) {
    error = "unknown target '" + name +
            "'; registered targets: " + registeredTargets();
    return nullptr;
  }
  // A target with no device here (no GPU driver) still compiles and writes
  // artifacts; loading its code says why it cannot run.
  int count = target->deviceCount();
  if (device < 0 || (count > 0 && device >= count)) {
    error = "target '" + name + "' has no device " + std::to_string(device) +
            "; it has " + std::to_string(count) + " (use " + name + ":0" +
            (count > 1 ? " to " + name + ":" + std::to_string(count - 1) : "") +
            ")";
    return nullptr;
  }
  return target;
}

std::vector<cuvil::TargetInfo> cuvil::availableTargets() {
  mlir::cuvil::registerBuiltinTargets();
  std::vector<TargetInfo> result;
  for (const std::string &name : TargetRegistry::names()) {
    const TargetBackend *target = TargetRegistry::lookup(name);
    result.push_back(
        {name, target->description().str(), target->deviceCount()});
  }
  return result;
}

std::string cuvil::targetUnavailableReason(const std::string &name, int index) {
  std::string error;
  const TargetBackend *target = detail::lookupTarget(name, index, error);
  return target ? target->unavailableReason(index) : error;
}

bool cuvil::parseDevice(const std::string &device, std::string &target,
                        int &index, std::string &error) {
  size_t colon = device.find(':');
  target = device.substr(0, colon);
  index = 0;
  if (colon != std::string::npos) {
    std::string digits = device.substr(colon + 1);
    if (digits.empty() || digits.size() > 4 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      error = "bad device '" + device +
              "': expected a target name, optionally with ':' and a device "
              "index, e.g. 'cpu' or 'cuda:0'";
      return false;
    }
    index = std::stoi(digits);
  }
  return detail::lookupTarget(target, index, error) != nullptr;
}

namespace {
bool addPluginBackend(cuvil::TargetPluginRegistrar *self,
                      TargetBackend *backend) {
  std::unique_ptr<TargetBackend> owned(backend);
  auto *added = static_cast<std::vector<std::string> *>(self->context);
  std::string name = owned->name().str();
  if (!TargetRegistry::registerBackend(std::move(owned)))
    return false;
  added->push_back(name);
  return true;
}
} // namespace

bool cuvil::loadTargetPlugin(const std::string &path, std::string &error) {
  static std::mutex mutex;
  static llvm::StringSet<> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.contains(path))
    return true;
  mlir::cuvil::registerBuiltinTargets();
  mlir::cuvil::registerCuvilPasses();
  std::string loadError;
  auto library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &loadError);
  if (!library.isValid()) {
    error = "cannot load target plugin " + path + ": " + loadError;
    return false;
  }
  auto entry = reinterpret_cast<CuvilRegisterTargetPluginFn>(
      library.getAddressOfSymbol("cuvilRegisterTargetPlugin"));
  if (!entry) {
    error = "target plugin " + path +
            " does not export cuvilRegisterTargetPlugin (see "
            "cuvil/Target/TargetPlugin.h)";
    return false;
  }
  std::vector<std::string> added;
  TargetPluginRegistrar registrar{kTargetPluginApiVersion, addPluginBackend,
                                  &added};
  entry(&registrar);
  if (registrar.apiVersion != kTargetPluginApiVersion) {
    error = "target plugin " + path + " was built for plugin API version " +
            std::to_string(registrar.apiVersion) + ", this Cuvil has " +
            std::to_string(kTargetPluginApiVersion) +
            "; rebuild it against this Cuvil";
    return false;
  }
  if (added.empty()) {
    error = "target plugin " + path +
            " registered no new target (registered already: " +
            registeredTargets() + ")";
    return false;
  }
  loaded.insert(path);
  return true;
}

bool cuvil::detail::defaultSteps(const CompileOptions &options,
                                 std::vector<PipelineStep> &steps,
                                 std::string &error) {
  const TargetBackend *target =
      detail::lookupTarget(options.target, options.device, error);
  if (!target)
    return false;
  mlir::cuvil::TargetOptions targetOptions;
  targetOptions.enableFusion = options.enableFusion;
  targetOptions.parallel = options.parallel;
  targetOptions.device = options.device;
  mlir::cuvil::PipelineBuilder pipeline =
      mlir::cuvil::buildPipeline(*target, targetOptions);
  steps.clear();
  for (const auto &step : pipeline.steps())
    steps.push_back({step.name, step.phase, step.pipeline, step.optional, {}});
  return true;
}

bool cuvil::detail::verifySteps(const std::string &target,
                                const std::vector<PipelineStep> &steps,
                                std::string &error) {
  mlir::cuvil::registerCuvilPasses();
  for (const PipelineStep &step : steps)
    if (!mlir::cuvil::PipelineBuilder::verifyStep(step.name, step.phase,
                                                  step.pipeline, error)) {
      error = "the " + target + " pipeline does not parse: " + error;
      return false;
    }
  return true;
}

bool cuvil::defaultPipeline(const CompileOptions &options,
                            std::vector<PipelineStep> &steps,
                            std::string &error) {
  return detail::defaultSteps(options, steps, error) &&
         detail::verifySteps(options.target, steps, error);
}

bool cuvil::loadPassPlugin(const std::string &path, std::string &error) {
  return mlir::cuvil::loadPassPlugin(path, error);
}

bool cuvil::checkPassPipeline(const std::string &pipeline, std::string &error) {
  return mlir::cuvil::checkPassPipeline(pipeline, error);
}
