//===- CApi.cpp - libcuvil_runtime: executable packages from C ------------===//

#include "cuvil/Runtime/ExecutablePackage.h"
#include "cuvil/Runtime/MemRefCall.h"
#include "cuvil/Runtime/MemoryPool.h"
#include "cuvil/Runtime/cuvil_runtime.h"

#include <memory>
#include <string>
#include <vector>

using namespace cuvil;

namespace {
thread_local std::string lastError;

int fail(std::string message) {
  lastError = std::move(message);
  return -1;
}

/// The pieces a cuvil_tensor_info points into, kept per function.
struct TensorView {
  std::string name;
  std::vector<std::string> dims;
  std::vector<const char *> dimPointers;
};
} // namespace

struct cuvil_function {
  const PackagedFunction *function;
  std::string signature;
  std::vector<TensorView> inputs, outputs;
};

struct cuvil_executable {
  std::unique_ptr<ExecutablePackage> package;
  std::vector<std::unique_ptr<cuvil_function>> functions;
  std::unique_ptr<MemoryPool> pool;
  int threads = 0;
};

static TensorView viewOf(const std::string &name,
                         const std::vector<std::string> &dims) {
  TensorView view{name, dims, {}};
  for (const std::string &dim : view.dims)
    view.dimPointers.push_back(dim.c_str());
  return view;
}

extern "C" {

const char *cuvil_last_error(void) { return lastError.c_str(); }

cuvil_executable *cuvil_executable_open(const char *path) {
  return cuvil_executable_open_mapped(path, nullptr);
}

cuvil_executable *cuvil_executable_open_mapped(const char *path,
                                               const char *directory) {
  if (!path) {
    fail("cuvil_executable_open: path is NULL");
    return nullptr;
  }
  std::string error;
  auto package =
      ExecutablePackage::open(path, error, directory ? directory : "");
  if (!package) {
    fail(error);
    return nullptr;
  }
  auto executable = std::make_unique<cuvil_executable>();
  for (const PackagedFunction &fn : package->functions()) {
    auto handle = std::make_unique<cuvil_function>();
    handle->function = &fn;
    handle->signature = fn.signatureText();
    for (size_t i = 0; i < fn.inputs.size(); ++i)
      handle->inputs.push_back(viewOf(fn.inputNames[i], fn.inputDims[i]));
    for (size_t i = 0; i < fn.outputs.size(); ++i)
      handle->outputs.push_back(viewOf("", fn.outputDims[i]));
    executable->functions.push_back(std::move(handle));
  }
  executable->package = std::move(package);
  return executable.release();
}

void cuvil_executable_close(cuvil_executable *executable) { delete executable; }

int cuvil_executable_set_options(cuvil_executable *executable,
                                 uint64_t pool_bytes, int pool_fixed,
                                 int threads) {
  if (!executable)
    return fail("cuvil_executable_set_options: executable is NULL");
  if (threads < 0)
    return fail("cuvil_executable_set_options: threads must be 0 (the "
                "default) or positive, not " +
                std::to_string(threads));
  executable->pool.reset();
  if (pool_bytes)
    executable->pool = std::make_unique<MemoryPool>(
        pool_bytes,
        pool_fixed ? MemoryPool::Growth::Fixed : MemoryPool::Growth::Grow);
  executable->threads = threads;
  return 0;
}

const char *cuvil_executable_fingerprint(const cuvil_executable *executable) {
  return executable ? executable->package->fingerprint().c_str() : "";
}

int cuvil_executable_function_count(const cuvil_executable *executable) {
  return executable ? static_cast<int>(executable->functions.size()) : 0;
}

const char *cuvil_executable_function_name(const cuvil_executable *executable,
                                           int index) {
  if (!executable || index < 0 ||
      index >= static_cast<int>(executable->functions.size())) {
    fail("cuvil_executable_function_name: no function number " +
         std::to_string(index));
    return nullptr;
  }
  return executable->functions[index]->function->name.c_str();
}

const cuvil_function *cuvil_executable_function(cuvil_executable *executable,
                                                const char *name) {
  if (!executable || !name) {
    fail("cuvil_executable_function: executable or name is NULL");
    return nullptr;
  }
  std::string error;
  const PackagedFunction *fn = executable->package->find(name, error);
  if (!fn) {
    fail(error);
    return nullptr;
  }
  for (const auto &handle : executable->functions)
    if (handle->function == fn)
      return handle.get();
  return nullptr;
}

const char *cuvil_function_signature(const cuvil_function *function) {
  return function ? function->signature.c_str() : "";
}

int cuvil_function_input_count(const cuvil_function *function) {
  return function ? static_cast<int>(function->inputs.size()) : 0;
}

int cuvil_function_output_count(const cuvil_function *function) {
  return function ? static_cast<int>(function->outputs.size()) : 0;
}

static int describe(const cuvil_function *function, int index, bool input,
                    cuvil_tensor_info *info) {
  const char *what = input ? "input" : "output";
  if (!function || !info)
    return fail(std::string("cuvil_function_") + what +
                ": function or info is NULL");
  const auto &views = input ? function->inputs : function->outputs;
  const auto &sigs =
      input ? function->function->inputs : function->function->outputs;
  if (index < 0 || index >= static_cast<int>(views.size()))
    return fail(function->function->name + " has no " + what + " " +
                std::to_string(index) + " (it has " +
                std::to_string(views.size()) + ")");
  info->name = views[index].name.c_str();
  info->dtype = sigs[index].dtype.c_str();
  info->rank = static_cast<int>(sigs[index].shape.size());
  info->shape = sigs[index].shape.data();
  info->dim_names = views[index].dimPointers.data();
  return 0;
}

int cuvil_function_input(const cuvil_function *function, int index,
                         cuvil_tensor_info *info) {
  return describe(function, index, true, info);
}

int cuvil_function_output(const cuvil_function *function, int index,
                          cuvil_tensor_info *info) {
  return describe(function, index, false, info);
}

/// Input shapes as vectors (each of its input's rank).
static std::vector<std::vector<int64_t>>
shapesOf(const PackagedFunction &fn, const int64_t *const *inputShapes) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    size_t rank = fn.inputs[i].shape.size();
    shapes.emplace_back(inputShapes[i], inputShapes[i] + rank);
  }
  return shapes;
}

int cuvil_function_output_shape(const cuvil_function *function,
                                const int64_t *const *input_shapes, int index,
                                int64_t *shape) {
  if (!function || !input_shapes || !shape)
    return fail("cuvil_function_output_shape: a pointer argument is NULL");
  const PackagedFunction &fn = *function->function;
  if (index < 0 || index >= static_cast<int>(fn.outputs.size()))
    return fail(fn.name + " has no output " + std::to_string(index));
  std::vector<std::vector<int64_t>> out;
  std::string error;
  if (!outputShapes(fn, shapesOf(fn, input_shapes), out, error))
    return fail(fn.name + ": " + error);
  std::copy(out[index].begin(), out[index].end(), shape);
  return 0;
}

static int run(cuvil_executable *executable, const cuvil_function *function,
               const void *const *inputs, const int64_t *const *inputShapes,
               void *const *outputs) {
  if (!executable || !function || (!inputs && !function->inputs.empty()) ||
      !outputs)
    return fail("cuvil_function_run: a pointer argument is NULL");
  const PackagedFunction &fn = *function->function;
  Shapes shapes;
  if (inputShapes) {
    std::vector<std::vector<int64_t>> out;
    std::string error;
    shapes = shapesOf(fn, inputShapes);
    if (!outputShapes(fn, shapes, out, error))
      return fail(fn.name + ": " + error);
    shapes.insert(shapes.end(), out.begin(), out.end());
  } else if (fn.isSymbolic()) {
    return fail(fn.name + " has symbolic sizes (" + function->signature +
                "); call cuvil_function_run_shaped with the inputs' shapes");
  }
  for (size_t i = 0; i < fn.inputs.size(); ++i)
    if (!inputs[i])
      return fail(fn.name + ": input '" + fn.inputNames[i] + "' is NULL");
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    if (!outputs[i])
      return fail(fn.name + ": output " + std::to_string(i) + " is NULL");
  std::string error;
  std::shared_ptr<Executable> code = executable->package->load(fn, error);
  if (!code)
    return fail(error);
  {
    MemoryPool::Scope scope(executable->pool.get());
    ScopedThreadCount threadCount(executable->threads);
    code->call(const_cast<void *const *>(inputs), outputs, nullptr,
               inputShapes ? &shapes : nullptr);
  }
  if (CallError failure = takeCallError(fn.name))
    return fail(failure.message);
  return 0;
}

int cuvil_function_run(cuvil_executable *executable,
                       const cuvil_function *function,
                       const void *const *inputs, void *const *outputs) {
  return run(executable, function, inputs, nullptr, outputs);
}

int cuvil_function_run_shaped(cuvil_executable *executable,
                              const cuvil_function *function,
                              const void *const *inputs,
                              const int64_t *const *input_shapes,
                              void *const *outputs) {
  if (!input_shapes)
    return fail("cuvil_function_run_shaped: input_shapes is NULL");
  return run(executable, function, inputs, input_shapes, outputs);
}

} // extern "C"
