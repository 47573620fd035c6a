/*===- cuvil_runtime.h - Run Cuvil executable packages from C -------------===*
 *
 * The C interface of libcuvil_runtime: open an executable package (.cuvil)
 * written by `CompiledModel.export` or `cuvil compile --emit cuvil`, look up
 * a function, describe its signature and run it on the caller's buffers. No
 * Python and no compiler are involved; the package is checked as hostile
 * input (docs/irpkg.md) and its code loaded only on a CPU with the features
 * it was compiled for.
 *
 * Buffers are C-contiguous (row-major), of the dtypes and shapes the
 * function describes. Functions returning int give 0 on success and -1 on
 * failure; pointers are NULL on failure. cuvil_last_error() then says what
 * went wrong, naming the file, the field or the argument. An executable may
 * be used from several threads; the error text is per thread.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_H
#define CUVIL_RUNTIME_H

#include <stdint.h>

#if defined(__GNUC__)
#define CUVIL_RUNTIME_API __attribute__((visibility("default")))
#else
#define CUVIL_RUNTIME_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuvil_executable cuvil_executable;
typedef struct cuvil_function cuvil_function;

/* One input or output. `shape` has `rank` sizes; -1 marks a symbolic size,
 * whose name (inputs: the symbol, "N"; outputs: its expression, "N * 2") is
 * dim_names[d]; dim_names[d] is "" for a static size. Valid while the
 * executable is open. */
typedef struct cuvil_tensor_info {
  const char *name;  /* input name; "" for an output */
  const char *dtype; /* "float32", "int64", ... */
  int rank;
  const int64_t *shape;
  const char *const *dim_names;
} cuvil_tensor_info;

/* The last error on this thread ("" if none); valid until the next call. */
CUVIL_RUNTIME_API const char *cuvil_last_error(void);

/* Opens and checks a package; NULL on failure. */
CUVIL_RUNTIME_API cuvil_executable *cuvil_executable_open(const char *path);
/* The same, with each function's code (and the constant weights compiled into
   it) loaded from a file in `directory` named by its SHA-256 (created when
   missing): mapped read-only, its pages are shared by every process that
   loads the same package. NULL `directory`: loaded from memory, as
   cuvil_executable_open. */
CUVIL_RUNTIME_API cuvil_executable *
cuvil_executable_open_mapped(const char *path, const char *directory);
CUVIL_RUNTIME_API void cuvil_executable_close(cuvil_executable *executable);

/* Session options of an executable: a memory pool of `pool_bytes` that
 * every call takes its intermediates from (0: none, each call allocates),
 * failing a call that needs more when `pool_fixed` is nonzero (else the pool
 * grows once to fit), and the OpenMP threads a call may use (0: the
 * default). */
CUVIL_RUNTIME_API int cuvil_executable_set_options(cuvil_executable *executable,
                                                   uint64_t pool_bytes,
                                                   int pool_fixed, int threads);

/* The structural SHA-256 (64 hex digits) of the IR the code came from. */
CUVIL_RUNTIME_API const char *
cuvil_executable_fingerprint(const cuvil_executable *executable);
CUVIL_RUNTIME_API int
cuvil_executable_function_count(const cuvil_executable *executable);
CUVIL_RUNTIME_API const char *
cuvil_executable_function_name(const cuvil_executable *executable, int index);

/* The function called `name` ("main" for an exported model, or one of its
 * aliases); NULL, with an error listing the names, when there is none. */
CUVIL_RUNTIME_API const cuvil_function *
cuvil_executable_function(cuvil_executable *executable, const char *name);

/* "main(x: float32[8, 16]) -> (float32[8, 4])". */
CUVIL_RUNTIME_API const char *
cuvil_function_signature(const cuvil_function *function);
CUVIL_RUNTIME_API int
cuvil_function_input_count(const cuvil_function *function);
CUVIL_RUNTIME_API int
cuvil_function_output_count(const cuvil_function *function);
CUVIL_RUNTIME_API int cuvil_function_input(const cuvil_function *function,
                                           int index, cuvil_tensor_info *info);
CUVIL_RUNTIME_API int cuvil_function_output(const cuvil_function *function,
                                            int index, cuvil_tensor_info *info);

/* Runs a function whose shapes are all static. `inputs` and `outputs` hold
 * one data pointer per input and output. */
CUVIL_RUNTIME_API int cuvil_function_run(cuvil_executable *executable,
                                         const cuvil_function *function,
                                         const void *const *inputs,
                                         void *const *outputs);

/* For symbolic shapes: the shape of output `index` for inputs of shapes
 * `input_shapes` (one array of its rank per input), written to `shape`
 * (room for the output's rank). */
CUVIL_RUNTIME_API int
cuvil_function_output_shape(const cuvil_function *function,
                            const int64_t *const *input_shapes, int index,
                            int64_t *shape);

/* Runs on inputs of the given shapes (any function); the outputs must be
 * sized as cuvil_function_output_shape says. */
CUVIL_RUNTIME_API int cuvil_function_run_shaped(
    cuvil_executable *executable, const cuvil_function *function,
    const void *const *inputs, const int64_t *const *input_shapes,
    void *const *outputs);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_H */
