// Interned strings: kernel names, range messages, domain and API names become small integer ids.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "collector/log_format.h"

namespace kc {

/// Maps strings to dense ids 1, 2, 3, ... (0 is the empty string). Thread-safe: every call takes one
/// internal mutex (interning is off the launch hot path: kernel names are interned on CUPTI's buffer
/// thread, range names behind a per-thread cache). Strings are never removed; their storage is stable,
/// so a const std::string* returned by lookup() stays valid for the table's lifetime.
/// Capacity: at most max_strings ids and max_bytes bytes; past that intern() returns overflowId(), whose
/// text is "(string table full)", and counts the refusal.
class StringTable {
 public:
  explicit StringTable(uint32_t max_strings = kMaxIds, uint64_t max_bytes = 256ull << 20);

  /// Id of text, adding it if new. Never throws (returns overflowId() if memory runs out).
  uint32_t intern(std::string_view text) noexcept;
  /// Stored text of an id, or nullptr if out of range.
  const std::string* lookup(uint32_t id) const;
  /// Number of ids handed out, including 0 and the overflow id: valid ids are [0, size()).
  uint32_t size() const;
  static constexpr uint32_t overflowId() { return 1; }  // kOverflowString (collector/log_format.h)
  uint64_t refused() const;

 private:
  mutable std::mutex mutex_;
  std::deque<std::string> storage_;                    // id -> text
  std::unordered_map<std::string_view, uint32_t> ids_; // views into storage_
  uint32_t max_strings_;
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace kc
