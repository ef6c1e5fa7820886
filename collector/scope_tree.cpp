#include "collector/scope_tree.h"

namespace kc {

ScopeTree::ScopeTree(uint32_t overflow_name_id, uint32_t max_scopes) : max_scopes_(max_scopes) {
  nodes_.push_back(ScopeBody{kRootScope, kRootScope, kNoString, kNoString});
  nodes_.push_back(ScopeBody{overflowScope(), kRootScope, overflow_name_id, kNoString});
}

uint32_t ScopeTree::child(uint32_t parent, uint32_t name_id, uint32_t domain_id) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (parent >= nodes_.size()) parent = kRootScope;
    auto [lo, hi] = index_.equal_range(key(parent, name_id));
    for (auto it = lo; it != hi; ++it)
      if (nodes_[it->second].domain_id == domain_id) return it->second;
    if (nodes_.size() >= max_scopes_) return overflowScope();
    const auto id = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(ScopeBody{id, parent, name_id, domain_id});
    index_.emplace(key(parent, name_id), id);
    return id;
  } catch (...) {
    return overflowScope();
  }
}

uint32_t ScopeTree::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(nodes_.size());
}

ScopeBody ScopeTree::node(uint32_t scope_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return scope_id < nodes_.size() ? nodes_[scope_id] : nodes_[kRootScope];
}

}  // namespace kc
