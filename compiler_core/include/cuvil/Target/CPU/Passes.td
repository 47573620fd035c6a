//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
#ifndef CUVIL_TARGET_CPU_PASSES_TD
#define CUVIL_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def CpuSchedule : Pass<"cuvil-cpu-schedule", "ModuleOp"> {
  let summary = "Tile, vectorize and register-block GEMMs for the host CPU";
  let description = [{
    Builds and applies a transform-dialect schedule for every
    `linalg.matmul` initialized by a `linalg.fill` whose sizes admit the
    register tile: a cache tile on tensors distributed with `scf.forall`, a
    K block, and an 8 x (2 vector registers) accumulator kept in registers
    across K (outer-product FMAs; 4 x 2 where vectors are narrower than
    AVX-512's 16 lanes, whose ISAs have 16 vector registers, not 32: 8 rows
    spill there), four K steps per iteration of its loop where K is static
    and whole blocks of whole steps, with 16-lane vectors (AVX-512) or
    AVX2's 4 x 2 tiles (a quarter of the loop's own instructions per FMA;
    wasm's 4-lane tiles keep one step: their operands spill in V8). Tile
    sizes are chosen to divide each static GEMM where one does, so every
    tile is static. A dynamic M or N,
    or a static one no tile divides (odd and prime sizes), keeps the full
    tiles and peels the register loops: full tiles get the vector body, the
    partial last one is cut into 1-row / 1-column tiles. A GEMM smaller than
    one register tile both ways is left for scalar lowering. Elementwise kernels and
    row reductions are vectorized along their innermost dimension, a
    dynamic one with a peeled 1-wide tail. An implicit-GEMM convolution
    (`cuvil.implicit_conv`, see `cuvil-cpu-conv-to-gemm`) is cut into
    thread tasks of filters by columns, its channels into blocks of 32, and
    register tiles of 8 filters by 3 vectors of columns (4 filters by 3
    with AVX2, 4 by 2 for wasm; 2 vectors for float64), each step's tile a
    contraction with K = 1 of the packed weights' row by the image's
    shifted row, its accumulators carried as
    `vector<8x3x16xf32>` (whole registers: LLVM scalarizes a loop-carried
    `<48 x float>`), the loops over a kernel of up to 9 offsets unrolled.

    Before:
    ```mlir
    %r = linalg.matmul ins(%a, %b : tensor<1024x512xf32>, tensor<512x256xf32>) outs(%f : tensor<1024x256xf32>) -> tensor<1024x256xf32>
    ```
    After: `scf.forall` over 64-row tiles, `scf.for` over K blocks and
    register tiles, and `vector.fma` on `vector<32xf32>` accumulators.
  }];
  let options = [
    Option<"registerRows", "register-rows", "int", /*default=*/"0",
           "Rows of a GEMM's register tile (its columns are two vectors; "
           "0: 8 for vectors of 16 lanes, else 4)">,
    Option<"vectorLanes", "vector-lanes", "int", /*default=*/"0",
           "f32 lanes of the widest vector register (0: detect the host)">,
    Option<"printSchedule", "print-schedule", "bool", /*default=*/"false",
           "Print the generated transform schedule to stderr">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Run the elementwise op consuming a GEMM inside the GEMM's tiles">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "linalg::LinalgDialect", "scf::SCFDialect",
    "tensor::TensorDialect", "transform::TransformDialect",
    "vector::VectorDialect"
  ];
}

def CpuConvToGemm : Pass<"cuvil-cpu-conv-to-gemm", "func::FuncOp"> {
  let summary = "Run NCHW convolutions as an image-to-column copy and a GEMM";
  let description = [{
    Rewrites each `linalg.conv_2d_nchw_fchw` initialized by a `linalg.fill`
    whose channels, kernel and output size are static (the batch may be
    dynamic) into a `linalg.generic` gathering the input windows into
    columns (`[N, C, KH, KW, OH, OW]`, contiguous along `OW` for unit
    strides) and a GEMM of the weights `[F, C*KH*KW]` with them: a
    `linalg.matmul` for one image, a `linalg.batch_matmul` (weights
    broadcast per image) otherwise. A 1x1 kernel with unit strides uses the
    input as its columns. `cuvil-cpu-schedule` then tiles and vectorizes
    the GEMM like any other. Run it after `cuvil-tag-kernels`, so the
    profile still names the kernel after the convolution.

    Before:
    ```mlir
    %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x16x34x34xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
    ```
    After: `linalg.generic` (tensor.extract of the windows) into
    `tensor<1x16x3x3x32x32xf32>`, collapsed to `tensor<144x1024xf32>`, and
    `linalg.matmul` of `tensor<32x144xf32>` by it, expanded back to
    `tensor<1x32x32x32xf32>`.

    Where the images' pixels are no whole register tiles (28 x 28, 14 x 14,
    7 x 7 with 16 lanes) but the filters are, and the weights are a
    constant, the pixels are the GEMM's rows instead: the image made NHWC
    (one transpose, its padding redone in NHWC), the windows gathered into
    `[N*OH*OW, KH*KW*C]` (each window row a contiguous read of the
    channels), times the weights reordered at compile time to
    `[KH*KW*C, F]` (which `cuvil-cpu-pack-gemm-panels` then packs), the
    `[N*OH*OW, F]` result transposed back to NCHW.

    A unit-stride convolution of a static batch with at least 16 channels
    and 32 filters (in whole register rows of 8) and a kernel larger than
    1x1 copies no windows at all (an implicit GEMM): numbering the outputs
    over whole rows of the padded image (`p = oh * W' + ow`), output `p`
    reads element `p + kh * d0 * W' + kw * d1` of each channel's flattened
    plane, so the weights multiply the image's planes shifted by a constant
    per `(c, kh, kw)`, read in place. It becomes a `linalg.generic` tagged
    `cuvil.implicit_conv` over `(n, fo, fi, pb, j, l, c, kh, kw)` (the
    column `p = pb * 48 + j * 16 + l`) of the planes `[N, C, plane]` and the
    weights packed by 8 filters `[F/8, C, KH, KW, 8]` (at compile time when
    constant, else a transpose; by 4 where the vector registers are 16, see
    `register-rows`), into `[N, F/8, 8, cols/48, 3, 16]`
    (register tiles of 3 vectors of 16 lanes, or of AVX2's 8; 2 vectors
    where 3 would waste too much, and for wasm or float64); the columns
    past each row's edge are dropped by slices. The columns are rounded up
    to whole register tiles, at most a sixth more than the image's pixels,
    and the padding gets the rows their reads need.
  }];
  let options = [
    Option<"vectorLanes", "vector-lanes", "int", /*default=*/"0",
           "f32 lanes of the widest vector register (0: detect the host)">,
    Option<"registerRows", "register-rows", "int", /*default=*/"0",
           "Filters of an implicit convolution's register tile (0: as "
           "cuvil-cpu-schedule's register-rows)">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "linalg::LinalgDialect", "tensor::TensorDialect"
  ];
}

def CpuUnaliasGemmRows : Pass<"cuvil-cpu-unalias-gemm-rows", "func::FuncOp"> {
  let summary = "Copy GEMM operands whose rows are 4 KiB apart into padded rows";
  let description = [{
    A matrix whose rows are a multiple of 4 KiB apart (1024 or 2048 float32
    columns, common model widths) maps every row's element at one column to
    the same L1 cache set: the rows of an operand a register tile walks down
    evict each other, and a 2048 x 2048 GEMM runs at two thirds of the speed
    of the same GEMM with rows a cache line longer. This pass copies the
    right operand (the one a register tile walks down, a row per K step) of
    a static `linalg.matmul` into a buffer whose rows are one cache line
    longer (an identity `linalg.generic` into a slice of a
    `bufferization.alloc_tensor`, which the schedule vectorizes) when the GEMM
    does enough work to repay the copy: at least `min-reuse` result rows, and
    an operand of at least `min-bytes`. The GEMM then reads the copy through
    a strided view.

    Before:
    ```mlir
    %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x2048xf32>) outs(%f : tensor<256x2048xf32>) -> tensor<256x2048xf32>
    ```
    After:
    ```mlir
    %e = bufferization.alloc_tensor() : tensor<512x2064xf32>
    %s = tensor.extract_slice %e[0, 0] [512, 2048] [1, 1] : tensor<512x2064xf32> to tensor<512x2048xf32>
    %c = linalg.generic {...} ins(%b : tensor<512x2048xf32>) outs(%s : tensor<512x2048xf32>) {yield its input} -> tensor<512x2048xf32>
    %r = linalg.matmul ins(%a, %c : tensor<256x512xf32>, tensor<512x2048xf32>) outs(%f : tensor<256x2048xf32>) -> tensor<256x2048xf32>
    ```
  }];
  let options = [
    Option<"minReuse", "min-reuse", "int64_t", /*default=*/"256",
           "Result rows that must reuse the copy">,
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"262144",
           "Smallest operand copied, in bytes">
  ];
  let dependentDialects = [
    "bufferization::BufferizationDialect", "linalg::LinalgDialect",
    "tensor::TensorDialect"
  ];
}

def CpuSplitAccumulators : Pass<"cuvil-cpu-split-accumulators", "func::FuncOp"> {
  let summary = "Give a narrow register tile's K loop several partial sums";
  let description = [{
    A register tile with few accumulators (a remainder row of 2 vectors,
    where the full tile has 8) adds each of its K steps to the previous
    one's sum: every FMA waits for the one before (4 cycles on a Zen 3),
    so the tile runs at a quarter of the rate of the full tile, whose 8
    accumulators keep both FMA pipes busy. For an `scf.for` whose vector
    iter_arg (one row, or rows taken apart by `vector.extract`) goes through
    a chain of two or more `vector.fma` per iteration, each adding to the
    last, this pass spreads the chain's steps over S partial sums, as many
    as the chain has steps and `registers` vector registers hold, the extra
    ones starting at zero; after the loop they are added up. The sums are
    reassociated, as in any blocked GEMM. Tiles that already fill
    `registers` are left alone.

    Before (one row, two vectors' worth, four K steps):
    ```mlir
    %r = scf.for %k = %c0 to %c128 step %c4 iter_args(%acc = %init) -> (vector<16xf32>) {
      %0 = vector.fma %a0, %b0, %acc : vector<16xf32>
      %1 = vector.fma %a1, %b1, %0 : vector<16xf32>
      %2 = vector.fma %a2, %b2, %1 : vector<16xf32>
      %3 = vector.fma %a3, %b3, %2 : vector<16xf32>
      scf.yield %3 : vector<16xf32>
    }
    ```
    After (`registers` = 8, 256-bit vectors):
    ```mlir
    %r:4 = scf.for ... iter_args(%p0 = %init, %p1 = %zero, %p2 = %zero, %p3 = %zero) -> (...) {
      %0 = vector.fma %a0, %b0, %p0 : vector<16xf32>
      %1 = vector.fma %a1, %b1, %p1 : vector<16xf32>
      %2 = vector.fma %a2, %b2, %p2 : vector<16xf32>
      %3 = vector.fma %a3, %b3, %p3 : vector<16xf32>
      scf.yield %0, %1, %2, %3 : ...
    }
    %s = (%r#0 + %r#1) + (%r#2 + %r#3)
    ```
  }];
  let options = [
    Option<"registers", "registers", "int64_t", /*default=*/"8",
           "Vector registers a loop's partial sums may fill">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Bits in one vector register">
  ];
  let dependentDialects = ["arith::ArithDialect", "vector::VectorDialect"];
}

def CpuPackGemmPanels : Pass<"cuvil-cpu-pack-gemm-panels", "ModuleOp"> {
  let summary = "Copy each K block of a GEMM's right operand into packed panels";
  let description = [{
    After the schedule and bufferization, a GEMM's K-block loop reads its
    right operand's block (`memref.subview %b[%k0, 0] [kc, n]`) one row of
    a register tile's width at a time (`subview [%k, %j] [1, w]`, `%j` a
    multiple of the width `nr`; `[s, w]`, up to 8 rows, where a tile takes
    `s` K steps per iteration): a register tile walks `kc` rows that are
    a whole row of the operand apart, rows that may be unaligned (odd
    widths), alias in L1 (widths of 1024 floats) or each touch a page of
    their own. This pass copies the block, once per K step of each thread's
    tile, into panels `nr` wide laid end to end (`[n / nr][kc][nr]`, on the
    stack, 64-byte aligned: what OpenBLAS, XLA and IREE's data tiling call
    packing), and points the register tiles' reads at them: `kc` consecutive
    aligned rows of `nr` floats. The buffer, bytes 64-byte aligned viewed as
    the panels, is made at the start of the enclosing `scf.parallel` body
    (once per thread after convert-scf-to-openmp) or of the function, one per
    such scope, shared by its GEMMs (they run one after the other) and as
    large as the largest. Only where a register tile reads the rows (a loop
    carrying vector sums walks them), at least `min-rows` rows of the result
    read each panel (the copy is repaid: a GEMV's is not) and the panels fit
    `max-bytes`. A batched GEMM's block is one batch's
    (`subview %b[%i, %k0, 0] [1, kc, n]`, its rows `[0, %k, %j] [1, s, w]`):
    it is copied the same way (attention's 8 x 256x64 . 64x256, whose
    operand rows 1 KiB apart share 4 of L1's 64 sets, ran 0.83x the time on
    a Zen 3); the packing of whole operands and constants below is for 2-D
    ones only.

    When the loops around the K blocks take each block 16 times or more (a
    GEMM's row tiles, split between threads, all read every block of B), the
    copies would repeat: instead the whole operand (static, contiguous, 2-D,
    at most 256 MiB of panels, not written inside those loops) is packed once
    before them into panels `[ceil(n / nr)][k][nr]` on the heap (the copy a
    parallel loop over the panels when the loops are one), freed after them,
    and each block becomes a view of the panels.

    A right operand that is a constant (`memref.get_global` of a constant
    global, through subviews: a model's weights) is packed once, here, at
    compile time: a global of its panels `[ceil(n / nr)][k][nr]` (zeros past
    the last column) replaces the copy, and each block becomes a view of it,
    whatever the number of result rows and the size (nothing is copied at run
    time). Blocks of one constant read with one width share its panels; the
    original global goes once nothing reads it.

    Before:
    ```mlir
    scf.for %k0 = %c0 to %c512 step %c128 {
      %bk = memref.subview %b[%k0, 0] [128, 256] [1, 1]
      ... scf.for %m ... scf.for %j step 32 ... scf.for %k iter_args(...)
            %row = memref.subview %bk[%k, %j] [1, 32] [1, 1]
            vector.transfer_read %row[...]
    ```
    After:
    ```mlir
    scf.parallel (...) {
      %bytes = memref.alloca() {alignment = 64 : i64} : memref<131072xi8>
      ...
      scf.for %k0 = %c0 to %c512 step %c128 {
        %bk = memref.subview %b[%k0, 0] [128, 256] [1, 1]
        %p = memref.view %bytes[%c0][] : memref<131072xi8> to memref<8x128x32xf32>
        ... copy %bk into %p, panel by panel, row by row ...
        ... %row = memref.subview %p[%j floordiv 32, %k, 0] [1, 1, 32] [1, 1, 1]
    ```
  }];
  let options = [
    Option<"minRows", "min-rows", "int64_t", /*default=*/"32",
           "Result rows that must read a panel for it to be packed">,
    Option<"maxBytes", "max-bytes", "int64_t",
           /*default=*/"::mlir::cuvil::kMaxStackPanelBytes",
           "Largest packed block, in bytes (it lives on the stack)">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "memref::MemRefDialect", "scf::SCFDialect",
    "vector::VectorDialect"
  ];
}

def SerialSingleTask : Pass<"cuvil-serial-single-task", "func::FuncOp"> {
  let summary = "Run an OpenMP region whose loop has one iteration on the caller";
  let description = [{
    A parallel loop over a run-time extent (a dynamic batch or sequence)
    often has a single thread task for small sizes; waking the thread team
    for it costs more than the kernel. This pass gives each `omp.parallel`
    whose loop bounds are not all constants an `if` clause that is true only
    when the loop has more than one iteration, so a single task runs on the
    calling thread (as a static single-task loop does, which has no parallel
    region at all). It also marks every `omp.wsloop` `nowait`: the loop is
    the whole region, whose end joins the threads, and Cuvil's thread pool
    (Runtime/ThreadPool.h) runs shares no awake thread has claimed on the
    threads that are, which a barrier inside the region would deadlock.

    Before:
    ```mlir
    omp.parallel {
      omp.wsloop { omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) { ... } }
    }
    ```
    After:
    ```mlir
    %several = arith.cmpi sgt, %span, %c1 : index
    omp.parallel if(%several) { ... }
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "omp::OpenMPDialect"];
}

def SerialForalls : Pass<"cuvil-serial-foralls", "func::FuncOp"> {
  let summary = "Run the thread-level loops of small kernels on the caller";
  let description = [{
    `cuvil-cpu-schedule` distributes each GEMM's cache tiles over threads
    with `scf.forall`, and marks those of GEMMs with under 2^20
    multiply-adds `cuvil.serial`: waking and joining the OpenMP team costs
    more than the second core saves (small convolutions and projections of
    CNNs and small transformers). After bufferization, this pass turns each
    marked `scf.forall` into a nest of `scf.for` loops, so it never becomes
    an OpenMP region.

    Before:
    ```mlir
    scf.forall (%i, %j) in (2, 2) { ... } {cuvil.serial}
    ```
    After: `scf.for %i = 0 to 2 { scf.for %j = 0 to 2 { ... } }`.
  }];
  let dependentDialects = ["scf::SCFDialect"];
}

def CpuStackBuffers : Pass<"cuvil-cpu-stack-buffers", "func::FuncOp"> {
  let summary = "Give the buffers of a loop's blocks one stack buffer per thread";
  let description = [{
    A fused kernel computes each block of its rows into buffers of its own
    (attention's scores and probabilities, a softmax's row maxima): after
    bufferization each is a `memref.alloc` and a `memref.dealloc` in the
    loop body, a `malloc` and a `free` per block and buffer. This pass
    replaces each static allocation inside a loop that is freed in its own
    block and does not escape (not returned, yielded or passed to a call)
    with a `memref.alloca` at the start of the innermost enclosing
    `scf.parallel` body, or of the function when no parallel loop encloses
    it: one buffer per thread, reused by its blocks, in L1 while they run.
    Up to `max-bytes` per scope; larger buffers stay on the heap. Without
    `threads` (no OpenMP lowering follows: parallel loops become plain
    loops, whose stack allocations would pile up per iteration), every
    buffer goes to the function's entry.

    Before:
    ```mlir
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %b = memref.alloc() : memref<32x64xf32>
      ...
      memref.dealloc %b : memref<32x64xf32>
    }
    ```
    After:
    ```mlir
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %b = memref.alloca() : memref<32x64xf32>
      ...
    }
    ```
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"131072",
           "Stack bytes per scope at most">,
    Option<"threads", "threads", "bool", /*default=*/"true",
           "Parallel loops become threads' regions (convert-scf-to-openmp)">
  ];
  let dependentDialects = ["memref::MemRefDialect"];
}

#endif // CUVIL_TARGET_CPU_PASSES_TD
