//===- fuzz_worker_protocol.cpp - libFuzzer target: worker reply decoder -===//
//
// Each input is one line from cuvil-worker's stdout; the decoded message is
// then read the way the Workbench's models read it.
//
//===----------------------------------------------------------------------===//

#include "WorkerProtocol.h"

#include <cstddef>
#include <cstdint>

using namespace cuvil::workbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QByteArray line = QByteArray::fromRawData(
      reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
  WorkerMessage message;
  QString error;
  if (!decodeWorkerMessage(line, message, error))
    return 0;
  if (message.type == "ready")
    (void)workerProtocolMismatch(message.fields, "cuvil-worker");
  (void)message.compilation.inputSummary();
  for (const TensorInfo &t : message.compilation.outputs)
    (void)t.toString();
  (void)message.exception.summary();
  return 0;
}
