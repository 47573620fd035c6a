//===- ProfilingBindings.cpp - Timing compiled calls and their kernels ----===//
//
// Instrumented code calls a hook at the start and end of each kernel. The
// hook table is only passed while something listens: cuvil.profile() (the
// process-wide EventRecorder is on) or an NVTX tool injected by Nsight
// Systems. Each kernel event carries its kernel number, IR name and source
// location, and the Python stack and correlation id of the call around it.
//
//===----------------------------------------------------------------------===//

#include "ProfilingBindings.h"

#include "cuvil/Runtime/MemRefCall.h"

#include "cuvil/Profiler/Profiler.h"

#include <pybind11/stl.h>

#include <Python.h>
#include <frameobject.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>

namespace py = pybind11;
namespace prof = cuvil::profiler;

namespace {

/// Interned names of one compiled function's kernels, kept with it.
struct ProfileContext {
  cuvil::KernelHooks hooks;
  prof::EventRecorder *recorder;
  uint32_t callName;
  int64_t opIdBase; ///< kernel k is IR op opIdBase + k, unique per process
  std::vector<uint32_t> names, locs, nodes;
  std::vector<std::string> nvtxNames;
};

/// The call in flight on this thread; kernels run on the calling thread.
struct CallState {
  int64_t kernelStart = 0;
  uint32_t stack = prof::kNoStack;
  uint64_t correlation = 0;
  std::optional<prof::NvtxRange> nvtx;
};
thread_local CallState callState;

/// CUPTI's activity collection for the profile being recorded: started at
/// its first call of GPU code (before that call launches anything), stopped
/// when its trace is taken, which then gets the GPU's lanes.
struct GpuCollection {
  std::mutex mutex;
  std::unique_ptr<prof::CuptiCollector> collector;
  std::atomic<bool> active{false};
  std::string problem; ///< why the profile has no GPU lanes
};
GpuCollection &gpuCollection() {
  static GpuCollection collection;
  return collection;
}

void startGpuCollection() {
  GpuCollection &g = gpuCollection();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (g.active || !g.problem.empty())
    return;
  auto collector = prof::CuptiCollector::open();
  if (!collector) {
    g.problem = collector.error().text();
    return;
  }
  if (!(*collector)->start()) {
    g.problem = (*collector)->error();
    return;
  }
  g.collector = std::move(*collector);
  g.active = true;
}

/// Nsight Systems and other NVTX tools announce themselves this way.
bool nvtxToolAttached() {
  static const bool attached =
      prof::nvtxAvailable() && (std::getenv("NVTX_INJECTION64_PATH") ||
                                std::getenv("NVTX_INJECTION32_PATH"));
  return attached;
}

void kernelHook(void *context, int32_t kernel, int32_t phase) {
  auto *ctx = static_cast<ProfileContext *>(context);
  CallState &state = callState;
  GpuCollection &gpu = gpuCollection();
  if (phase == 0) {
    if (nvtxToolAttached())
      state.nvtx.emplace(ctx->nvtxNames[kernel].c_str(),
                         ctx->opIdBase + kernel);
    // The GPU work launched now is this IR op's (CUPTI's external id).
    if (gpu.active)
      gpu.collector->pushExternalId(uint64_t(ctx->opIdBase + kernel));
    state.kernelStart = prof::steadyNowNs();
    return;
  }
  int64_t end = prof::steadyNowNs();
  if (gpu.active)
    gpu.collector->popExternalId();
  state.nvtx.reset();
  if (!ctx->recorder->enabled())
    return;
  prof::RecordedEvent event;
  event.startNs = state.kernelStart;
  event.endNs = end;
  event.opId = ctx->opIdBase + kernel;
  event.correlation = state.correlation;
  event.name = ctx->names[kernel];
  event.loc = ctx->locs[kernel];
  event.node = ctx->nodes[kernel];
  event.stack = state.stack;
  event.kind = prof::EventKind::CpuKernel;
  ctx->recorder->record(event);
}

ProfileContext &contextFor(cuvil::CompiledFunction &fn,
                           prof::EventRecorder &recorder) {
  std::shared_ptr<void> &slot = fn.clientData();
  if (!slot) {
    auto ctx = std::make_shared<ProfileContext>();
    ctx->hooks = {&kernelHook, ctx.get()};
    ctx->recorder = &recorder;
    ctx->callName = recorder.intern(fn.name());
    static std::atomic<int64_t> nextOpId{0};
    const std::vector<cuvil::KernelInfo> *kernels;
    {
      py::gil_scoped_release release; // may recompile after a cache load
      kernels = &fn.kernels();
    }
    ctx->opIdBase = nextOpId.fetch_add(int64_t(kernels->size()));
    for (const cuvil::KernelInfo &kernel : *kernels) {
      ctx->names.push_back(recorder.intern(kernel.name));
      ctx->locs.push_back(
          kernel.location.empty() ? 0 : recorder.intern(kernel.location));
      ctx->nodes.push_back(
          kernel.source.name.empty() ? 0 : recorder.intern(kernel.source.name));
      ctx->nvtxNames.push_back(fn.name() + ": " + kernel.name);
    }
    slot = ctx;
  }
  return *static_cast<ProfileContext *>(slot.get());
}

/// The directory of the cuvil package: its frames are not the user's.
const std::string &packageDirectory() {
  static const std::string dir = [] {
    std::string file =
        py::module_::import("cuvil").attr("__file__").cast<std::string>();
    return file.substr(0, file.rfind('/') + 1);
  }();
  return dir;
}

/// The Python stack of the current call, outermost first, without the
/// cuvil package's own frames.
std::vector<prof::PythonFrame> pythonStack() {
  std::vector<prof::PythonFrame> frames;
  PyFrameObject *frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    py::handle codeHandle(reinterpret_cast<PyObject *>(code));
    std::string file = py::str(codeHandle.attr("co_filename"));
    if (file.compare(0, packageDirectory().size(), packageDirectory()) != 0)
      frames.push_back({py::str(codeHandle.attr("co_qualname")), file,
                        static_cast<uint32_t>(PyFrame_GetLineNumber(frame))});
    Py_DECREF(code);
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  std::reverse(frames.begin(), frames.end());
  return frames;
}

} // namespace

/// Raises MemoryError when the call just made on this thread could not
/// allocate an intermediate buffer, RuntimeError when it stopped before
/// writing a result its out-param was sized wrong for.
void cuvil::python::checkCall(const std::string &function) {
  CallError error = cuvil::takeCallError(function);
  if (!error)
    return;
  PyErr_SetString(error.kind == CallError::Kind::Allocation
                      ? PyExc_MemoryError
                      : PyExc_RuntimeError,
                  error.message.c_str());
  throw py::error_already_set();
}

void cuvil::python::callCompiled(CompiledFunction &fn,
                                 const std::vector<void *> &inputs,
                                 const std::vector<void *> &outputs,
                                 const Shapes *shapes, bool onDevice) {
  prof::EventRecorder &recorder = prof::EventRecorder::global();
  bool recording = recorder.enabled();
  // False only where the target keeps no memory of its own (checked before
  // anything runs).
  auto run = [&](const KernelHooks *hooks) {
    if (!onDevice) {
      fn.call(inputs.data(), outputs.data(), hooks, shapes);
      return true;
    }
    return fn.callOnDevice(inputs.data(), outputs.data(), hooks);
  };
  auto refuse = [&] {
    throw py::value_error("cuvil: compiled function '" + fn.name() +
                          "' runs on target '" + fn.target() +
                          "', which takes host arrays; fix: pass NumPy "
                          "arrays or cuvil.nd arrays on the cpu");
  };
  if (!recording && !(nvtxToolAttached() && fn.instrumented())) {
    bool done;
    {
      py::gil_scoped_release release;
      done = run(nullptr);
    }
    if (!done)
      refuse();
    checkCall(fn.name());
    return;
  }
  ProfileContext &ctx = contextFor(fn, recorder);
  if (recording && fn.target() == "cuda")
    startGpuCollection();
  CallState &state = callState;
  state.stack =
      recording ? recorder.internStack(pythonStack()) : prof::kNoStack;
  state.correlation = recording ? recorder.newCorrelation() : 0;
  const KernelHooks *hooks = fn.instrumented() ? &ctx.hooks : nullptr;
  int64_t start = prof::steadyNowNs();
  bool done;
  {
    py::gil_scoped_release release;
    done = run(hooks);
  }
  if (!done)
    refuse();
  checkCall(fn.name());
  if (!recording)
    return;
  prof::RecordedEvent call;
  call.startNs = start;
  call.endNs = prof::steadyNowNs();
  call.name = ctx.callName;
  call.stack = state.stack;
  call.correlation = state.correlation;
  call.kind = prof::EventKind::Python;
  recorder.record(call);
}

std::string cuvil::python::finishGpuCollection(prof::Trace &trace) {
  GpuCollection &g = gpuCollection();
  std::lock_guard<std::mutex> lock(g.mutex);
  std::string problem = std::move(g.problem);
  g.problem.clear();
  if (!g.active)
    return problem;
  g.collector->stop();
  trace.append(g.collector->takeTrace());
  trace.linkLaunches();
  trace.sortEvents();
  g.collector.reset();
  g.active = false;
  return problem;
}
