#include "inject/activity_buffers.h"

#include <algorithm>
#include <cstdlib>

namespace kc::inject {

ActivityBufferPool::~ActivityBufferPool() {
  for (uint8_t* buffer : owned_) std::free(buffer);
}

uint8_t* ActivityBufferPool::take() noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    uint8_t* buffer = nullptr;
    if (!free_.empty()) {
      buffer = free_.back();
      free_.pop_back();
    } else if (owned_.size() < max_buffers_) {
      buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes_));
      if (buffer != nullptr) owned_.push_back(buffer);
    }
    if (buffer == nullptr) ++refused_;
    return buffer;
  } catch (...) {
    return nullptr;
  }
}

bool ActivityBufferPool::give(uint8_t* buffer) noexcept {
  if (buffer == nullptr) return false;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(owned_.begin(), owned_.end(), buffer) == owned_.end()) return false;
    free_.push_back(buffer);
    return true;
  } catch (...) {
    return true;  // the pool's own buffer (still in owned_), only not recycled
  }
}

uint64_t ActivityBufferPool::allocated() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return owned_.size();
}

uint64_t ActivityBufferPool::refused() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

}  // namespace kc::inject
