/* NvtxRecordingTool.c - An NVTX tool that logs range pushes and pops.
 *
 * Loaded by NVTX itself when NVTX_INJECTION64_PATH names it, exactly as
 * Nsight Systems injects its own: it proves that compiled kernels open and
 * close NVTX ranges named after their IR ops, without a GPU or nsys. Each
 * push appends "push <domain> <message> <int64 payload>" and each pop "pop"
 * to the file named by CUVIL_NVTX_LOG.
 */
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *logFile;

static nvtxDomainHandle_t createDomain(const char *name) {
  /* The handle is the name itself: enough to tell domains apart in the log. */
  return (nvtxDomainHandle_t)strdup(name);
}

static int pushRange(nvtxDomainHandle_t domain,
                     const nvtxEventAttributes_t *attributes) {
  const char *message = attributes->messageType == NVTX_MESSAGE_TYPE_ASCII
                            ? attributes->message.ascii
                            : "?";
  long long payload = attributes->payloadType == NVTX_PAYLOAD_TYPE_INT64
                          ? attributes->payload.llValue
                          : -1;
  fprintf(logFile, "push %s %s|%lld\n", domain ? (const char *)domain : "-",
          message, payload);
  fflush(logFile);
  return 0;
}

static int popRange(nvtxDomainHandle_t domain) {
  (void)domain;
  fputs("pop\n", logFile);
  fflush(logFile);
  return 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  const char *path = getenv("CUVIL_NVTX_LOG");
  logFile = fopen(path ? path : "/dev/stderr", "a");
  if (!logFile)
    return 0;
  const NvtxExportTableCallbacks *callbacks =
      (const NvtxExportTableCallbacks *)getExportTable(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = 0;
  unsigned int size = 0;
  if (!callbacks ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size))
    return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)createDomain;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)pushRange;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)popRange;
  return 1;
}
