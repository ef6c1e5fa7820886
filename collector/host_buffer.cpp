#include "collector/host_buffer.h"

#include <new>

namespace kc {

BlockPool::~BlockPool() {
  for (auto* b : free_) delete b;
}

HostEventBlock* BlockPool::acquire() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  HostEventBlock* b = nullptr;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
    b->count.store(0, std::memory_order_relaxed);
    b->next.store(nullptr, std::memory_order_relaxed);
    return b;
  }
  if (allocated_ >= max_blocks_) return nullptr;
  b = new (std::nothrow) HostEventBlock();
  if (b != nullptr) ++allocated_;
  return b;
}

void BlockPool::release(HostEventBlock* block) noexcept {
  if (block == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    free_.push_back(block);
  } catch (...) {
    delete block;
    --allocated_;
  }
}

size_t BlockPool::blocksAllocated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

HostEventBlock* ThreadBuffer::grow() noexcept {
  HostEventBlock* nb = pool_->acquire();
  if (nb == nullptr) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (tail_ == nullptr) {
    head_.store(nb, std::memory_order_release);
  } else {
    // The old tail's unused slots (an event wider than what is left) are marked, then the block is full.
    const uint32_t used = tail_->count.load(std::memory_order_relaxed);
    if (used < kSlotsPerBlock) {
      tail_->slots[used][0] = kTagPad;
      tail_->count.store(kSlotsPerBlock, std::memory_order_release);
    }
    tail_->next.store(nb, std::memory_order_release);
  }
  tail_ = nb;
  return nb;
}

void ThreadBuffer::releaseAll() noexcept {
  HostEventBlock* b = head_.load(std::memory_order_acquire);
  while (b != nullptr) {
    HostEventBlock* next = b->next.load(std::memory_order_acquire);
    pool_->release(b);
    b = next;
  }
  head_.store(nullptr, std::memory_order_relaxed);
  tail_ = nullptr;
  consumed_ = 0;
  drained_ = published_.load(std::memory_order_acquire);
}

}  // namespace kc
