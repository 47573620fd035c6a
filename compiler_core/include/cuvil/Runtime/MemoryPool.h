//===- MemoryPool.h - A persistent arena for compiled code's buffers -*- C++
//-*-===//
//
// Compiled code allocates its intermediates (the planned arena and any
// buffer the plan leaves) through `_mlir_memref_to_llvm_alloc`, which asks
// the pool active on the calling thread first (kPoolAllocateSymbol) and
// falls back to malloc. A MemoryPool is allocated once and reused by every
// call made inside its Scope, so a call allocates nothing in the steady
// state. What does not fit either comes from malloc and makes the pool grow
// to fit next time (Growth::Grow), or fails the call with the allocation
// failure the caller reports as a MemoryError (Growth::Fixed).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_MEMORYPOOL_H
#define CUVIL_RUNTIME_MEMORYPOOL_H

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace cuvil {

/// The globals compiled code calls through (set in every library that
/// defines them): allocate from the active pool (null: use malloc), and
/// release (true when the pointer was the pool's, so not to be freed).
constexpr const char *kPoolAllocateSymbol = "cuvil_pool_allocate_hook";
constexpr const char *kPoolReleaseSymbol = "cuvil_pool_release_hook";
extern "C" void *cuvilPoolAllocate(int64_t bytes);
extern "C" int32_t cuvilPoolRelease(void *pointer);

class MemoryPool {
public:
  enum class Growth { Grow, Fixed };

  /// Reserves `bytes` (rounded up to 64) now.
  MemoryPool(size_t bytes, Growth growth);
  ~MemoryPool();
  MemoryPool(const MemoryPool &) = delete;
  MemoryPool &operator=(const MemoryPool &) = delete;

  size_t capacity() const { return size; }
  Growth growth() const { return policy; }
  /// The most bytes one call took from the pool, and beyond it.
  size_t peakBytes() const { return peak; }
  uint64_t calls() const { return callCount; }
  /// Calls that needed more than the pool held, and times it grew.
  uint64_t overflows() const { return overflowCount; }
  uint64_t grows() const { return growCount; }

  /// All of the above at once, read when no call holds the pool (waits for
  /// one that does).
  struct Usage {
    size_t capacity = 0, peakBytes = 0;
    uint64_t calls = 0, overflows = 0, grows = 0;
  };
  Usage usage();
  /// Gives the reserved memory of a growing pool back (it grows again on the
  /// next call that needs it; a fixed pool keeps its budget); the bytes
  /// released. Waits for a call using it.
  size_t release();

  /// Makes `pool` the one compiled code on this thread allocates from for
  /// the scope's life, unless another call is using it (then that code uses
  /// malloc). At the end the pool is empty again, grown if it overflowed.
  class Scope {
  public:
    explicit Scope(MemoryPool *pool);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    MemoryPool *pool = nullptr;
    MemoryPool *previous = nullptr;
  };

  /// For the hooks: `bytes` from the pool, or null (then malloc) when it
  /// does not fit a growing pool; a fixed pool fails the call instead.
  void *allocate(size_t bytes);
  bool owns(const void *pointer) const;

private:
  void finishCall();

  char *base = nullptr;
  size_t size = 0;
  Growth policy;
  size_t offset = 0;   ///< bytes in use in this call
  size_t overflow = 0; ///< bytes this call took beyond the pool
  size_t peak = 0;
  uint64_t callCount = 0, overflowCount = 0, growCount = 0;
  std::mutex inUse;
};

} // namespace cuvil

#endif // CUVIL_RUNTIME_MEMORYPOOL_H
