// Summary mode's snapshot schedule (inject/session.h, nextSnapshotDue): snapshot k is due at
// start + k x interval, whenever the previous one was taken.
#include <doctest/doctest.h>

#include <cstdint>

#include "inject/session.h"

using kc::inject::nextSnapshotDue;

TEST_CASE("snapshot schedule: due times stay on start + k x interval") {
  const uint64_t start = 1'000'000'000, iv = 500'000'000;
  CHECK(nextSnapshotDue(start, iv, start) == start + iv);  // the first one, at activation
  CHECK(nextSnapshotDue(start, iv, start + iv - 1) == start + iv);
  // Taken exactly on time or late: the next is still one point further on the schedule, not an interval
  // after the time it was taken (a wake 99 ms late does not push every later snapshot by 99 ms).
  CHECK(nextSnapshotDue(start, iv, start + iv) == start + 2 * iv);
  CHECK(nextSnapshotDue(start, iv, start + iv + 99'000'000) == start + 2 * iv);
  // Taken after several due times passed (an interval shorter than the writer's wake): the next point
  // after now, one snapshot for all of them.
  CHECK(nextSnapshotDue(start, 10'000'000, start + 105'000'000) == start + 110'000'000);
  CHECK(nextSnapshotDue(start, iv, start + 7 * iv + 1) == start + 8 * iv);
  // Many snapshots, each 100 ms late: no drift.
  uint64_t due = nextSnapshotDue(start, iv, start);
  for (int k = 1; k <= 1000; ++k) {
    CHECK(due == start + uint64_t(k) * iv);
    due = nextSnapshotDue(start, iv, due + 100'000'000);
  }
}

TEST_CASE("snapshot schedule: edge values") {
  CHECK(nextSnapshotDue(100, 0, 100) == 101);  // interval 0 counts as 1 ns
  CHECK(nextSnapshotDue(100, 10, 50) == 110);  // a clock read before start: the first due time
  CHECK(nextSnapshotDue(0, UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1) == UINT64_MAX);  // saturates
  CHECK(nextSnapshotDue(UINT64_MAX - 5, 10, UINT64_MAX - 5) == UINT64_MAX);
}
