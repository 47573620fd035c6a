/* run_model: run an exported Cuvil model from C, without Python.
 *
 *   run_model MODEL.cuvil FUNCTION IN0.bin [IN1.bin ...] OUT_PREFIX
 *
 * Each INi.bin holds input i as raw row-major values of its dtype (NumPy:
 * `x.tofile("in0.bin")`); output j is written to OUT_PREFIXj.bin. Static
 * shapes only; see cuvil_function_run_shaped for symbolic ones. With
 * CUVIL_MAPPED_DIR set, the code is mapped from a file there (shared by every
 * process running the same package). Build:
 *
 *   cc -std=c11 -Wall -Wextra run_model.c -I<cuvil>/compiler_core/include \
 *      -L<build>/lib -lcuvil_runtime -Wl,-rpath,<build>/lib -o run_model
 */
#include "cuvil/Runtime/cuvil_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t dtype_bytes(const char *dtype) {
  if (!strcmp(dtype, "float64") || !strcmp(dtype, "int64"))
    return 8;
  if (!strcmp(dtype, "float32") || !strcmp(dtype, "int32"))
    return 4;
  if (!strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16") ||
      !strcmp(dtype, "int16"))
    return 2;
  return 1; /* int8, uint8, bool */
}

static size_t tensor_bytes(const cuvil_tensor_info *info) {
  size_t bytes = dtype_bytes(info->dtype);
  for (int d = 0; d < info->rank; ++d)
    bytes *= (size_t)info->shape[d];
  return bytes;
}

static void *read_file(const char *path, size_t expected) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "run_model: cannot open %s\n", path);
    return NULL;
  }
  void *data = malloc(expected ? expected : 1);
  size_t got = data ? fread(data, 1, expected, file) : 0;
  int extra = fgetc(file) != EOF;
  fclose(file);
  if (got != expected || extra) {
    fprintf(stderr, "run_model: %s must hold exactly %zu bytes\n", path,
            expected);
    free(data);
    return NULL;
  }
  return data;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL.cuvil FUNCTION IN.bin... OUT_PREFIX\n",
            argv[0]);
    return 2;
  }
  /* CUVIL_MAPPED_DIR: code and weights mapped from a file there, shared with
     every other process that loads the same package. */
  const char *mapped = getenv("CUVIL_MAPPED_DIR");
  cuvil_executable *exe = cuvil_executable_open_mapped(argv[1], mapped);
  if (!exe) {
    fprintf(stderr, "run_model: %s\n", cuvil_last_error());
    return 1;
  }
  const cuvil_function *fn = cuvil_executable_function(exe, argv[2]);
  if (!fn) {
    fprintf(stderr, "run_model: %s\n", cuvil_last_error());
    cuvil_executable_close(exe);
    return 1;
  }
  printf("%s\n", cuvil_function_signature(fn));
  /* Intermediates from a 64 MiB pool reused by every call (grows if short). */
  cuvil_executable_set_options(exe, 64u << 20, 0, 0);
  int n_in = cuvil_function_input_count(fn);
  int n_out = cuvil_function_output_count(fn);
  if (argc != 4 + n_in) {
    fprintf(stderr, "run_model: %s takes %d inputs\n", argv[2], n_in);
    cuvil_executable_close(exe);
    return 2;
  }
  int status = 1;
  void **inputs = calloc((size_t)n_in + 1, sizeof(void *));
  void **outputs = calloc((size_t)n_out, sizeof(void *));
  size_t *out_bytes = calloc((size_t)n_out, sizeof(size_t));
  cuvil_tensor_info info;
  for (int i = 0; i < n_in; ++i) {
    cuvil_function_input(fn, i, &info);
    if (!(inputs[i] = read_file(argv[3 + i], tensor_bytes(&info))))
      goto done;
  }
  for (int j = 0; j < n_out; ++j) {
    cuvil_function_output(fn, j, &info);
    out_bytes[j] = tensor_bytes(&info);
    outputs[j] = malloc(out_bytes[j] ? out_bytes[j] : 1);
  }
  struct timespec start, end;
  timespec_get(&start, TIME_UTC);
  if (cuvil_function_run(exe, fn, (const void *const *)inputs, outputs) != 0) {
    fprintf(stderr, "run_model: %s\n", cuvil_last_error());
    goto done;
  }
  timespec_get(&end, TIME_UTC);
  printf("first call: %.3f ms\n", (end.tv_sec - start.tv_sec) * 1e3 +
                                      (end.tv_nsec - start.tv_nsec) / 1e6);
  const int runs = 100;
  timespec_get(&start, TIME_UTC);
  for (int r = 0; r < runs; ++r)
    if (cuvil_function_run(exe, fn, (const void *const *)inputs, outputs) !=
        0) {
      fprintf(stderr, "run_model: %s\n", cuvil_last_error());
      goto done;
    }
  timespec_get(&end, TIME_UTC);
  printf("then: %.3f ms per call (%d calls)\n",
         ((end.tv_sec - start.tv_sec) * 1e3 +
          (end.tv_nsec - start.tv_nsec) / 1e6) /
             runs,
         runs);
  for (int j = 0; j < n_out; ++j) {
    char path[4096];
    snprintf(path, sizeof(path), "%s%d.bin", argv[argc - 1], j);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(outputs[j], 1, out_bytes[j], file) != out_bytes[j]) {
      fprintf(stderr, "run_model: cannot write %s\n", path);
      if (file)
        fclose(file);
      goto done;
    }
    fclose(file);
    printf("output %d: %zu bytes -> %s\n", j, out_bytes[j], path);
  }
  status = 0;
done:
  for (int i = 0; i < n_in; ++i)
    free(inputs[i]);
  for (int j = 0; j < n_out; ++j)
    free(outputs[j]);
  free(inputs);
  free(outputs);
  free(out_bytes);
  cuvil_executable_close(exe);
  return status;
}
