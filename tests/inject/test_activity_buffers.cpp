// The activity buffer pool without CUPTI: buffers owned, capped, recycled; refusals counted; a buffer the
// pool never handed out is left alone.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>

#include "inject/activity_buffers.h"

using kc::inject::ActivityBufferPool;

TEST_CASE("activity buffer pool: capped at max_buffers, completed buffers recycled, refusals counted") {
  ActivityBufferPool pool(4096, 2);
  CHECK(pool.bufferBytes() == 4096);
  CHECK(pool.maxBuffers() == 2);
  uint8_t* a = pool.take();
  uint8_t* b = pool.take();
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a != b);
  CHECK(reinterpret_cast<uintptr_t>(a) % 8 == 0);
  CHECK(pool.allocated() == 2);
  CHECK(pool.take() == nullptr);  // the cap: no third buffer
  CHECK(pool.refused() == 1);
  a[4095] = 1;  // the whole size is usable
  CHECK(pool.give(a));
  CHECK(pool.take() == a);  // recycled, not allocated anew
  CHECK(pool.allocated() == 2);
  CHECK(pool.take() == nullptr);
  CHECK(pool.refused() == 2);
  alignas(8) static uint8_t foreign[64];
  CHECK_FALSE(pool.give(foreign));  // another CUPTI client's buffer: not taken into the pool
  CHECK_FALSE(pool.give(nullptr));
  CHECK(pool.give(a));
  CHECK(pool.give(b));
  const std::set<uint8_t*> again{pool.take(), pool.take()};
  CHECK(again == std::set<uint8_t*>{a, b});
  CHECK(pool.allocated() == 2);
}
