//===- KernelLaunches.cpp - The launch configuration of each GPU kernel ---===//
//
// What a kernel table shows for each launch of a snapshot: grid and block
// extents (constants folded through arith or llvm constants, whichever the
// step has), shared memory per block (the kernel's workgroup buffers, or
// the address space 3 globals they become once lowered to LLVM; sizes from
// the data layout) and the fused ops cuvil-tag-kernels named for the
// launch's location. Read off the parsed IR, so every step from
// convert-parallel-loops-to-gpu (inline gpu.launch) to gpu-to-llvm has one.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <climits>

using namespace mlir;

namespace cuvil::graph {
namespace {

/// NVVM's shared memory address space.
constexpr unsigned kSharedAddressSpace = 3;

/// `value` as an extent: its constant value, or -1 when it has none (or one
/// no launch could have).
int constantExtent(Value value) {
  if (!value)
    return 0;
  std::optional<int64_t> constant = getConstantIntValue(value);
  if (!constant || *constant < 0 || *constant > INT_MAX)
    return -1;
  return static_cast<int>(*constant);
}

/// Adds `bytes` to `total`; -1 (unknown) stays unknown, overflow too.
void addBytes(int &total, int64_t bytes) {
  if (total < 0 || bytes < 0 || total + bytes > INT_MAX)
    total = -1;
  else
    total += static_cast<int>(bytes);
}

/// Bytes of shared memory a kernel's workgroup buffers take.
int workgroupBytes(ArrayRef<BlockArgument> buffers, Operation *scope) {
  DataLayout layout = DataLayout::closest(scope);
  int total = 0;
  for (BlockArgument buffer : buffers) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || !type.hasStaticShape())
      return -1;
    addBytes(total, type.getNumElements() *
                        static_cast<int64_t>(
                            layout.getTypeSize(type.getElementType())));
  }
  return total;
}

/// Bytes of the shared memory globals an LLVM kernel takes the address of.
int sharedGlobalBytes(LLVM::LLVMFuncOp kernel) {
  DataLayout layout = DataLayout::closest(kernel);
  SymbolTableCollection symbols;
  llvm::SmallPtrSet<Operation *, 4> counted;
  int total = 0;
  kernel.walk([&](LLVM::AddressOfOp address) {
    LLVM::GlobalOp global = address.getGlobal(symbols);
    if (!global || global.getAddrSpace() != kSharedAddressSpace ||
        !counted.insert(global).second)
      return;
    addBytes(total,
             static_cast<int64_t>(layout.getTypeSize(global.getGlobalType())));
  });
  return total;
}

/// Static shared memory of the kernel `launch` runs: -1 when its body is not
/// in the IR (a gpu.binary already holds it).
int kernelSharedBytes(gpu::LaunchFuncOp launch) {
  Operation *kernel =
      SymbolTable::lookupNearestSymbolFrom(launch, launch.getKernel());
  if (auto func = dyn_cast_or_null<gpu::GPUFuncOp>(kernel))
    return workgroupBytes(func.getWorkgroupAttributions(), func);
  if (auto func = dyn_cast_or_null<LLVM::LLVMFuncOp>(kernel))
    return sharedGlobalBytes(func);
  return -1;
}

/// The fused ops cuvil-tag-kernels named for `loc` in the function holding
/// `op` (the nearest ancestor with a `cuvil.kernel_names`).
std::string taggedOps(Operation *op, Location loc) {
  StringRef attrName =
      mlir::cuvil::CuvilDialect::KernelNamesAttrHelper::getNameStr();
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->hasAttr(attrName)) {
      StringAttr name = mlir::cuvil::taggedKernelNames(p).lookup(loc);
      return name ? name.str() : "";
    }
  return "";
}

template <typename LaunchOp>
KernelLaunch describeLaunch(LaunchOp launch, int irLine) {
  KernelLaunch result;
  result.irLine = irLine;
  result.ops = taggedOps(launch, launch.getLoc());
  std::string locName;
  describeLocation(launch.getLoc(), result.loc, locName);
  Value grid[3] = {launch.getGridSizeX(), launch.getGridSizeY(),
                   launch.getGridSizeZ()};
  Value block[3] = {launch.getBlockSizeX(), launch.getBlockSizeY(),
                    launch.getBlockSizeZ()};
  for (int i = 0; i < 3; ++i) {
    result.grid[i] = constantExtent(grid[i]);
    result.block[i] = constantExtent(block[i]);
  }
  result.dynamicSharedBytes =
      constantExtent(launch.getDynamicSharedMemorySize());
  return result;
}

} // namespace

void collectKernelLaunches(Block &top,
                           llvm::function_ref<int(Operation *)> lineOf,
                           std::vector<KernelLaunch> &launches) {
  for (Operation &root : top)
    root.walk([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        KernelLaunch result = describeLaunch(launch, lineOf(op));
        result.staticSharedBytes =
            workgroupBytes(launch.getWorkgroupAttributions(), launch);
        launches.push_back(std::move(result));
      } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
        KernelLaunch result = describeLaunch(launch, lineOf(op));
        result.kernel = (launch.getKernelModuleName().strref() +
                         "::" + launch.getKernelName().strref())
                            .str();
        result.staticSharedBytes = kernelSharedBytes(launch);
        launches.push_back(std::move(result));
      }
    });
}

} // namespace cuvil::graph
