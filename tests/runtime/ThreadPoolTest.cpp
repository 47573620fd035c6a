//===- ThreadPoolTest.cpp - The pool parallel regions run on ------------===//
//
// Drives the entry points compiled code calls (cuvil/Runtime/ThreadPool.h)
// as LLVM's OpenMP builder emits them: a fork of an outlined region whose
// threads each take a static share of a loop. Built with ThreadSanitizer.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

using namespace cuvil;

namespace {

template <typename F> F entry(const char *name) {
  for (const RuntimeFunction &fn : threads::runtimeFunctions())
    if (std::strcmp(fn.name, name) == 0)
      return reinterpret_cast<F>(fn.address);
  ADD_FAILURE() << "no entry point " << name;
  return nullptr;
}

using Fork = void (*)(void *, int32_t, void *, void **);
using StaticInit = void (*)(void *, int32_t, int32_t, int32_t *, uint64_t *,
                            uint64_t *, int64_t *, int64_t, int64_t);
using ThreadNum = int32_t (*)(void *);

/// One region: each thread takes its static share of [0, trip) and counts
/// every iteration it runs (and which OS threads ran shares).
struct Loop {
  uint64_t trip = 0;
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> runners;
  std::atomic<int> shares{0};
  explicit Loop(uint64_t trip) : trip(trip), hits(trip) {}
};

void body(int32_t *gtid, int32_t * /*btid*/, void *arg) {
  auto *loop = static_cast<Loop *>(arg);
  static StaticInit init = entry<StaticInit>("__kmpc_for_static_init_8u");
  static ThreadNum threadNum = entry<ThreadNum>("__kmpc_global_thread_num");
  EXPECT_EQ(threadNum(nullptr), *gtid);
  loop->shares.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(loop->mutex);
    loop->runners.insert(std::this_thread::get_id());
  }
  if (loop->trip == 0)
    return;
  uint64_t lower = 0, upper = loop->trip - 1;
  int64_t stride = 1;
  int32_t last = 0;
  init(nullptr, *gtid, 34, &last, &lower, &upper, &stride, 1, 0);
  for (uint64_t i = lower; i <= upper && upper - lower + 1 != 0; ++i)
    loop->hits[i].fetch_add(1);
}

using Body = void (*)(int32_t *, int32_t *, void *);

void runRegion(Loop &loop, Body region = &body) {
  static Fork fork = entry<Fork>(threads::kForkFunction);
  void *args[1] = {&loop};
  fork(nullptr, 1, reinterpret_cast<void *>(region), args);
}

void expectEachIterationOnce(Loop &loop) {
  for (uint64_t i = 0; i < loop.trip; ++i)
    ASSERT_EQ(loop.hits[i].load(), 1)
        << "iteration " << i << " of " << loop.trip;
}

/// Runs `regions` regions of `trip` iterations: each has `shares` shares
/// and covers its loop once.
void expectRegionsCoverTheirLoops(int regions, uint64_t trip, int shares) {
  for (int i = 0; i < regions; ++i) {
    Loop loop(trip);
    runRegion(loop);
    EXPECT_EQ(loop.shares.load(), shares);
    expectEachIterationOnce(loop);
  }
}

TEST(ThreadPool, TheLoaderHasAnAddressForEveryEntryPointTheCodeCalls) {
  std::set<std::string_view> names;
  for (const RuntimeFunction &fn : threads::runtimeFunctions()) {
    EXPECT_TRUE(threads::isRuntimeFunction(fn.name)) << fn.name;
    EXPECT_NE(fn.address, nullptr) << fn.name;
    names.insert(fn.name);
  }
  EXPECT_EQ(names.size(), std::size(threads::kEntryPoints));
}

TEST(ThreadPool, StaticSharesCoverTheLoopOnce) {
  for (int team : {1, 2, 3, 4, 7}) {
    threads::setCallerThreads(team);
    for (uint64_t trip : {0, 1, 2, 3, 5, 8, 13, 64, 1000}) {
      Loop loop(trip);
      runRegion(loop);
      EXPECT_EQ(loop.shares.load(), team) << "team " << team;
      expectEachIterationOnce(loop);
    }
  }
  threads::setCallerThreads(0);
}

TEST(ThreadPool, MoreThreadsThanCoresStillCoverTheLoop) {
  // Workers that get no core do not hold the region up: whoever is running
  // (the caller included) takes the shares left.
  threads::setCallerThreads(24);
  expectRegionsCoverTheirLoops(10, 240, 24);
  threads::setCallerThreads(0);
}

TEST(ThreadPool, RegionsFromManyThreadsAtOnce) {
  // Concurrent callers: one uses the pool, the others run alone.
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      threads::setCallerThreads(2);
      for (int i = 0; i < 200; ++i) {
        Loop loop(37);
        runRegion(loop);
        for (uint64_t j = 0; j < loop.trip; ++j)
          wrong += loop.hits[j].load() != 1;
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  EXPECT_EQ(wrong.load(), 0);
}

thread_local sigjmp_buf *landing = nullptr;
std::atomic<bool> jumpOut{false};

void failingBody(int32_t *gtid, int32_t *btid, void *arg) {
  body(gtid, btid, arg);
  // A failed allocation on the calling thread unwinds to its call.
  if (landing && jumpOut.exchange(false))
    siglongjmp(*landing, 1);
}

TEST(ThreadPool, AJumpOutOfARegionFreesThePool) {
  threads::setCallerThreads(2);
  Loop failed(100);
  sigjmp_buf env;
  landing = &env;
  jumpOut = true;
  if (sigsetjmp(env, 0) == 0) {
    runRegion(failed, &failingBody);
  } else {
    threads::abandonRegions();
  }
  landing = nullptr;
  // The next regions use the pool again, with every share.
  expectRegionsCoverTheirLoops(20, 64, 2);
  threads::setCallerThreads(0);
}

} // namespace
