// libFuzzer target: the whole read path of `kcount` on arbitrary bytes. The input is decoded twice:
// as given (so damage detection, resynchronization and the file header are fuzzed) and with the
// checksum of every chunk it can walk recomputed (so mutations reach the record decoder behind the
// XXH3 check instead of stopping at "checksum mismatch"; packed chunks stored without compression take
// mutations straight into the compact batch decoder). Each decoded log goes through the correlation
// join, the streaming reader and join, and every report builder of the tool (JSON, CSV, tables, check). Built by
// tests/fuzz/run_fuzz.sh with clang's -fsanitize=fuzzer,address,undefined; the same function is
// linked into kc_fuzz_replay (tests/fuzz/replay_main.cpp), which ctest runs on
// tests/data/fuzz-regressions/ without libFuzzer.
#include <xxhash.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_format.h"
#include "collector/log_reader.h"
#include "collector/stream_summary.h"
#include "tools/check_output.h"
#include "tools/json_writer.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/series.h"
#include "tools/summary_output.h"

namespace {

/// Aborts (a finding for libFuzzer, a failure for the replay test) when an invariant of the reader or
/// the analysis does not hold.
void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void exercise(std::span<const uint8_t> bytes) {
  kc::LoadedLog l;
  l.path = "fuzz-input.kcount";
  l.data = kc::readLog(bytes);
  kc::compactScopes(l.data);  // as the tools load a log (a corrupt id near kMaxIds would size every table)
  l.summary = kc::summarize(l.data);
  const kc::LogData& d = l.data;

  require(d.file_bytes == bytes.size(), "file_bytes is the input size");
  require(!d.strings.empty() && d.strings[0].empty(), "string id 0 is the empty string");
  require(!d.scopes.empty(), "scope 0 (the root) exists");
  // Ids are the run's and sparse in a rotated part, so the reader bounds them by kMaxIds, not by the
  // file's bytes: the tables never grow past that, whatever an id field says.
  require(d.strings.size() <= kc::kMaxIds, "string table bounded by kMaxIds");
  require(d.scopes.size() <= kc::kMaxIds, "scope table bounded by kMaxIds");
  require(l.summary.children_order.size() == std::max<size_t>(d.scopes.size(), 1),
          "every scope appears once in the repaired tree");
  uint64_t excl_kernels = 0;
  for (const auto& r : l.summary.exclusive) excl_kernels += r.kernels;
  require(l.summary.inclusive[kc::kRootScope].kernels == excl_kernels, "root inclusive holds all kernels");
  if (d.summary_mode && !d.snapshots.empty()) {
    // Summary-mode log: the numbers are those of the last complete snapshot, as written.
    require(l.summary.snapshot == static_cast<int64_t>(d.snapshots.size()) - 1, "last complete snapshot used");
    require(l.summary.kernels == d.snapshots.back().begin.kernels, "snapshot kernels");
    require(l.summary.launches == d.snapshots.back().begin.launches, "snapshot launches");
    for (const auto& s : d.snapshots)
      require(s.scopes.size() == s.begin.scope_rows && s.kernels.size() == s.begin.kernel_rows,
              "a complete snapshot has its announced rows");
  } else {
    require(l.summary.snapshot == -1, "no snapshot used without snapshots");
    require(l.summary.launches <= d.launches.size(), "summary launches");
    require(l.summary.kernels == d.kernels.size(), "summary kernels");
    require(l.summary.unmatched_kernels <= d.kernels.size(), "unmatched kernels");
    require(excl_kernels + l.summary.unmatched_kernels == d.kernels.size(), "every kernel credited once");
  }
  require(d.intact() || !d.issues.empty(), "damage is always reported");
  uint64_t segment_kernels = 0;
  for (const auto& t : kc::segmentTotals(d)) segment_kernels += t.kernels;
  require(segment_kernels <= d.kernels.size(), "each kernel in at most one segment");
  for (size_t i = 0; i < d.segments.size() && i < 4; ++i) {
    const kc::LogData part = kc::selectSegment(d, i);
    require(part.kernels.size() <= d.kernels.size() && part.launches.size() <= d.launches.size(), "segment subset");
    (void)kc::summarize(part);
  }

  // The streaming reader and join (kcount summary/check) on the same bytes: the same decoding, and the
  // same totals; the per-range split may differ only where the join window is documented to differ.
  const kc::StreamedLog st = kc::summarizeLogBytes(bytes);
  require(st.data.launches.empty() && st.data.kernels.empty(), "streaming keeps no records");
  require(st.data.kernel_records == d.kernels.size() && st.data.launch_records == d.launches.size() &&
              st.data.range_records == d.ranges.size(),
          "streaming decodes the same records");
  require(st.data.issues.size() == d.issues.size() && st.data.intact() == d.intact(), "streaming reports the same issues");
  require(st.summary.kernels == l.summary.kernels && st.summary.launches == l.summary.launches &&
              st.summary.kernel_gpu_ns == l.summary.kernel_gpu_ns && st.summary.mem_ops == l.summary.mem_ops,
          "streaming totals");
  if (!d.summary_mode) {  // a summary-mode log's numbers are its snapshot's, as written (checked above)
    uint64_t st_kernels = 0;
    for (const auto& r : st.summary.exclusive) st_kernels += r.kernels;
    require(st_kernels + st.summary.unmatched_kernels == st.summary.kernels, "streaming: every kernel credited once");
  }
  require(st.summary.children_order == l.summary.children_order, "streaming: same range tree");
  // Per-window totals from the streaming passes: the same windows and record counts as segmentTotals();
  // the unmatched split follows the join (it may differ where an id is reused, never exceed the kernels).
  const auto windows = kc::segmentTotals(d);
  const auto streamed = kc::summarizeLogBytes(bytes, {}, kc::kDefaultJoinWindow, true).segments;
  require(streamed.size() == windows.size(), "streaming: one total per window");
  for (size_t i = 0; i < windows.size() && i < streamed.size(); ++i) {
    const kc::SegmentTotals &a = windows[i], &b = streamed[i];
    require(a.launches == b.launches && a.kernels == b.kernels && a.gpu_ns == b.gpu_ns && a.ranges == b.ranges &&
                a.mem_ops == b.mem_ops && a.reason == b.reason && a.end_reason == b.end_reason,
            "streaming: the same records per window");
    require(b.unmatched_kernels <= b.kernels, "streaming: unmatched kernels of a window are its kernels");
  }

  std::ostringstream out;
  out << kc::dumpJson(kc::summaryJson(l));
  out << kc::dumpJson(kc::kernelsJson({l}));
  for (auto view : {kc::SummaryView::kTree, kc::SummaryView::kInclusive, kc::SummaryView::kInnermost}) {
    kc::SummaryOptions opt;
    opt.view = view;
    opt.full_names = view == kc::SummaryView::kInnermost;
    kc::printSummaryTable(out, l, opt);
    kc::printSummaryCsv(out, l, true, opt);
  }
  kc::printKernelsTable(out, {l}, false);
  kc::printKernelsCsv(out, {l}, true);
  out << kc::dumpJson(kc::seriesJson({l}));
  kc::printSeries(out, l);
  const int rc = kc::printCheck(out, l);
  // 2 exactly for a log that is not intact; 0 only for a complete one (1 also covers lost records).
  require((rc == 2) == !d.intact() && (rc != 0 || d.complete), "check exit status");
}

/// Copy of bytes in which every chunk header (plain or packed) found by walking from the file header has
/// its checksum set to the XXH3 of its payload or stored bytes (as far as they fit in the input).
std::vector<uint8_t> withChecksumsFixed(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> b(bytes.begin(), bytes.end());
  size_t pos = sizeof(kc::FileHeader);
  while (pos + sizeof(kc::ChunkHeader) <= b.size()) {
    uint32_t magic;
    std::memcpy(&magic, b.data() + pos, sizeof(magic));
    if (magic == kc::kPackedChunkMagic && pos + sizeof(kc::PackedChunkHeader) <= b.size()) {
      // Packed chunk (1.2): the checksum covers the stored bytes.
      kc::PackedChunkHeader p;
      std::memcpy(&p, b.data() + pos, sizeof(p));
      const size_t stored_at = pos + sizeof(p);
      const size_t n = std::min<size_t>(p.stored_bytes, b.size() - stored_at);
      p.checksum = XXH3_64bits(b.data() + stored_at, n);
      std::memcpy(b.data() + pos, &p, sizeof(p));
      pos = stored_at + n;
      continue;
    }
    kc::ChunkHeader h;
    std::memcpy(&h, b.data() + pos, sizeof(h));
    const size_t payload_at = pos + sizeof(h);
    const size_t n = std::min<size_t>(h.payload_bytes, b.size() - payload_at);
    h.checksum = XXH3_64bits(b.data() + payload_at, n);
    std::memcpy(b.data() + pos, &h, sizeof(h));
    pos = payload_at + n;
  }
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  exercise(bytes);
  const std::vector<uint8_t> fixed = withChecksumsFixed(bytes);
  if (fixed != std::vector<uint8_t>(bytes.begin(), bytes.end())) exercise(fixed);
  return 0;
}
