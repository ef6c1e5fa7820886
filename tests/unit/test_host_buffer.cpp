// ThreadBuffer's in-place producer path (reserve, fill, commit: collector/host_buffer.h) on one thread:
// order across blocks, nothing visible before commit, the pool's cap. The concurrent producer/drainer
// case is tests/stress/test_stress.cpp (run under TSan in CI).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "collector/host_buffer.h"

namespace {
uint64_t drainIds(kc::ThreadBuffer& buf) {
  std::vector<uint64_t> ids;
  buf.drain([&](const kc::HostEvent& e) { ids.push_back(e.launch.correlation_id); });
  uint64_t expect = ids.empty() ? 0 : ids.front();
  for (uint64_t id : ids) {
    CHECK(id == expect);  // in order, none twice
    ++expect;
  }
  return ids.size();
}

void put(kc::ThreadBuffer& buf, uint64_t id) {
  kc::HostEvent* e = buf.reserve();
  REQUIRE(e != nullptr);
  e->kind = kc::HostEvent::kLaunch;
  e->reserved = 0;
  e->launch = kc::LaunchBody{};
  e->launch.correlation_id = id;
  buf.commit();
}
}  // namespace

TEST_CASE("ThreadBuffer reserve/commit: events in order across blocks; a reserved slot is not drained before commit") {
  kc::BlockPool pool(8);
  kc::ThreadBuffer buf(&pool, 1);
  const uint64_t n = 3 * kc::kEventsPerBlock + 17;
  for (uint64_t i = 1; i <= n; ++i) put(buf, i);
  CHECK(drainIds(buf) == n);

  kc::HostEvent* pending = buf.reserve();
  REQUIRE(pending != nullptr);
  pending->kind = kc::HostEvent::kLaunch;
  pending->launch = kc::LaunchBody{};
  pending->launch.correlation_id = n + 1;
  CHECK(drainIds(buf) == 0);  // reserved, not committed: the writer does not see it
  buf.commit();
  size_t seen = 0;
  buf.drain([&](const kc::HostEvent& e) {
    CHECK(e.launch.correlation_id == n + 1);
    ++seen;
  });
  CHECK(seen == 1);
  CHECK(buf.dropped() == 0);
  buf.releaseAll();
}

TEST_CASE("ThreadBuffer reserve at the pool's cap: nullptr and one drop counted, append the same") {
  kc::BlockPool pool(1);
  kc::ThreadBuffer buf(&pool, 1);
  for (uint64_t i = 1; i <= kc::kEventsPerBlock; ++i) put(buf, i);
  CHECK(buf.reserve() == nullptr);
  CHECK(buf.dropped() == 1);
  kc::HostEvent e{};
  e.kind = kc::HostEvent::kLaunch;
  CHECK_FALSE(buf.append(e));
  CHECK(buf.dropped() == 2);
  CHECK(drainIds(buf) == kc::kEventsPerBlock);
  buf.releaseAll();
}

TEST_CASE("ThreadBuffer drain up to a count: bounded batches in order, across blocks; later events wait") {
  kc::BlockPool pool(8);
  kc::ThreadBuffer buf(&pool, 1);
  const uint64_t n = 2 * kc::kEventsPerBlock + 300;
  for (uint64_t i = 1; i <= n; ++i) put(buf, i);
  const uint64_t until = buf.published();
  CHECK(until == n);
  for (uint64_t i = n + 1; i <= n + 50; ++i) put(buf, i);  // published after the drain began: not taken
  std::vector<uint64_t> ids;
  size_t batches = 0;
  while (buf.drained() < until) {
    const size_t got = buf.drain([&](const kc::HostEvent& e) { ids.push_back(e.launch.correlation_id); },
                                 std::min(until, buf.drained() + 700));
    REQUIRE(got > 0);
    CHECK(got <= 700);
    ++batches;
  }
  CHECK(batches == (n + 699) / 700);
  REQUIRE(ids.size() == n);
  for (uint64_t i = 0; i < n; ++i) CHECK(ids[i] == i + 1);
  CHECK(buf.drained() == n);
  CHECK(drainIds(buf) == 50);  // the rest, from n + 1 on
  CHECK(pool.blocksAllocated() <= 3);
  buf.releaseAll();
}
