//===- Passes.td - CUDA code generation passes -------------*- tablegen -*-===//
#ifndef CUVIL_TARGET_CUDA_PASSES_TD
#define CUVIL_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def CudaDeviceBuffers : Pass<"cuvil-cuda-device-buffers", "func::FuncOp"> {
  let summary = "Put a host function's buffers in GPU memory";
  let description = [{
    After bufferization every buffer a host function allocates lives in the
    GPU's memory: `memref.alloc` becomes `gpu.alloc` and `memref.dealloc`
    `gpu.dealloc` (the runtime serves both from the device's memory pool,
    ordered on the call's stream). A `memref.copy` becomes `linalg.copy`, so
    that it turns into a kernel with the other loops instead of a call to
    the host's copy routine on device memory.

    Before:
    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    memref.copy %x, %a : memref<16xf32> to memref<16xf32>
    ```
    After:
    ```mlir
    %a = gpu.alloc () : memref<16xf32>
    linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
    ```
  }];
  let dependentDialects = ["gpu::GPUDialect", "linalg::LinalgDialect"];
}

def CudaTileMatmul : Pass<"cuvil-cuda-tile-matmul", "func::FuncOp"> {
  let summary = "GEMMs as shared-memory tiled kernels with register blocking";
  let description = [{
    A float32 contraction on buffers at a host function's top level
    (`linalg.matmul`, `linalg.batch_matmul`, a matmul-like `linalg.generic`
    with either operand transposed) becomes one `gpu.launch`: each block of
    16 x 16 threads computes a 64 x 64 tile of the result, staging 16-deep
    slices of both operands in workgroup (shared) memory, each thread
    accumulating a 4 x 4 tile in registers with `math.fma`; operand loads
    are coalesced along the operand's contiguous dimension, edges guarded
    (any size), batches on the grid's z. The result is accumulated into the
    output, as linalg's semantics say. Other contractions stay loops.

    A contraction of bf16 or f16 operands summed in float32 (the matmuls of
    a model under `precision="bf16"`/`"fp16"`) runs on tensor cores
    instead: 4 warps a block, a 64 x 64 tile of the result, each warp a
    32 x 32 quarter as 2 x 4 `mma.sync.m16n8k16` tiles with float32
    accumulators; 32-deep slices in shared memory with rows padded by 16
    bytes, fragments loaded by `nvgpu.ldmatrix` (`transpose` for the right
    operand), the next slice loaded into registers while the current one
    is multiplied.

    With `fuse-epilogues` (the default) the kernel also absorbs the
    `linalg.fill` that gives the output its initial value (the sums start
    from that value instead of a load) and the elementwise `linalg.generic`
    that reads the output right after (bias, activation): its body runs on
    each result in registers and writes its own output; the GEMM's output is
    stored only where something else still reads it.

    Before:
    ```mlir
    linalg.matmul ins(%a, %b : memref<512x256xf32>, memref<256x128xf32>)
                  outs(%c : memref<512x128xf32>)
    ```
    After:
    ```mlir
    gpu.launch blocks(...) in (%gx = %c2, %gy = %c8, %gz = %c1)
               threads(...) in (%tx = %c16, %ty = %c16, %tz = %c1)
               workgroup(%as : memref<64x17xf32, #gpu.address_space<workgroup>>,
                         %bs : memref<16x65xf32, #gpu.address_space<workgroup>>) {
      scf.for %k0 = %c0 to %c256 step %c16 iter_args(...) {
        ... stage both slices, gpu.barrier, 16 x (4 x 4 math.fma), gpu.barrier
      }
      ... C += the 4 x 4 sums
    }
    ```
  }];
  let options = [
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Compute the fill before and the elementwise op after the GEMM in "
           "its kernel">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "math::MathDialect", "arith::ArithDialect",
                           "memref::MemRefDialect", "nvgpu::NVGPUDialect",
                           "vector::VectorDialect", "LLVM::LLVMDialect"];
}

def CudaWarpReductions : Pass<"cuvil-cuda-warp-reductions",
                              "func::FuncOp"> {
  let summary = "Row reductions with one warp per row and shuffles";
  let description = [{
    A `linalg.generic` on buffers at a host function's top level whose one
    reduction loop is its innermost (a softmax's row max and sum, a layer
    norm's mean and variance), combining with `addf`, `mulf`, `maximumf`,
    `maxnumf`, `minimumf` or `minnumf`, becomes a `gpu.launch` in which
    each warp owns a row: the 32 lanes stride over it, each folding the
    body's values into a partial, five `gpu.shuffle xor` steps combine the
    partials and lane 0 folds the result into the output (which holds the
    initial value, as linalg's semantics say). Eight warps a block. Rows
    shorter than 64 stay one thread's loop.

    Before:
    ```mlir
    linalg.generic {iterator_types = ["parallel", "reduction"], ...}
        ins(%x : memref<256x512xf32>) outs(%max : memref<256xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %acc, %in : f32
      linalg.yield %m : f32
    }
    ```
    After:
    ```mlir
    gpu.launch blocks(...) in (%gx = %c32, ...) threads(...) in (%tx = %c32, %ty = %c8, ...) {
      %p = scf.for %k = %lane to %c512 step %c32 iter_args(%a = %neg_inf) -> f32 { ... }
      %s16, %v16 = gpu.shuffle xor %p, %c16, %c32 : f32
      ... 8, 4, 2, 1 ...
      scf.if %lane_is_0 { memref.store (maximumf %old, %r), %max[%row] }
    }
    ```
  }];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "arith::ArithDialect", "memref::MemRefDialect"];
}

def CudaMapParallelLoops : Pass<"cuvil-cuda-map-parallel-loops",
                                "func::FuncOp"> {
  let summary = "Tile a host function's loops into GPU blocks and threads";
  let description = [{
    Every outermost `scf.parallel` of a host function is tiled into a loop
    over blocks and a loop over the threads of a block and marked with the
    hardware dimensions they run on, for `convert-parallel-loops-to-gpu`:
    the innermost (contiguous) dimension on `x`, so that neighbouring
    threads touch neighbouring elements and their accesses coalesce, the
    next on `y`, the next on `z`; dimensions before the last three are first
    collapsed into one. A block has `threads-per-block` threads: a
    one-dimensional loop all on `x`, a deeper one 32 on `x` (one warp) and
    the rest on `y`, fewer where the loop is smaller. A loop nest that is
    not parallel (a full reduction to a scalar, a sequential loop) and any
    other operation that reads or writes a buffer becomes a kernel of one
    thread, so that nothing on the host touches device memory.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) {
      ...
    }
    ```
    After (bounds simplified):
    ```mlir
    scf.parallel (%bi, %bj) = (%c0, %c0) to (%c64, %c256) step (%c8, %c32) {
      scf.parallel (%ti, %tj) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1) {
        ...
      } {mapping = [#gpu.loop_dim_map<processor = thread_y, ...>,
                    #gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_y, ...>,
                  #gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "unsigned",
           /*default=*/"256", "Threads of one block (a multiple of 32)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "affine::AffineDialect"];
}

def CudaMergeKernelModules : Pass<"cuvil-cuda-merge-kernel-modules",
                                  "ModuleOp"> {
  let summary = "Gather every outlined kernel into one GPU module";
  let description = [{
    `gpu-kernel-outlining` puts each kernel in a `gpu.module` of its own.
    This pass moves them all into one module, `cuvil_kernels`, each kernel
    renamed after the module it came from (unique names), and points every
    `gpu.launch_func` at it: one PTX file, one `ptxas` run and one module
    load per compiled function instead of one per kernel.
  }];
  let dependentDialects = ["gpu::GPUDialect"];
}

def CudaDeviceConstants : Pass<"cuvil-cuda-device-constants", "ModuleOp"> {
  let summary = "Give kernels the device copy of every constant buffer";
  let description = [{
    Runs on the host code once it is in the LLVM dialect. A constant buffer
    (a `memref.global` the host function takes the address of: weights,
    lookup tables) lives in the host library; kernels need it in device
    memory. Every `llvm.mlir.addressof` of a constant global in a host
    function becomes a call of `cuvilCudaConstant(address, bytes)`, which
    the runtime answers with a device copy it makes on the first call and
    keeps for as long as the code is loaded.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // CUVIL_TARGET_CUDA_PASSES_TD
