//===- CudaTarget.cpp - NVIDIA GPUs as a target backend -------------------===//
//
// The cuda target's phases: bufferization as on the CPU with every buffer
// in device memory, linalg to parallel loops, the loops tiled onto blocks
// and threads (innermost dimension on x) and outlined into kernels, all
// kernels in one GPU module, launches chained asynchronously on one stream;
// then the kernels lowered to NVVM (libdevice for math) and the host code to
// the LLVM dialect. Loading serializes the kernels to PTX, assembles a fat
// binary (SASS for sm_90 plus PTX) and builds the host library that
// launches them through Cuvil's CUDA runtime (CudaExecutable).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/CudaTarget.h"

#include "CudaBackend.h"

#include "cuvil/Dialect/Cuvil/IR/DTypes.h"
#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Runtime/CudaDriver.h"
#include "cuvil/Runtime/CudaExecutable.h"
#include "cuvil/Runtime/MemRefCall.h"
#include "cuvil/Runtime/SharedLibrary.h"
#include "cuvil/Target/CPU/CpuBackend.h"
#include "cuvil/Target/CUDA/Passes.h"
#include "cuvil/Target/TargetSupport.h"

#include "mlir/Target/LLVM/NVVM/Target.h"
#include "llvm/Support/MemoryBuffer.h"

#include <atomic>
#include <functional>
#include <mutex>

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::ArtifactKind;
using ::cuvil::IRStage;

namespace {

/// Bytes of one element of each input then output.
std::vector<size_t> elementBytes(const LoadRequest &request) {
  std::vector<size_t> bytes;
  for (const auto *list : {&request.inputs, &request.outputs})
    for (const ::cuvil::TensorSignature &value : *list) {
      const DType *dtype = lookupDType(value.dtype);
      bytes.push_back(dtype ? dtype->byteSize : 0);
    }
  return bytes;
}

class CudaTarget : public TargetBackend {
public:
  StringRef name() const override { return "cuda"; }
  StringRef description() const override {
    return "NVIDIA GPUs through NVVM: PTX and a fat binary (SASS for sm_90 "
           "plus PTX) launched by Cuvil's CUDA runtime";
  }
  int deviceCount() const override {
    std::string error;
    return static_cast<int>(::cuvil::cuda::availableDevices(error).size());
  }

  void registerDialects(DialectRegistry &registry) const override {
    cpu::initializeTargets(registry);
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  }
  void registerPasses() const override { registerCuvilCudaPasses(); }
  bool reportsKernels() const override { return true; }

  void buildPhases(const TargetOptions &options,
                   PipelineBuilder &p) const override;

  std::string cacheKeyMaterial(const TargetOptions &options) const override {
    return cuda::toolkitDescription() + "|" + cpu::hostDescription();
  }

  void prepareForLowering(ModuleOp module) const override {
    renameFunctions(module, "cuvil_");
  }

  std::string unavailableReason(int device) const override {
    std::string error;
    auto devices = ::cuvil::cuda::availableDevices(error);
    if (devices.empty())
      return error;
    if (device >= static_cast<int>(devices.size()))
      return "there is no CUDA device " + std::to_string(device) + " (" +
             std::to_string(devices.size()) + " found)";
    return "";
  }

  /// The host library is built now (PTX, ptxas, fatbinary: the toolkit is
  /// needed to compile); the driver is opened on the first call, so
  /// compiling works without a GPU.
  FailureOr<std::unique_ptr<::cuvil::Executable>>
  load(ModuleOp lowered, const LoadRequest &request,
       std::string &error) const override {
    std::unique_ptr<llvm::MemoryBuffer> bytes = buildInTemporaryFile(
        "cuvil-cuda", "so",
        [&](StringRef path, std::string &message) {
          return cuda::emitHostLibrary(lowered, request, path, message);
        },
        error);
    if (!bytes)
      return failure();
    return fromLibrary(bytes->getBuffer(), request);
  }

  std::string cacheExtension() const override { return ".so"; }
  LogicalResult storeInCache(ModuleOp lowered, const LoadRequest &request,
                             StringRef path,
                             std::string &error) const override {
    return cuda::emitHostLibrary(lowered, request, path, error);
  }
  /// The entry's bytes are read now: the driver may rename or trim the
  /// file before the first call loads them.
  FailureOr<std::unique_ptr<::cuvil::Executable>>
  loadFromCache(StringRef path, const LoadRequest &request,
                std::string &error) const override {
    std::unique_ptr<llvm::MemoryBuffer> bytes = readFile(path, error);
    if (!bytes)
      return failure();
    return fromLibrary(bytes->getBuffer(), request);
  }

  std::vector<IRStage> irStages() const override {
    return {IRStage::Lowered, IRStage::PTX, IRStage::LLVMIR};
  }
  LogicalResult printStage(ModuleOp lowered, IRStage stage,
                           const LoadRequest &request, std::string &out,
                           std::string &error) const override {
    if (stage == IRStage::PTX)
      return cuda::emitPTX(lowered, out, error);
    if (stage == IRStage::LLVMIR)
      return cuda::printHostLLVMIR(lowered, out, error);
    return TargetBackend::printStage(lowered, stage, request, out, error);
  }

  std::vector<ArtifactKind> artifacts() const override {
    return {ArtifactKind::PTX, ArtifactKind::Cubin, ArtifactKind::Fatbin,
            ArtifactKind::SharedLibrary, ArtifactKind::LLVMIR};
  }
  LogicalResult emit(ModuleOp lowered, ArtifactKind kind,
                     const LoadRequest &request, StringRef path,
                     std::string &error) const override;

private:
  /// Code that loads host library `code` on its first call.
  static FailureOr<std::unique_ptr<::cuvil::Executable>>
  fromLibrary(StringRef code, const LoadRequest &request) {
    return lazily(request, [request, code = code.str()](std::string &message) {
      return ::cuvil::LibraryExecutable::loadFromMemory(
          code, compiledSymbol(request), compiledSymbol(request),
          ::cuvil::codeRuntimeLibraries(), request.inputs, request.outputs,
          /*instrumented=*/false, message);
    });
  }

  using LoadHost =
      std::function<std::unique_ptr<::cuvil::Executable>(std::string &)>;
  static FailureOr<std::unique_ptr<::cuvil::Executable>>
  lazily(const LoadRequest &request, LoadHost loadHost) {
    return std::unique_ptr<::cuvil::Executable>(
        std::make_unique<LazyCudaExecutable>(request, std::move(loadHost)));
  }

  /// Loads the host library and opens the driver on the first call; every
  /// call reports the reason when that failed (RuntimeError in Python).
  class LazyCudaExecutable : public ::cuvil::Executable {
  public:
    LazyCudaExecutable(LoadRequest request, LoadHost loadHost)
        : request(std::move(request)), loadHost(std::move(loadHost)) {}

    void call(void *const *inputs, void *const *outputs,
              const ::cuvil::KernelHooks *hooks,
              const ::cuvil::Shapes *shapes) const override {
      const ::cuvil::cuda::CudaExecutable *exe = get();
      if (!exe)
        return ::cuvil::reportCallFailure(error);
      exe->call(inputs, outputs, hooks, shapes);
    }

    std::unique_ptr<::cuvil::PendingCall>
    enqueue(void *const *inputs, void *const *outputs,
            const ::cuvil::KernelHooks *hooks,
            const ::cuvil::Shapes *shapes) const override {
      const ::cuvil::cuda::CudaExecutable *exe = get();
      if (!exe)
        return Executable::enqueue(inputs, outputs, hooks, shapes);
      return exe->enqueue(inputs, outputs, hooks, shapes);
    }

    bool callOnDevice(void *const *inputs, void *const *outputs,
                      const ::cuvil::KernelHooks *hooks) const override {
      const ::cuvil::cuda::CudaExecutable *exe = get();
      if (!exe) {
        ::cuvil::reportCallFailure(error);
        return true;
      }
      return exe->callOnDevice(inputs, outputs, hooks);
    }

    std::vector<std::pair<std::string, uint64_t>> counters() const override {
      const ::cuvil::cuda::CudaExecutable *loaded = loadedOrNull();
      return loaded ? loaded->counters()
                    : std::vector<std::pair<std::string, uint64_t>>{};
    }

  private:
    /// The executable if the first call loaded it, else null.
    const ::cuvil::cuda::CudaExecutable *loadedOrNull() const {
      return loaded.load() ? exe.get() : nullptr;
    }

    const ::cuvil::cuda::CudaExecutable *get() const {
      std::call_once(once, [&] {
        std::string reason;
        std::unique_ptr<::cuvil::Executable> host;
        // The driver first: its message says why nothing can run here.
        if (!::cuvil::cuda::availableDevices(reason).empty())
          host = loadHost(reason);
        if (host)
          exe = ::cuvil::cuda::CudaExecutable::create(
              std::move(host), request.device, request.inputs, request.outputs,
              elementBytes(request), reason);
        if (!exe)
          error = "cannot run CUDA code here: " + reason;
        loaded = exe != nullptr;
      });
      return exe.get();
    }

    LoadRequest request;
    LoadHost loadHost;
    mutable std::once_flag once;
    mutable std::unique_ptr<::cuvil::cuda::CudaExecutable> exe;
    mutable std::string error;
    mutable std::atomic<bool> loaded{false};
  };
};

void CudaTarget::buildPhases(const TargetOptions &o, PipelineBuilder &p) const {
  using Need = PipelineBuilder::Need;
  // Names for the kernel table the profiler shows (from the linalg ops).
  p.add(Phase::Schedule, "cuvil-tag-kernels", "", "func.func", Need::Optional);
  p.addBufferization();
  p.add(Phase::Bufferize, "cuvil-plan-memory", "", "func.func", Need::Optional);
  p.add(Phase::Bufferize, "cuvil-cuda-device-buffers", "", "func.func");
  p.add(Phase::Bufferize, "cuvil-cuda-tile-matmul", "", "func.func");
  p.add(Phase::Bufferize, "cuvil-cuda-warp-reductions", "", "func.func");
  p.add(Phase::Bufferize, "convert-linalg-to-parallel-loops");
  p.add(Phase::Bufferize, "canonicalize");
  p.add(Phase::Bufferize, "cuvil-cuda-map-parallel-loops", "", "func.func");
  p.add(Phase::Bufferize, "convert-parallel-loops-to-gpu");
  p.add(Phase::Bufferize, "lower-affine");
  p.add(Phase::Bufferize, "canonicalize");
  p.add(Phase::Bufferize, "gpu-kernel-outlining");
  p.add(Phase::Bufferize, "cuvil-cuda-merge-kernel-modules");
  // Launches, allocations and copies chained on one stream; the host waits
  // once, at the end.
  p.add(Phase::Bufferize, "gpu-async-region", "", "func.func");

  std::string target = "chip=" + cuda::kChip.str() + " O=3";
  std::string libdevice = cuda::libdevicePath();
  if (!libdevice.empty())
    target += " l=" + libdevice;
  // Loops and views become branches and address arithmetic in host code
  // and kernels alike, before the kernels go to NVVM.
  for (StringRef pass :
       {"convert-scf-to-cf", "expand-strided-metadata", "lower-affine"})
    p.add(Phase::Lower, pass);
  p.add(Phase::Lower, "nvvm-attach-target", target);
  // Tensor-core fragments (ldmatrix) first: the memrefs they read are
  // still memrefs.
  p.add(Phase::Lower, "convert-nvgpu-to-nvvm", "", "gpu.module");
  p.add(Phase::Lower, "convert-gpu-to-nvvm", "", "gpu.module");
  p.add(Phase::Lower, "reconcile-unrealized-casts", "", "gpu.module");
  for (StringRef pass :
       {"gpu-to-llvm", "finalize-memref-to-llvm", "convert-arith-to-llvm",
        "convert-index-to-llvm", "convert-func-to-llvm", "convert-cf-to-llvm",
        "reconcile-unrealized-casts", "cuvil-cuda-device-constants"})
    p.add(Phase::Lower, pass);
}

LogicalResult CudaTarget::emit(ModuleOp lowered, ArtifactKind kind,
                               const LoadRequest &request, StringRef path,
                               std::string &error) const {
  switch (kind) {
  case ArtifactKind::PTX:
    return emitStage(lowered, IRStage::PTX, request, path, error);
  case ArtifactKind::LLVMIR:
    return emitStage(lowered, IRStage::LLVMIR, request, path, error);
  case ArtifactKind::Cubin:
  case ArtifactKind::Fatbin: {
    std::string ptx, bytes;
    if (failed(cuda::emitPTX(lowered, ptx, error)) ||
        failed(cuda::assemble(ptx, kind == ArtifactKind::Fatbin, bytes, error)))
      return failure();
    return writeFile(path, bytes, error);
  }
  case ArtifactKind::SharedLibrary:
    return cuda::emitHostLibrary(lowered, request, path, error);
  default:
    return TargetBackend::emit(lowered, kind, request, path, error);
  }
}

} // namespace

std::unique_ptr<TargetBackend> cuda::createCudaTarget() {
  return std::make_unique<CudaTarget>();
}
