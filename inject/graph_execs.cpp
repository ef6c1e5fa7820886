#include "inject/graph_execs.h"

#include <algorithm>

namespace kc::inject {

void GraphExecTable::pushVersion(std::vector<Version>& versions, uint64_t from,
                                 std::shared_ptr<const GraphProgram> p) {
  if (versions.size() >= kMaxVersions) versions.erase(versions.begin());
  versions.push_back(Version{from, std::move(p)});
}

void GraphExecTable::instantiated(uint32_t exec_id, GraphProgram program) {
  auto p = std::make_shared<const GraphProgram>(std::move(program));
  std::lock_guard<std::mutex> lock(mutex_);
  if (execs_.size() >= kMaxExecs && !execs_.contains(exec_id)) return;
  std::vector<Version>& v = execs_[exec_id];
  v.clear();
  v.push_back(Version{0, std::move(p)});
  std::erase_if(doomed_, [&](const auto& d) { return d.first == exec_id; });
}

void GraphExecTable::destroyed(uint32_t exec_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (execs_.contains(exec_id)) doomed_.emplace_back(exec_id, generation_ + 1);
}

uint64_t GraphExecTable::drainBegins() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++generation_;
}

void GraphExecTable::drainEnded(uint64_t drain_generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(doomed_, [&](const auto& d) {
    if (d.second > drain_generation) return false;
    execs_.erase(d.first);
    return true;
  });
}

void GraphExecTable::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  execs_.clear();
  doomed_.clear();
}

std::shared_ptr<const GraphProgram> GraphExecTable::find(uint32_t exec_id, uint64_t correlation_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = execs_.find(exec_id);
  if (it == execs_.end() || it->second.empty()) return nullptr;
  const std::vector<Version>& v = it->second;
  // The newest version made before the launch; the oldest kept when every kept change came after it.
  auto later = std::find_if(v.begin(), v.end(), [&](const Version& x) { return x.from_correlation_id > correlation_id; });
  return later == v.begin() ? v.front().program : std::prev(later)->program;
}

GraphExecTable& graphExecs() noexcept {
  static GraphExecTable* table = new GraphExecTable();  // never destroyed
  return *table;
}

size_t GraphExecTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return execs_.size();
}

}  // namespace kc::inject
