//===- ProfilingBindings.h - Timing compiled calls and their kernels ------===//
#ifndef CUVIL_PYTHON_PROFILINGBINDINGS_H
#define CUVIL_PYTHON_PROFILINGBINDINGS_H

#include "cuvil/Driver/Compiler.h"
#include "cuvil/Profiler/Trace.h"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace cuvil::python {

/// Calls `fn` without the GIL. While profiling (or under an NVTX tool such
/// as Nsight Systems) the call is recorded with the caller's Python stack
/// and every kernel is timed and/or wrapped in an NVTX range; otherwise the
/// code runs with a null hook table. `shapes`, when given, are the actual
/// shapes of inputs then outputs (for dynamic sizes). Called with the GIL
/// held.
/// Ends CUPTI's collection for the profile whose trace is being taken, if
/// one of its calls ran GPU code: its GPU kernels, copies and API calls join
/// `trace`, linked to the launches (IR ops) by correlation. Returns why the
/// profile has no GPU lanes when collection could not start (no libcupti, no
/// GPU), else "".
std::string finishGpuCollection(profiler::Trace &trace);

/// With `onDevice`, the pointers are device memory of the target's device
/// (CompiledFunction::callOnDevice); ValueError where the target has none.
void callCompiled(CompiledFunction &fn, const std::vector<void *> &inputs,
                  const std::vector<void *> &outputs,
                  const Shapes *shapes = nullptr, bool onDevice = false);

/// After a call of compiled code on this thread: raises MemoryError when
/// it could not allocate an intermediate buffer, RuntimeError when it
/// stopped before writing a result; `function` names it in the message.
void checkCall(const std::string &function);

} // namespace cuvil::python

#endif // CUVIL_PYTHON_PROFILINGBINDINGS_H
