//===- MemoryPool.cpp - A persistent arena for compiled code's buffers ----===//

#include "cuvil/Runtime/MemoryPool.h"
#include "cuvil/Runtime/MemRefCall.h"

#include <algorithm>
#include <cstdlib>

using namespace cuvil;

namespace {
constexpr size_t kAlignment = 64;
thread_local MemoryPool *activePool = nullptr;

size_t alignUp(size_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}
} // namespace

MemoryPool::MemoryPool(size_t bytes, Growth growth) : policy(growth) {
  size = alignUp(bytes);
  // Untouched pages cost no memory: the reservation is virtual until used.
  base = size ? static_cast<char *>(std::aligned_alloc(kAlignment, size))
              : nullptr;
  if (!base)
    size = 0;
}

MemoryPool::~MemoryPool() { std::free(base); }

bool MemoryPool::owns(const void *pointer) const {
  auto *p = static_cast<const char *>(pointer);
  return base && p >= base && p < base + size;
}

void *MemoryPool::allocate(size_t bytes) {
  size_t start = alignUp(offset);
  if (start <= size && bytes <= size - start) {
    offset = start + bytes;
    return base + start;
  }
  overflow += alignUp(bytes);
  if (policy == Growth::Fixed)
    cuvilAllocationFailed(static_cast<int64_t>(bytes)); // unwinds the call
  return nullptr;
}

void MemoryPool::finishCall() {
  ++callCount;
  peak = std::max(peak, alignUp(offset) + overflow);
  if (overflow && policy == Growth::Grow) {
    // Grow once to what this call needed, so the next one fits.
    size_t wanted = alignUp(alignUp(offset) + overflow);
    if (auto *grown =
            static_cast<char *>(std::aligned_alloc(kAlignment, wanted))) {
      std::free(base);
      base = grown;
      size = wanted;
      ++growCount;
    }
  }
  if (overflow)
    ++overflowCount;
  offset = 0;
  overflow = 0;
}

MemoryPool::Usage MemoryPool::usage() {
  std::lock_guard<std::mutex> lock(inUse);
  return Usage{size, peak, callCount, overflowCount, growCount};
}

size_t MemoryPool::release() {
  std::lock_guard<std::mutex> lock(inUse);
  if (policy == Growth::Fixed)
    return 0; // its size is the budget it was made with
  size_t released = size;
  std::free(base);
  base = nullptr;
  size = 0;
  return released;
}

MemoryPool::Scope::Scope(MemoryPool *pool) : previous(activePool) {
  if (pool && pool->inUse.try_lock()) {
    this->pool = pool;
    activePool = pool;
  } else {
    activePool = nullptr; // another call holds it: this one uses malloc
  }
}

MemoryPool::Scope::~Scope() {
  if (pool) {
    pool->finishCall();
    pool->inUse.unlock();
  }
  activePool = previous;
}

extern "C" void *cuvilPoolAllocate(int64_t bytes) {
  return activePool && bytes >= 0
             ? activePool->allocate(static_cast<size_t>(bytes))
             : nullptr;
}

extern "C" int32_t cuvilPoolRelease(void *pointer) {
  return activePool && activePool->owns(pointer) ? 1 : 0;
}
