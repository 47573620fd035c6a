//===- RuntimeThreadsTest.cpp - The C runtime from many threads (TSan) ----===//
//
// Built with -fsanitize=thread from the runtime's own sources (the package
// reader, executable packages, memory pool, shared-library loading, the C
// interface). Given an exported model and its inputs, 8 threads each open
// the package, and all of them also share one executable whose memory pool
// they contend for and whose code they load lazily at the same moment;
// every thread's output must equal a single-threaded call's.
//
//   RuntimeThreadsTest MODEL.cuvil IN0.bin ... INn.bin
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/cuvil_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 8, kCalls = 20;

size_t bytesOf(const cuvil_tensor_info &info) {
  size_t n = std::strcmp(info.dtype, "float64") == 0 ||
                     std::strcmp(info.dtype, "int64") == 0
                 ? 8
                 : 4;
  for (int d = 0; d < info.rank; ++d)
    n *= static_cast<size_t>(info.shape[d]);
  return n;
}

struct Buffers {
  std::vector<std::vector<char>> inputs, outputs;
  std::vector<const void *> in;
  std::vector<void *> out;
};

bool prepare(const cuvil_function *fn, const std::vector<std::string> &files,
             Buffers &b) {
  int n = cuvil_function_input_count(fn);
  if (static_cast<int>(files.size()) != n) {
    std::fprintf(stderr, "expected %d input files\n", n);
    return false;
  }
  for (int i = 0; i < n; ++i) {
    cuvil_tensor_info info;
    cuvil_function_input(fn, i, &info);
    std::ifstream file(files[i], std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(file)), {});
    if (data.size() != bytesOf(info)) {
      std::fprintf(stderr, "%s: %zu bytes, expected %zu\n", files[i].c_str(),
                   data.size(), bytesOf(info));
      return false;
    }
    b.inputs.push_back(std::move(data));
  }
  for (auto &v : b.inputs)
    b.in.push_back(v.data());
  for (int j = 0; j < cuvil_function_output_count(fn); ++j) {
    cuvil_tensor_info info;
    cuvil_function_output(fn, j, &info);
    b.outputs.emplace_back(bytesOf(info));
  }
  for (auto &v : b.outputs)
    b.out.push_back(v.data());
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.cuvil IN.bin...\n", argv[0]);
    return 2;
  }
  std::vector<std::string> files(argv + 2, argv + argc);
  cuvil_executable *shared = cuvil_executable_open(argv[1]);
  if (!shared) {
    std::fprintf(stderr, "%s\n", cuvil_last_error());
    return 1;
  }
  // A pool smaller than one call needs: it grows once, under contention.
  cuvil_executable_set_options(shared, 256, 0, 1);
  const cuvil_function *fn = cuvil_executable_function(shared, "main");
  if (!fn)
    return 1;
  std::atomic<int> failures{0}, ready{0};
  std::vector<std::vector<std::vector<char>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // Each thread also opens the package for itself.
      cuvil_executable *own = cuvil_executable_open(argv[1]);
      if (!own) {
        ++failures;
        return;
      }
      cuvil_executable_set_options(own, t % 2 ? 1 << 20 : 0, 0, 1);
      Buffers b;
      const cuvil_function *mine = cuvil_executable_function(own, "main");
      if (!mine || !prepare(mine, files, b)) {
        ++failures;
        cuvil_executable_close(own);
        return;
      }
      ++ready;
      while (ready.load() < kThreads) // start the shared first calls together
        std::this_thread::yield();
      for (int c = 0; c < kCalls; ++c) {
        cuvil_executable *exe = c % 2 ? own : shared;
        const cuvil_function *f = c % 2 ? mine : fn;
        if (cuvil_function_run(exe, f, b.in.data(), b.out.data()) != 0) {
          std::fprintf(stderr, "thread %d call %d: %s\n", t, c,
                       cuvil_last_error());
          ++failures;
        }
      }
      results[t] = b.outputs;
      cuvil_executable_close(own);
    });
  for (auto &thread : threads)
    thread.join();
  // Every thread's last output equals a fresh single-threaded call's.
  Buffers check;
  prepare(fn, files, check);
  if (cuvil_function_run(shared, fn, check.in.data(), check.out.data()) != 0)
    return 1;
  if (failures.load() != 0) {
    std::fprintf(stderr, "%d calls failed\n", failures.load());
    return 1;
  }
  bool agree = true;
  for (const auto &outputs : results)
    agree = agree && outputs == check.outputs;
  std::printf("%d threads x %d calls: no failure; outputs agree: %s\n",
              kThreads, kCalls, agree ? "yes" : "NO");
  cuvil_executable_close(shared);
  return agree ? 0 : 1;
}
