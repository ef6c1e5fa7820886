// ThreadBuffer's in-place producer path (reserve, fill, commit: collector/host_buffer.h) on one thread:
// order across blocks, nothing visible before commit, the pool's cap. The concurrent producer/drainer
// case is tests/stress/test_stress.cpp (run under TSan in CI).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
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
  kc::LaunchSlot* e = buf.reserveLaunch();
  REQUIRE(e != nullptr);
  *e = kc::LaunchSlot{};
  e->tag = kc::LaunchSlot::kTagLaunch;
  e->correlation_id = static_cast<uint32_t>(id);
  buf.commit();
}
}  // namespace

TEST_CASE("ThreadBuffer reserve/commit: events in order across blocks; a reserved slot is not drained before commit") {
  kc::BlockPool pool(8);
  kc::ThreadBuffer buf(&pool, 1);
  const uint64_t n = 3 * kc::kSlotsPerBlock + 17;
  for (uint64_t i = 1; i <= n; ++i) put(buf, i);
  CHECK(drainIds(buf) == n);

  kc::HostEvent* pending = buf.reserveEvent();
  REQUIRE(pending != nullptr);
  *pending = kc::HostEvent{};
  pending->kind = kc::HostEvent::kLaunch;
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
  for (uint64_t i = 1; i <= kc::kSlotsPerBlock; ++i) put(buf, i);
  CHECK(buf.reserveLaunch() == nullptr);
  CHECK(buf.dropped() == 1);
  kc::HostEvent e{};
  e.kind = kc::HostEvent::kLaunch;
  CHECK_FALSE(buf.append(e));
  CHECK(buf.dropped() == 2);
  CHECK(drainIds(buf) == kc::kSlotsPerBlock);
  buf.releaseAll();
}

TEST_CASE("ThreadBuffer drain up to a count: bounded batches in order, across blocks; later events wait") {
  kc::BlockPool pool(8);
  kc::ThreadBuffer buf(&pool, 1);
  const uint64_t n = 2 * kc::kSlotsPerBlock + 300;
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

namespace {
kc::HostEvent launch(uint64_t corr, uint32_t thread, uint64_t enter, uint64_t exit) {
  kc::HostEvent e{};
  e.kind = kc::HostEvent::kLaunch;
  e.reserved = static_cast<uint32_t>(corr % 7);  // kernel name id (KCOUNT_GPU_TIME=0)
  kc::LaunchBody& b = e.launch;
  b.correlation_id = corr;
  b.enter_ns = enter;
  b.exit_ns = exit;
  b.scope_id = static_cast<uint32_t>(corr % 5);
  b.thread_id = thread;
  b.api_id = 11;
  b.cbid = static_cast<uint32_t>(corr % 1000);
  b.domain = static_cast<uint8_t>(corr % 2 == 0 ? kc::ApiDomain::kRuntime : kc::ApiDomain::kDriver);
  b.is_graph_launch = static_cast<uint8_t>(corr % 3 == 0);
  b.flags = static_cast<uint8_t>(corr % 8);  // captured, memory operation, untimed
  return e;
}

kc::HostEvent range(uint32_t scope, uint64_t begin, uint64_t end) {
  kc::HostEvent e{};
  e.kind = kc::HostEvent::kRange;
  e.range = kc::RangeBody{begin, end, scope, 1, 1, 0};
  return e;
}

// The fields the writer reads, by kind (the union's unused bytes are not part of an event).
bool sameEvent(const kc::HostEvent& a, const kc::HostEvent& b) {
  if (a.kind != b.kind || a.reserved != b.reserved) return false;
  if (a.kind == kc::HostEvent::kLaunch) return std::memcmp(&a.launch, &b.launch, sizeof a.launch) == 0;
  if (a.kind == kc::HostEvent::kRange) return std::memcmp(&a.range, &b.range, sizeof a.range) == 0;
  return std::memcmp(&a.graph_node, &b.graph_node, sizeof a.graph_node) == 0;
}
}  // namespace

TEST_CASE("LaunchSlot: a launch packs into 32 bytes and unpacks to the same LaunchBody; what does not fit is refused") {
  kc::LaunchSlot s{};
  for (uint64_t corr = 1; corr < 50; ++corr) {
    const kc::HostEvent e = launch(corr, 42, 1000 * corr, 1000 * corr + 777);
    REQUIRE(s.pack(e, 42));
    CHECK(sameEvent(s.unpack(42), e));
  }
  const kc::HostEvent untimed = launch(4, 42, 0, 0);  // kLaunchUntimed: no times
  REQUIRE(s.pack(untimed, 42));
  CHECK(sameEvent(s.unpack(42), untimed));
  CHECK_FALSE(s.pack(launch(1, 43, 10, 20), 42));                          // another thread's launch
  CHECK_FALSE(s.pack(launch(1ull << 32, 42, 10, 20), 42));                 // a correlation id past 32 bits
  CHECK_FALSE(s.pack(launch(1, 42, 10, 10 + (1ull << 32)), 42));           // a call past 2^32 ticks
  CHECK(s.pack(launch(1, 42, 10, 10 + uint64_t{UINT32_MAX}), 42));         // the longest that fits
  kc::HostEvent big_cbid = launch(1, 42, 10, 20);
  big_cbid.launch.cbid = 70000;
  CHECK_FALSE(s.pack(big_cbid, 42));
}

TEST_CASE("ThreadBuffer mixes one-slot launches and two-slot events: same events back, in order, across padded block ends") {
  kc::BlockPool pool(16);
  kc::ThreadBuffer buf(&pool, 42);
  std::vector<kc::HostEvent> sent;
  uint64_t t = 1000;
  // An odd number of launches before each range leaves one slot free at some block ends: the range goes to
  // the next block and the slot is padded.
  for (uint64_t i = 1; sent.size() < 3 * kc::kSlotsPerBlock; ++i) {
    for (uint64_t k = 0; k < 5; ++k, ++i) {
      // Every 97th launch cannot be packed (a call of 2^33 ticks, or another thread's): the wide form.
      const bool wide = i % 97 == 0;
      sent.push_back(launch(i, wide && i % 2 == 0 ? 7 : 42, t, t + (wide && i % 2 == 1 ? (1ull << 33) : 500)));
      t += 1000;
    }
    sent.push_back(range(static_cast<uint32_t>(i), t, t + 10));
  }
  for (const kc::HostEvent& e : sent) REQUIRE(buf.append(e));
  CHECK(buf.published() == sent.size());
  std::vector<kc::HostEvent> got;
  while (buf.drained() < buf.published()) {  // odd batches: some end right before a pad
    const size_t n = buf.drain([&](const kc::HostEvent& e) { got.push_back(e); }, buf.drained() + 333);
    REQUIRE(n > 0);
  }
  REQUIRE(got.size() == sent.size());
  size_t mismatched = 0;
  for (size_t i = 0; i < sent.size(); ++i) mismatched += sameEvent(got[i], sent[i]) ? 0 : 1;
  CHECK(mismatched == 0);
  // All appended before the first drain: 5 launches (mostly one slot each) and a range (two) per group take
  // 4 blocks; every event in the two-slot form would take 6.
  CHECK(pool.blocksAllocated() == 4);
  buf.releaseAll();
}

TEST_CASE("ThreadBuffer block: 2048 launches or 1024 ranges; a range with one slot left takes a new block") {
  kc::BlockPool pool(2);
  kc::ThreadBuffer buf(&pool, 42);
  for (uint64_t i = 1; i < kc::kSlotsPerBlock; ++i) REQUIRE(buf.append(launch(i, 42, 10 * i, 10 * i + 5)));
  CHECK(pool.blocksAllocated() == 1);
  // One slot left: the signal-handler path refuses a two-slot event rather than take a block.
  CHECK_FALSE(buf.appendNoGrow(range(1, 1, 2)));
  CHECK(buf.dropped() == 1);
  REQUIRE(buf.append(range(9, 100, 200)));  // pads the last slot, takes the second block
  CHECK(pool.blocksAllocated() == 2);
  size_t n = 0, ranges = 0;
  buf.drain([&](const kc::HostEvent& e) {
    ++n;
    ranges += e.kind == kc::HostEvent::kRange ? 1 : 0;
  });
  CHECK(n == kc::kSlotsPerBlock);  // 2047 launches and the range; the pad is not an event
  CHECK(ranges == 1);
  // The first block went back to the pool: the buffer grows into it at the cap of 2.
  for (uint64_t i = 0; i < kc::kSlotsPerBlock / kc::kWideSlots; ++i) REQUIRE(buf.append(range(1, i, i + 1)));
  CHECK(pool.blocksAllocated() == 2);
  CHECK(buf.dropped() == 1);
  buf.releaseAll();
}

TEST_CASE("ThreadBuffer drain: a batch that ends right before a block's pad finishes the block") {
  kc::BlockPool pool(2);
  kc::ThreadBuffer buf(&pool, 42);
  for (uint64_t i = 1; i < kc::kSlotsPerBlock; ++i) REQUIRE(buf.append(launch(i, 42, 10 * i, 10 * i + 5)));
  REQUIRE(buf.append(range(9, 100, 200)));  // pads the first block's last slot, takes the second block
  // The batch is the 2047 launches: it ends at the pad, so the first block goes back to the pool now.
  CHECK(buf.drain([](const kc::HostEvent&) {}, kc::kSlotsPerBlock - 1) == kc::kSlotsPerBlock - 1);
  // Fill the second block (the range and 1023 more), then one more range: at the cap of 2 it goes to the
  // first block, recycled, with no drop.
  for (uint64_t i = 1; i < kc::kSlotsPerBlock / kc::kWideSlots; ++i) REQUIRE(buf.append(range(1, i, i + 1)));
  REQUIRE(buf.append(range(2, 1, 2)));
  CHECK(buf.dropped() == 0);
  CHECK(pool.blocksAllocated() == 2);
  std::vector<uint32_t> scopes;
  buf.drain([&](const kc::HostEvent& e) { scopes.push_back(e.range.scope_id); });
  REQUIRE(scopes.size() == kc::kSlotsPerBlock / kc::kWideSlots + 1);
  CHECK(scopes.front() == 9);
  CHECK(scopes.back() == 2);
  buf.releaseAll();
}
