//===- ThreadPool.cpp - The threads compiled CPU code runs on ------------===//
//
// See ThreadPool.h. A region's threads are logical: thread ids 0..team-1 are
// claimed from one atomic ticket (generation, team size, next id) by the
// caller and by whichever workers are awake; the caller claims until none
// is left, then waits for the shares started elsewhere. Workers spin for a
// millisecond after a region (the kernels of one call follow each other
// within microseconds), then sleep.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <thread>

using namespace cuvil;

namespace {

/// How long a worker looks for the next region before it sleeps: across
/// the kernels of one call and the calls of a loop (a 200 us spin left the
/// worker asleep, and the caller alone, for a third of an MLP's regions
/// while OpenBLAS's workers spun on the other core).
constexpr auto kSpin = std::chrono::microseconds(1000);
/// Captured-value pointers a region may take (LLVM's OpenMP builder passes
/// one: a pointer to a struct of them).
constexpr int32_t kMaxArgs = 8;

[[noreturn]] void fatal(const char *what) {
  std::fprintf(stderr, "cuvil: compiled code: %s; stopping the process\n",
               what);
  std::abort();
}

/// The logical thread the calling OS thread is running, and its team.
struct Share {
  int32_t tid = 0;
  int32_t team = 1;
  bool inRegion = false;
};
thread_local Share current;
thread_local int callerCount = 0;
/// Whether this thread is handing out a region of the pool.
thread_local bool forking = false;

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Calls `microtask(&tid, &tid, args[0], ..., args[argc - 1])`.
void invoke(void *microtask, int32_t tid, int32_t argc, void *const *args) {
  int32_t gtid = tid, btid = tid;
  using P = void *;
  switch (argc) {
  case 0:
    return reinterpret_cast<void (*)(int32_t *, int32_t *)>(microtask)(&gtid,
                                                                       &btid);
  case 1:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P)>(microtask)(
        &gtid, &btid, args[0]);
  case 2:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P)>(microtask)(
        &gtid, &btid, args[0], args[1]);
  case 3:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P, P)>(microtask)(
        &gtid, &btid, args[0], args[1], args[2]);
  case 4:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P, P, P)>(
        microtask)(&gtid, &btid, args[0], args[1], args[2], args[3]);
  case 5:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P, P, P, P)>(
        microtask)(&gtid, &btid, args[0], args[1], args[2], args[3], args[4]);
  case 6:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P, P, P, P, P)>(
        microtask)(&gtid, &btid, args[0], args[1], args[2], args[3], args[4],
                   args[5]);
  case 7:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P, P, P, P, P,
                                     P)>(microtask)(&gtid, &btid, args[0],
                                                    args[1], args[2], args[3],
                                                    args[4], args[5], args[6]);
  case 8:
    return reinterpret_cast<void (*)(int32_t *, int32_t *, P, P, P, P, P, P, P,
                                     P)>(microtask)(
        &gtid, &btid, args[0], args[1], args[2], args[3], args[4], args[5],
        args[6], args[7]);
  default:
    fatal("a parallel region captures more than 8 values");
  }
}

/// Runs logical thread `tid` of a team of `team` on this OS thread.
void runShare(void *microtask, int32_t tid, int32_t team, int32_t argc,
              void *const *args) {
  Share saved = current;
  current = Share{tid, team, true};
  invoke(microtask, tid, argc, args);
  current = saved;
}

int defaultThreads() {
  static const int threads = [] {
    if (const char *text = std::getenv("OMP_NUM_THREADS")) {
      int value = std::atoi(text);
      if (value > 0)
        return std::min(value, 4096);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      return std::max(1, CPU_COUNT(&set));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return threads;
}

/// The ticket: generation (32 bits), team size (16), next id (16).
constexpr uint64_t ticketOf(uint64_t generation, uint64_t team, uint64_t next) {
  return generation << 32 | team << 16 | next;
}

class Pool {
public:
  static Pool &get() {
    static Pool *pool = [] {
      auto *p = new Pool(); // never destroyed: its threads run until exit
      pthread_atfork(nullptr, nullptr, [] { Pool::get().afterFork(); });
      return p;
    }();
    return *pool;
  }

  void fork(void *microtask, int32_t argc, void *const *args) {
    if (argc < 0 || argc > kMaxArgs)
      fatal("a parallel region captures more than 8 values");
    int team = std::min(threads::callerThreads(), 1 << 15);
    // Nested, or another thread's region running: this one runs alone.
    if (team <= 1 || current.inRegion ||
        busy.exchange(true, std::memory_order_acquire)) {
      runShare(microtask, 0, 1, argc, args);
      return;
    }
    team = std::min(team, startWorkers(team - 1) + 1);
    region.microtask = microtask;
    region.argc = argc;
    std::copy(args, args + argc, region.args);
    done.store(0, std::memory_order_relaxed);
    uint64_t generation = (ticket.load(std::memory_order_relaxed) >> 32) + 1;
    generation &= 0xffffffff;
    ticket.store(ticketOf(generation, team, 0), std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
    }
    forking = true;
    int32_t tid, size;
    while (claim(generation, tid, size)) {
      runShare(microtask, tid, size, argc, region.args);
      finish();
    }
    // Every share is claimed: wait for those running elsewhere.
    waitFor(team);
    forking = false;
    busy.store(false, std::memory_order_release);
  }

  /// After a share the calling thread ran jumped out of its region (a
  /// failed allocation unwinds to the call): no more shares are handed out,
  /// the ones other threads started finish, and the pool is free again.
  void abandon() {
    if (!forking)
      return;
    uint64_t t = ticket.load(std::memory_order_acquire);
    uint64_t team = (t >> 16) & 0xffff, next = t & 0xffff;
    while (next < team &&
           !ticket.compare_exchange_weak(t, ticketOf(t >> 32, team, team),
                                         std::memory_order_acq_rel))
      next = t & 0xffff;
    // Claimed: `next` shares; the interrupted one never finishes.
    waitFor(static_cast<int32_t>(std::min(next, team)) - 1);
    forking = false;
    busy.store(false, std::memory_order_release);
  }

private:
  struct Region {
    void *microtask = nullptr;
    int32_t argc = 0;
    void *args[kMaxArgs] = {};
  };

  /// Claims the next thread id of `generation`'s region, if one is left,
  /// with the region's team size.
  bool claim(uint64_t generation, int32_t &tid, int32_t &teamSize) {
    uint64_t t = ticket.load(std::memory_order_acquire);
    while (true) {
      uint64_t team = (t >> 16) & 0xffff, next = t & 0xffff;
      if ((t >> 32) != generation || next >= team)
        return false;
      if (ticket.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        tid = static_cast<int32_t>(next);
        teamSize = static_cast<int32_t>(team);
        return true;
      }
    }
  }

  void finish() { done.fetch_add(1, std::memory_order_release); }

  void waitFor(int32_t shares) {
    for (unsigned spins = 0; done.load(std::memory_order_acquire) < shares;
         ++spins)
      spins % 1024 == 1023 ? std::this_thread::yield() : cpuRelax();
  }

  /// Starts workers until `wanted` run (or the system refuses threads);
  /// the number running.
  int startWorkers(int wanted) {
    if (started >= wanted)
      return started;
    std::lock_guard<std::mutex> lock(startMutex);
    while (started < wanted) {
      try {
        std::thread([this] { work(); }).detach();
      } catch (const std::system_error &) {
        break; // fewer threads: the caller runs the other shares
      }
      ++started;
    }
    return started;
  }

  void work() {
    uint64_t seen = ticket.load(std::memory_order_acquire) >> 32;
    while (true) {
      seen = waitForRegion(seen);
      int32_t tid, size;
      while (claim(seen, tid, size)) {
        // The region's fields were published before the ticket this
        // claim read (release / acquire).
        runShare(region.microtask, tid, size, region.argc, region.args);
        finish();
      }
    }
  }

  /// Spins, then sleeps, until a generation other than `seen` starts.
  uint64_t waitForRegion(uint64_t seen) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned spins = 0;; ++spins) {
      uint64_t generation = ticket.load(std::memory_order_acquire) >> 32;
      if (generation != seen)
        return generation;
      if (spins % 256 == 255 &&
          std::chrono::steady_clock::now() - start > kSpin)
        break;
      cpuRelax();
    }
    std::unique_lock<std::mutex> lock(mutex);
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    wake.wait(lock, [&] {
      return (ticket.load(std::memory_order_seq_cst) >> 32) != seen;
    });
    sleepers.fetch_sub(1, std::memory_order_relaxed);
    return ticket.load(std::memory_order_acquire) >> 32;
  }

  /// In a child process only the forking thread exists.
  void afterFork() {
    new (&mutex) std::mutex();
    new (&startMutex) std::mutex();
    new (&wake) std::condition_variable();
    started = 0;
    sleepers.store(0);
    busy.store(false);
  }

  Region region;
  std::atomic<uint64_t> ticket{0};
  std::atomic<int32_t> done{0};
  std::atomic<bool> busy{false};
  std::atomic<int> sleepers{0};
  std::atomic<int> started{0};
  std::mutex mutex, startMutex;
  std::condition_variable wake;
};

//===----------------------------------------------------------------------===//
// The entry points
//===----------------------------------------------------------------------===//

void forkCall(void * /*loc*/, int32_t argc, void *microtask, void **args) {
  Pool::get().fork(microtask, argc, args);
}

void forkCallIf(void * /*loc*/, int32_t argc, void *microtask, int32_t cond,
                void *args) {
  void *list[1] = {args};
  if (cond)
    Pool::get().fork(microtask, argc ? 1 : 0, list);
  else
    runShare(microtask, 0, 1, argc ? 1 : 0, list);
}

int32_t globalThreadNum(void * /*loc*/) { return current.tid; }

/// A static share of [*lower, *upper] (inclusive) for the running logical
/// thread, as an OpenMP runtime computes it: contiguous and balanced
/// (schedule 34), or round-robin chunks of `chunk` (33).
template <typename T, typename S>
void staticInit(void * /*loc*/, int32_t /*gtid*/, int32_t schedule,
                int32_t *last, T *lower, T *upper, S *stride, S incr, S chunk) {
  int64_t team = current.team, tid = current.tid;
  T lo = *lower, up = *upper;
  uint64_t trip;
  if (incr > 0)
    trip = up < lo ? 0 : static_cast<uint64_t>(up - lo) / incr + 1;
  else
    trip = lo < up ? 0 : static_cast<uint64_t>(lo - up) / -incr + 1;
  if (last)
    *last = 1;
  *stride = static_cast<S>(trip);
  if (team == 1 || trip == 0)
    return;
  if (schedule == 33 && chunk > 0) { // static, chunked: round robin
    *lower = lo + static_cast<T>(tid * chunk * incr);
    *upper = *lower + static_cast<T>((chunk - 1) * incr);
    *stride = static_cast<S>(chunk * incr * team);
    if (last)
      *last = (trip - 1) / chunk % team == static_cast<uint64_t>(tid);
    return;
  }
  if (schedule != 34 && schedule != 33)
    fatal("a parallel loop asks for a schedule other than static");
  if (trip < static_cast<uint64_t>(team)) {
    if (static_cast<uint64_t>(tid) < trip) {
      *lower = *upper = lo + static_cast<T>(tid * incr);
    } else {
      *lower = up + static_cast<T>(incr); // no iterations
    }
    if (last)
      *last = static_cast<uint64_t>(tid) == trip - 1;
    return;
  }
  uint64_t small = trip / team, extras = trip % team;
  uint64_t first = tid * small + std::min<uint64_t>(tid, extras);
  uint64_t count = small + (static_cast<uint64_t>(tid) < extras ? 1 : 0);
  *lower = lo + static_cast<T>(first * incr);
  *upper = *lower + static_cast<T>((count - 1) * incr);
  if (last)
    *last = tid == team - 1;
}

void staticFini(void * /*loc*/, int32_t /*gtid*/) {}

void barrier(void * /*loc*/, int32_t /*gtid*/) {
  // The code's loops end their regions (nowait): a barrier inside a region
  // of several threads would need them all running at once.
  if (current.team > 1)
    fatal("a parallel region waits at a barrier");
}

thread_local std::vector<Share> serialized;

void serializedParallel(void * /*loc*/, int32_t /*gtid*/) {
  serialized.push_back(current);
  current = Share{0, 1, true};
}

void endSerializedParallel(void * /*loc*/, int32_t /*gtid*/) {
  if (serialized.empty())
    return;
  current = serialized.back();
  serialized.pop_back();
}

} // namespace

const std::vector<RuntimeFunction> &threads::runtimeFunctions() {
  auto address = [](auto *fn) { return reinterpret_cast<void *>(fn); };
  static const std::vector<RuntimeFunction> functions = {
      {kForkFunction, address(&forkCall)},
      {"__kmpc_fork_call_if", address(&forkCallIf)},
      {"__kmpc_global_thread_num", address(&globalThreadNum)},
      {"__kmpc_for_static_init_4", address(&staticInit<int32_t, int32_t>)},
      {"__kmpc_for_static_init_4u", address(&staticInit<uint32_t, int32_t>)},
      {"__kmpc_for_static_init_8", address(&staticInit<int64_t, int64_t>)},
      {"__kmpc_for_static_init_8u", address(&staticInit<uint64_t, int64_t>)},
      {"__kmpc_for_static_fini", address(&staticFini)},
      {"__kmpc_barrier", address(&barrier)},
      {"__kmpc_serialized_parallel", address(&serializedParallel)},
      {"__kmpc_end_serialized_parallel", address(&endSerializedParallel)},
  };
  return functions;
}

void threads::abandonRegions() {
  Pool::get().abandon();
  serialized.clear();
  current = Share{};
}

int threads::callerThreads() {
  return callerCount > 0 ? callerCount : defaultThreads();
}

void threads::setCallerThreads(int threads) {
  callerCount = std::max(0, threads);
}
