// The range tree: every distinct path of nested NVTX ranges (per domain) gets one scope id.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "collector/log_format.h"

namespace kc {

/// Interns (parent scope, range name, domain) -> scope id. Scope 0 is the root ("no range").
/// Thread-safe through one mutex; callers on hot paths keep a per-thread cache in front of it
/// (see inject/thread_state.h). Capacity: at most max_scopes ids; past that child() returns
/// overflowScope() (a child of the root named by the string id given to the constructor) and counts it.
class ScopeTree {
 public:
  ScopeTree(uint32_t overflow_name_id, uint32_t max_scopes = kMaxIds);

  /// Scope id of the range `name_id` (string id) in `domain_id` opened inside `parent`.
  uint32_t child(uint32_t parent, uint32_t name_id, uint32_t domain_id) noexcept;
  /// Number of scopes, including the root and the overflow scope.
  uint32_t size() const;
  /// Node of a scope id; the root for ids out of range.
  ScopeBody node(uint32_t scope_id) const;
  static constexpr uint32_t overflowScope() { return 1; }  // kOverflowScope (collector/log_format.h)

 private:
  static uint64_t key(uint32_t parent, uint32_t name_id) { return (uint64_t(parent) << 32) | name_id; }
  mutable std::mutex mutex_;
  std::vector<ScopeBody> nodes_;
  // (parent, name) -> candidates; domains differ rarely, so a short vector per key.
  std::unordered_multimap<uint64_t, uint32_t> index_;
  uint32_t max_scopes_;
};

}  // namespace kc
