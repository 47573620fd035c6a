//===- Profiler.h - Public interface of the Cuvil profiler library --------===//
//
// The one header clients include: the trace model, its file formats, the
// aggregations behind the profiler views, and the collectors.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PROFILER_PROFILER_H
#define CUVIL_PROFILER_PROFILER_H

#include "cuvil/Profiler/Analysis.h"
#include "cuvil/Profiler/Collectors.h"
#include "cuvil/Profiler/Formats.h"
#include "cuvil/Profiler/Trace.h"

#endif // CUVIL_PROFILER_PROFILER_H
