//===- Nvtx.cpp - NVTX ranges named after IR ops --------------------------===//
//
// nvtx3 is header-only: until a tool (Nsight Systems, a CUPTI client) injects
// itself through NVTX_INJECTION64_PATH, every call is an empty function
// pointer call. Built without the headers, the ranges compile to nothing.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Profiler/Collectors.h"

#if CUVIL_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace cuvil::profiler {

#if CUVIL_HAVE_NVTX

static nvtxDomainHandle_t cuvilDomain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("cuvil");
  return domain;
}

bool nvtxAvailable() { return true; }

NvtxRange::NvtxRange(const char *opName, int64_t opId) {
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = opName;
  if (opId != kNoOp) {
    // The op id travels as the payload: nsys exports it as int64Value and
    // CUPTI as marker data, which the importers turn back into op ids.
    attributes.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    attributes.payload.llValue = opId;
  }
  nvtxDomainRangePushEx(cuvilDomain(), &attributes);
}

NvtxRange::~NvtxRange() { nvtxDomainRangePop(cuvilDomain()); }

#else

bool nvtxAvailable() { return false; }
NvtxRange::NvtxRange(const char *, int64_t) {}
NvtxRange::~NvtxRange() {}

#endif

} // namespace cuvil::profiler
