//===- Passes.td - Target-neutral code generation passes ---*- tablegen -*-===//
//
// Passes every backend can run on linalg and bufferized IR: fusion, kernel
// naming and instrumentation, memory planning, results written in place and
// polynomial math. Backend-specific passes live in their Target/ folder.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_COMMON_PASSES_TD
#define CUVIL_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwise : Pass<"cuvil-fuse-elementwise"> {
  let summary = "Fuse chains of elementwise linalg ops into one kernel";
  let description = [{
    Merges an all-parallel `linalg.generic` into its consumer when the
    consumer is its only user, so a chain of elementwise and broadcast ops
    (and an elementwise producer of a reduction) becomes one loop nest with
    no intermediate buffer. Unlike `linalg-fuse-elementwise-ops` it never
    propagates reshapes through contractions, so GEMMs stay named ops for
    the GEMM schedule.

    Before:
    ```mlir
    %1 = linalg.generic {...} ins(%0, %bias ...) { arith.addf }
    %2 = linalg.generic {...} ins(%1 ...) { math.erf ... }
    ```
    After:
    ```mlir
    %2 = linalg.generic {...} ins(%0, %bias ...) { arith.addf; math.erf ... }
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def TagKernels : Pass<"cuvil-tag-kernels", "func::FuncOp"> {
  let summary = "Record what each source location's kernel computes";
  let description = [{
    Before scheduling, while ops are still named linalg ops, records a name
    for every linalg op's location in the function attribute
    `cuvil.kernel_names = [[loc, name], ...]` (e.g. `linalg.matmul`,
    `linalg.generic(addf,erf,mulf)`; ops sharing a location are joined
    with " + "). Tiling and bufferization keep locations, so
    `cuvil-instrument-kernels` can name the loops they become. The IR is
    otherwise unchanged.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def ApproximateMath : Pass<"cuvil-approximate-math", "func::FuncOp"> {
  let summary = "Polynomial approximations of f32 transcendental functions";
  let description = [{
    Replaces f32 `math.exp`, `math.tanh`, `math.erf`, `math.log` (and the
    other functions MLIR has approximations for) by range reduction and
    polynomials built from arithmetic ops, on scalars and vectors alike.
    In vectorized kernels this turns a libm call per lane into a few vector
    FMAs. The approximations are accurate to a few ulp; turn the pass off
    for libm's results.

    Before:
    ```mlir
    %e = math.exp %x : vector<16xf32>
    ```
    After: `arith.mulf`/`math.fma` polynomial and `arith.bitcast` exponent
    reconstruction on `vector<16xf32>`, no call.
  }];
  let dependentDialects = [
    "arith::ArithDialect", "math::MathDialect", "vector::VectorDialect"
  ];
}

def MaterializeResults : Pass<"cuvil-materialize-results", "ModuleOp"> {
  let summary = "Give every memref result of a function its own allocation";
  let description = [{
    Results become caller-provided out-params, and the allocation of each
    result is replaced by the out-param itself. A result that is not a fresh
    `memref.alloc` (a function argument, a global constant, a view, or the
    same buffer returned twice) is copied into a new allocation first, so
    out-params never alias inputs or each other.

    Before:
    ```mlir
    func.func @f(%a: memref<4xf32>) -> memref<4xf32> { return %a : memref<4xf32> }
    ```
    After:
    ```mlir
    func.func @f(%a: memref<4xf32>) -> memref<4xf32> {
      %0 = memref.alloc() : memref<4xf32>
      memref.copy %a, %0 : memref<4xf32> to memref<4xf32>
      return %0 : memref<4xf32>
    }
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def CheckResultSizes : Pass<"cuvil-check-result-sizes", "ModuleOp"> {
  let summary = "Check a dynamic result's sizes before copying it into its out-param";
  let description = [{
    The caller sizes the out-params of a function with dynamic results from
    the size expressions of its symbols. Each `memref.copy` into an
    out-param with dynamic dims first compares every dynamic size of the
    computed result with the out-param's; on a difference it calls
    `cuvil_result_size_mismatch(argument, dim, out-param size, result size)`
    instead of writing past the buffer. The backend defines that function:
    it reports to the runtime, which ends the call with an error.

    Before:
    ```mlir
    memref.copy %r, %out : memref<?x8xf32> to memref<?x8xf32>
    ```
    After:
    ```mlir
    %want = memref.dim %out, %c0 : memref<?x8xf32>
    %have = memref.dim %r, %c0 : memref<?x8xf32>
    %bad = arith.cmpi ne, %want, %have : index
    scf.if %bad {
      func.call @cuvil_result_size_mismatch(%c1_i64, %c0_i64, %w, %h) : (i64, i64, i64, i64) -> ()
    }
    memref.copy %r, %out : memref<?x8xf32> to memref<?x8xf32>
    ```
  }];
  let dependentDialects = [
    "arith::ArithDialect", "func::FuncDialect", "memref::MemRefDialect",
    "scf::SCFDialect"
  ];
}

def InstrumentKernels : Pass<"cuvil-instrument-kernels", "func::FuncOp"> {
  let summary = "Call profiling hooks around every kernel of an entry function";
  let description = [{
    Runs on bufferized functions marked `llvm.emit_c_interface` (the entry
    points). Top-level ops that do work (loops, linalg ops, copies) form
    kernels; consecutive ones from the same source location are one kernel.
    The function gets a trailing `!llvm.ptr` argument pointing at
    `{void (*hook)(void *ctx, i32 kernel, i32 phase), void *ctx}`; each
    kernel is bracketed by `hook(ctx, k, 0)` and `hook(ctx, k, 1)`, guarded
    by a null check, so a null argument costs one compare per kernel. The
    kernel table (name from `cuvil.kernel_names`, location) is attached as
    `cuvil.kernels = [[name, loc], ...]`.

    Before:
    ```mlir
    func.func @f(%a: memref<4xf32>, %out: memref<4xf32>) attributes {llvm.emit_c_interface} {
      scf.for ... { ... } loc("model.py":3:9)
      return
    }
    ```
    After:
    ```mlir
    func.func @f(%a: memref<4xf32>, %out: memref<4xf32>, %hooks: !llvm.ptr)
        attributes {cuvil.kernels = [["linalg.generic(addf)", loc("model.py":3:9)]], ...} {
      scf.if (%hooks != null) { llvm.call %hook(%ctx, 0, 0) }
      scf.for ... { ... }
      scf.if (%hooks != null) { llvm.call %hook(%ctx, 0, 1) }
      return
    }
    ```
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "scf::SCFDialect"];
}

def PlanMemory : Pass<"cuvil-plan-memory", "func::FuncOp"> {
  let summary = "Liveness-based reuse of intermediate buffers in one arena";
  let description = [{
    Every statically shaped intermediate buffer allocated at the top level
    of a function (after bufferization and deallocation) gets a live range
    from its allocation to its last use, aliases through views included.
    Buffers whose ranges do not overlap share memory: offsets in one arena
    are assigned first-fit (64-byte aligned) in order of allocation, each
    buffer becomes a `memref.view` of the arena and its deallocation goes.
    Buffers that escape (returned, passed to a call, yielded from a region)
    are left alone. The function gets `cuvil.planned_peak_bytes` (the arena
    size) and `cuvil.unplanned_bytes` (the sum of the planned buffers).

    Before:
    ```mlir
    %a = memref.alloc() : memref<256xf32>
    ... last use of %a ...
    memref.dealloc %a : memref<256xf32>
    %b = memref.alloc() : memref<256xf32>
    ```
    After:
    ```mlir
    %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
    %a = memref.view %arena[%c0][] : memref<1024xi8> to memref<256xf32>
    %b = memref.view %arena[%c0][] : memref<1024xi8> to memref<256xf32>
    ```

    With `views=0`, for targets that cannot view bytes as another type (C
    arrays), there is no arena: a buffer takes over an earlier allocation
    of the same type whose live range has ended (`%b` above becomes `%a`),
    freed once at the end of the function.
  }];
  let options = [
    Option<"views", "views", "bool", "true",
           "Pack every buffer into one byte arena through memref.view; off: "
           "share allocations of the same type only">,
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def LowerStridedGathers : Pass<"cuvil-lower-strided-gathers", "func::FuncOp"> {
  let summary = "Turn gathers from non-contiguous memory into scalar loads";
  let description = [{
    LLVM's masked gather, what `convert-vector-to-llvm` makes of a
    `vector.gather`, reads from a memref whose innermost dimension is
    contiguous. Vectorizing a kernel over a strided view can produce a
    gather from a memref with another innermost stride, which the
    conversion would leave unconverted. Only those gathers are flattened to
    one dimension and rewritten as conditional scalar loads; gathers LLVM
    can take stay gathers.

    Before:
    ```mlir
    %g = vector.gather %base[%c0, %c0] [%idx], %mask, %pass
        : memref<2x3xf64, strided<[72, 6], offset: 161>>, vector<2xindex>,
          vector<2xi1>, vector<2xf64> into vector<2xf64>
    ```
    After: for each lane, `scf.if` on its mask bit around a `memref.load`
    (or `vector.load` of one element) inserted into the result vector.
  }];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect"];
}

def GathersAsLoads : Pass<"cuvil-gathers-as-loads", "func::FuncOp"> {
  let summary = "Read gathers of evenly spaced elements as a load and a "
                "shuffle";
  let description = [{
    Vectorizing a strided access (a stride-2 convolution's columns read
    every other pixel of a row) gives a `vector.gather` whose lane i reads
    the element s * i after lane 0's. x86 has no fast gather: LLVM
    scalarizes it on most cores (an index extract, a scalar load and an
    insert per lane). Where every lane is read (an all-true mask), the base
    is row-major memory and the index vector is lane 0's index plus s * i
    for a constant s from 1 to 4 (followed back through broadcasts,
    constants, `vector.step`, sums, products by constants and elementwise
    ops of lane-uniform operands, such as an embedding's clamped token
    index), and the elements are whole bytes (LLVM loads an i1 vector as
    packed bits), the gather
    becomes one `vector.load` of s * (n - 1) + 1 elements from lane 0's and,
    for s over 1, a `vector.shuffle` keeping every s-th. The gather reads
    the first and the last of those elements itself, so the load stays
    inside the memory it reads. Other gathers are left alone.

    Before:
    ```mlir
    %idx = arith.addi %uniform, %cst : vector<8xindex>  // cst = [0, 2, ..., 14]
    %g = vector.gather %img[%c0, %c0] [%idx], %all, %pass
        : memref<3x230xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32>
          into vector<8xf32>
    ```
    After:
    ```mlir
    %flat = memref.collapse_shape %img [[0, 1]] : memref<3x230xf32> into memref<690xf32>
    %i0 = vector.extract %idx[0] : index from vector<8xindex>
    %v = vector.load %flat[%i0] : memref<690xf32>, vector<15xf32>
    %g = vector.shuffle %v, %v [0, 2, 4, 6, 8, 10, 12, 14] : vector<15xf32>, vector<15xf32>
    ```
  }];
  let dependentDialects = ["vector::VectorDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def ExpandBf16Conversions
    : Pass<"cuvil-expand-bf16-conversions", "func::FuncOp"> {
  let summary = "Compute float32/bfloat16 conversions with integer ops";
  let description = [{
    Rewrites `arith.truncf` from f32 to bf16 and `arith.extf` from bf16 to
    f32, scalar or vector, with MLIR's bf16 expansion: the extension is a
    16-bit shift, the truncation rounds to nearest even with a rounding
    bias and keeps NaNs quiet. Without AVX512-BF16, LLVM would otherwise
    call compiler-rt's `__truncsfbf2` per element, a symbol the cpu
    target's shared libraries do not have.

    Before:
    ```mlir
    %h = arith.truncf %x : vector<16xf32> to vector<16xbf16>
    ```
    After: `arith.bitcast` to `vector<16xi32>`, the rounding bias added,
    `arith.shrui` by 16, `arith.trunci` to i16, NaNs selected as `0x7fc0`,
    and an `arith.bitcast` to `vector<16xbf16>`.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def ExpandStridedCopies : Pass<"cuvil-expand-strided-copies", "func::FuncOp"> {
  let summary = "Copy between non-contiguous memrefs with loops";
  let description = [{
    A `memref.copy` whose source or target is not contiguous (a
    `tensor.pad`'s source copied into the interior of the padded buffer,
    a value inserted into a slice) would lower to a call of MLIR's generic
    runtime copy, which visits one element at a time through the
    descriptors. Such copies become a loop nest of loads and stores over the
    shape (sizes read with `memref.dim` where dynamic), whose innermost
    loop LLVM vectorizes; where the innermost dimension is static, at most
    256 elements and contiguous on both sides, the loops stop above it and
    each row is one vector read and write (LLVM's vectorizer left such short
    rows as unrolled scalar copies), or a loop of 64-byte vectors where the
    row is more than four of them and a whole number (LLVM weighs a vector
    load of any width as one instruction and unrolled the loops of
    `vector<256xf32>` rows into blocks of thousands of loads and stores,
    which its instruction scheduler takes quadratic time over); such a copy of 2^15 elements or more,
    static and outside any parallel loop, splits its rows across threads
    (an `scf.parallel` over its first dimension longer than 1) unless
    `threads=0`. Copies between contiguous memrefs stay `memref.copy` (a
    `memcpy`).

    Before:
    ```mlir
    memref.copy %x, %interior : memref<1x3x32x32xf32> to
        memref<1x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
    ```
    After: three nested `scf.for` loops around a `vector.transfer_read` of
    `vector<32xf32>` from `%x` and a `vector.transfer_write` into
    `%interior`.
  }];
  let options = [
    Option<"threads", "threads", "bool", /*default=*/"true",
           "Split large copies' rows across threads (scf.parallel)">
  ];
  let dependentDialects = ["scf::SCFDialect", "memref::MemRefDialect",
                           "arith::ArithDialect", "vector::VectorDialect"];
}

def StaticBuffers : Pass<"cuvil-static-buffers", "ModuleOp"> {
  let summary = "Give every buffer static storage and copy with loops";
  let description = [{
    For targets whose code has no allocator (C, WebAssembly), after
    bufferization and memory planning: each `memref.alloc` of a static
    shape becomes a private, uninitialized `memref.global` (a `static`
    array in C, zero-initialized linear memory in wasm) read with
    `memref.get_global`, every `memref.dealloc` goes, and each `memref.copy`
    becomes a loop nest of loads and stores (no runtime copy function; LLVM
    recognizes contiguous ones as a memcpy). Run after `cuvil-plan-memory`,
    the arena it plans becomes one global sized by the plan. A dynamic shape
    is an error naming the op, its source location and the target. With
    `keep-alignment=0` (C99 cannot state one) globals lose their alignment.
    With `bounded-views`, an allocation of a remainder tile (sizes from
    `affine.min` of static sizes) gets a byte global as large as its upper
    bound and a `memref.view` at its actual sizes.

    Before:
    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<64x512xf32>
    memref.copy %a, %out : memref<64x512xf32> to memref<64x512xf32>
    memref.dealloc %a : memref<64x512xf32>
    ```
    After:
    ```mlir
    memref.global "private" @cuvil_buffer : memref<64x512xf32> = uninitialized {alignment = 64 : i64}
    %a = memref.get_global @cuvil_buffer : memref<64x512xf32>
    scf.for %i = ... { scf.for %j = ... { memref.load ... memref.store ... } }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", "\"static\"",
           "Target named in errors (`the c target compiles static shapes "
           "only`)">,
    Option<"keepAlignment", "keep-alignment", "bool", "true",
           "Keep the alignment of allocations and globals">,
    Option<"boundedViews", "bounded-views", "bool", "false",
           "A dynamically sized allocation whose sizes have constant upper "
           "bounds (a remainder tile) becomes a byte global of the bound, "
           "viewed at its sizes (for lowerings that take memref.view)">,
  ];
  let dependentDialects = ["memref::MemRefDialect", "scf::SCFDialect",
                           "arith::ArithDialect"];
}

#endif // CUVIL_CODEGEN_COMMON_PASSES_TD
