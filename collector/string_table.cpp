#include "collector/string_table.h"

#include "collector/log_format.h"

namespace kc {

StringTable::StringTable(uint32_t max_strings, uint64_t max_bytes)
    : max_strings_(max_strings), max_bytes_(max_bytes) {
  storage_.emplace_back("");                     // kNoString
  storage_.emplace_back(kStringTableFullText);  // overflowId()
  ids_.emplace(std::string_view(storage_[0]), 0);
  ids_.emplace(std::string_view(storage_[1]), 1);
}

uint32_t StringTable::intern(std::string_view text) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = ids_.find(text); it != ids_.end()) return it->second;
    if (storage_.size() >= max_strings_ || bytes_ + text.size() > max_bytes_) {
      ++refused_;
      return overflowId();
    }
    const auto id = static_cast<uint32_t>(storage_.size());
    storage_.emplace_back(text);
    bytes_ += text.size();
    ids_.emplace(std::string_view(storage_.back()), id);
    return id;
  } catch (...) {
    return overflowId();
  }
}

const std::string* StringTable::lookup(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return id < storage_.size() ? &storage_[id] : nullptr;
}

uint32_t StringTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(storage_.size());
}

uint64_t StringTable::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

}  // namespace kc
