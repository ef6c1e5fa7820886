// The judgement of the chunks' sequence numbers once the whole file is read (ChunkDamage::finishWalk(),
// log_damage.h): chunks moved, chunks missing, a damaged number in a chunk header. A number alone is outside
// the checksum, so it is not trusted alone:
// - every number 0..n-1 once, not in file order: chunks moved, none missing (REORDERED);
// - not in file order, each number once, the End chunk's the highest: the numbers below it that no
//   chunk carries are chunks missing (less the damaged chunks skipped, whose numbers are unknown);
// - otherwise chunk by chunk: a jump that the next chunk confirms is chunks missing, where the numbers
//   jumped over are not elsewhere in the file; any other odd number is a damaged header.
// Missing chunks are explained when the log's Stats say bytes were dropped (kept out at KCOUNT_MAX_BYTES,
// or refused by the file); an error when they say none were; without a Stats record (a process that did
// not close its log, or a rotated part before the last) it cannot be told, and is a warning.
#include <algorithm>
#include <iterator>

#include "collector/counted.h"
#include "collector/log_damage.h"

namespace kc::logread {
namespace {

/// For sequence numbers in file order, which chunks are out of write order: out[i] is true for the fewest
/// chunks that, moved back, restore the order (those outside one longest strictly increasing run of
/// numbers, the one that ends in the smallest numbers). O(n log n).
std::vector<bool> outOfOrder(const std::vector<uint32_t>& numbers) {
  std::vector<size_t> tails;                        // tails[k]: index ending the best run of length k + 1
  std::vector<size_t> before(numbers.size(), SIZE_MAX);  // the index before i in its run
  for (size_t i = 0; i < numbers.size(); ++i) {
    const auto it = std::lower_bound(tails.begin(), tails.end(), numbers[i],
                                     [&](size_t t, uint32_t v) { return numbers[t] < v; });
    if (it != tails.begin()) before[i] = *std::prev(it);
    if (it == tails.end()) tails.push_back(i);
    else *it = i;
  }
  std::vector<bool> out(numbers.size(), true);
  for (size_t i = tails.empty() ? SIZE_MAX : tails.back(); i != SIZE_MAX; i = before[i]) out[i] = false;
  return out;
}

}  // namespace

/// What the judgement works from and finds.
struct ChunkDamage::Judgement {
  std::vector<uint32_t> sorted_numbers;  // the intact chunks' numbers, sorted, each once
  bool numbers_unique = true;            // no number carried twice (that would be a damaged header)
  bool stats_kept_out = false;           // the Stats record counts bytes kept out (a size cap, a refusing file)
  // A trace-mode log whose Stats count more records than the file holds, none dropped: records are missing.
  bool stats_short = false;
  std::vector<SequencedChunk> placed;  // intact and damaged chunks with a number, in file order
  size_t hints_used = 0;               // damaged chunks among them
  bool cut_used = false;               // among them, the chunk the file's end cuts
  // Chunks moved: the fewest whose moving back restores the write order (those outside one longest run of
  // increasing numbers in file order), and the first chunk not at its place.
  std::vector<uint32_t> moved_numbers;
  const SequencedChunk* first_moved = nullptr;

  bool carried(uint32_t n) const { return std::binary_search(sorted_numbers.begin(), sorted_numbers.end(), n); }
  /// How many numbers in [from, to) no chunk read carries.
  uint64_t absentIn(int64_t from, int64_t to) const {
    const auto lo = std::lower_bound(sorted_numbers.begin(), sorted_numbers.end(), static_cast<uint64_t>(from),
                                     [](uint32_t a, uint64_t v) { return a < v; });
    const auto hi = std::lower_bound(sorted_numbers.begin(), sorted_numbers.end(), static_cast<uint64_t>(to),
                                     [](uint32_t a, uint64_t v) { return a < v; });
    return static_cast<uint64_t>(to - from) - static_cast<uint64_t>(hi - lo);
  }
};

void ChunkDamage::finishWalk() {
  if (unlisted_.unlisted_chunks > 0)
    error(log_, unlisted_.first_at, unlisted_.first_chunk,
          "... and " + std::to_string(unlisted_.unlisted_chunks) +
              (unlisted_.unlisted_chunks == 1 ? " more damaged chunk" : " more damaged chunks") + " not listed (chunks " +
              std::to_string(unlisted_.first_chunk) + " to " + std::to_string(unlisted_.last_chunk) + ", at bytes " +
              std::to_string(unlisted_.first_at) + " to " + std::to_string(unlisted_.last_at) + "); " +
              std::to_string(log_.chunks_skipped) + " chunks skipped in all");

  Judgement j;
  j.sorted_numbers.reserve(sequenced_.size());
  for (const SequencedChunk& c : sequenced_) j.sorted_numbers.push_back(c.sequence);
  std::sort(j.sorted_numbers.begin(), j.sorted_numbers.end());
  j.numbers_unique = std::adjacent_find(j.sorted_numbers.begin(), j.sorted_numbers.end()) == j.sorted_numbers.end();
  j.sorted_numbers.erase(std::unique(j.sorted_numbers.begin(), j.sorted_numbers.end()), j.sorted_numbers.end());
  j.stats_kept_out = log_.has_stats && log_.stats.bytes_dropped > 0;
  j.stats_short = log_.has_stats && !log_.summary_mode && log_.stats.bytes_dropped == 0 &&
                  log_.rotationPart() == 0 &&  // a rotated log's Stats count the whole run
                  (log_.launch_records < log_.stats.launches || log_.kernel_records < log_.stats.kernels ||
                   log_.range_records < log_.stats.ranges);
  fixEndNumber(j);
  placeDamaged(j);
  auto bySequence = [](const SequencedChunk& x, const SequencedChunk& y) { return x.sequence < y.sequence; };
  const bool in_file_order = std::is_sorted(j.placed.begin(), j.placed.end(), bySequence);
  const int64_t end_max = j.sorted_numbers.empty() ? -1 : int64_t{j.sorted_numbers.back()};
  const bool moved_with_end = !in_file_order && end_sequence_ >= 0 && end_sequence_ == end_max && j.numbers_unique &&
                              !j.stats_kept_out;
  if (!in_file_order && j.numbers_unique && numbersWhole(j.sorted_numbers)) {
    judgeMoved(j, sequenced_);
    log_.chunks_out_of_order = j.moved_numbers.size();
    warning(log_, j.first_moved->at, j.first_moved->chunk,
            "chunks out of write order: " + movedText(j) + "; every number from 0 to " +
                std::to_string(sequenced_.size() - 1) +
                " is in the file once, so none is missing: the file was put together in another order than it "
                "was written. Its records are read in write order (by their numbers)");
  } else if (moved_with_end) {
    reportMovedWithEnd(j);
  } else {
    reportChunkByChunk(j);
  }
}

// The End chunk's number damaged to a high value (it is outside the checksum) in a file whose chunks were
// moved: the numbers between the highest other one and the End chunk's would read as chunks missing. A
// trace-mode log whose every record its Stats record counts is read lost no chunk of records there: the
// End chunk's number is damaged, and it is taken as one past the highest other number.
void ChunkDamage::fixEndNumber(Judgement& j) {
  if (!(end_sequence_ >= 0 && j.numbers_unique && j.sorted_numbers.size() >= 2 &&
        int64_t{j.sorted_numbers.back()} == end_sequence_ && !j.stats_kept_out && log_.has_stats &&
        !log_.summary_mode && !j.stats_short && log_.rotationPart() == 0))
    return;
  int64_t other_max = j.sorted_numbers[j.sorted_numbers.size() - 2];
  for (const SequencedChunk& c : damaged_numbered_)  // a damaged chunk's number below the End chunk's counts
    if (int64_t{c.sequence} < end_sequence_) other_max = std::max(other_max, int64_t{c.sequence});
  const uint64_t skipped = log_.chunks_skipped - static_cast<uint64_t>(repeats_) - failed_decode_;
  const uint64_t numbered = damaged_numbered_.size() - (cut_numbered_ ? 1 : 0);
  const uint64_t unnumbered = skipped > numbered ? skipped - numbered : 0;
  auto end_it = std::find_if(sequenced_.begin(), sequenced_.end(),
                             [&](const SequencedChunk& c) { return int64_t{c.sequence} == end_sequence_; });
  const bool end_moved = end_it != sequenced_.end() && std::next(end_it) != sequenced_.end();
  if (end_moved && end_sequence_ > other_max + 1 + static_cast<int64_t>(unnumbered)) {
    const int64_t was = end_sequence_;
    end_sequence_ = other_max + 1 + static_cast<int64_t>(unnumbered);
    end_it->sequence = static_cast<uint32_t>(end_sequence_);
    j.sorted_numbers.back() = end_it->sequence;
    warning(log_, end_it->at, end_it->chunk,
            "chunk " + std::to_string(end_it->chunk) + " at byte " + std::to_string(end_it->at) +
                ", which holds the end record, carries sequence number " + std::to_string(was) +
                " where " + std::to_string(end_sequence_) +
                " was expected (one past the highest number of the other chunks" +
                (unnumbered > 0 ? " and the damaged chunks skipped" : "") +
                "): a damaged chunk header (the number is not covered by the checksum), not chunks missing, "
                "since every record the log's stats record counts is read; its records are read");
  }
}

// Damaged chunks (skipped) whose header survived carry a number too, not trusted alone: one that no intact
// chunk carries, below the End chunk's, is taken as theirs (it says where the chunk was written).
void ChunkDamage::placeDamaged(Judgement& j) {
  const int64_t bound = end_sequence_ >= 0 ? end_sequence_
                                          : (j.sorted_numbers.empty() ? 0 : int64_t{j.sorted_numbers.back()});
  size_t h = 0;
  for (const SequencedChunk& c : sequenced_) {
    for (; h < damaged_numbered_.size() && damaged_numbered_[h].chunk < c.chunk; ++h)
      if (int64_t{damaged_numbered_[h].sequence} < bound && !j.carried(damaged_numbered_[h].sequence)) {
        j.placed.push_back(damaged_numbered_[h]);
        ++j.hints_used;
        j.cut_used |= cut_numbered_ && h + 1 == damaged_numbered_.size();
      }
    j.placed.push_back(c);
  }
  for (; h < damaged_numbered_.size(); ++h)
    if (int64_t{damaged_numbered_[h].sequence} < bound && !j.carried(damaged_numbered_[h].sequence)) {
      j.placed.push_back(damaged_numbered_[h]);
      ++j.hints_used;
      j.cut_used |= cut_numbered_ && h + 1 == damaged_numbered_.size();
    }
}

// The chunks of `list` (in file order) moved: j.moved_numbers, j.first_moved (points into `list`).
void ChunkDamage::judgeMoved(Judgement& j, const std::vector<SequencedChunk>& list) {
  std::vector<uint32_t> numbers;
  numbers.reserve(list.size());
  for (const SequencedChunk& c : list) numbers.push_back(c.sequence);
  const std::vector<bool> out = outOfOrder(numbers);
  j.moved_numbers.clear();
  j.first_moved = nullptr;
  for (size_t i = 0; i < list.size(); ++i) {
    if (out[i]) j.moved_numbers.push_back(list[i].sequence);
    if (j.first_moved == nullptr && int64_t{list[i].sequence} != list[i].index) j.first_moved = &list[i];
  }
  std::sort(j.moved_numbers.begin(), j.moved_numbers.end());
  if (j.first_moved == nullptr && !list.empty()) j.first_moved = &list.front();
}

std::string ChunkDamage::movedText(const Judgement& j) const {
  const size_t n = j.moved_numbers.size();
  return std::string(j.first_moved->damaged ? "damaged chunk " : "chunk ") + std::to_string(j.first_moved->chunk) +
         " at byte " + std::to_string(j.first_moved->at) + (j.first_moved->damaged ? " (skipped)" : "") +
         " carries sequence number " + std::to_string(j.first_moved->sequence) + " where " +
         std::to_string(j.first_moved->index) + " was expected; " + counted(n, "chunk was", "chunks were") +
         " moved (the fewest that, moved back, restore the write order: " + (n == 1 ? "number " : "numbers ") +
         idList(j.moved_numbers) + ")";
}

// Chunks missing (`msg`, at chunk `at`): an error where the Stats record says no bytes were dropped, a
// warning where there is no Stats record to say.
void ChunkDamage::missingTail(const std::string& msg, const SequencedChunk& at) {
  if (log_.has_stats)
    error(log_, at.at, at.chunk,
          msg + ", yet the log's stats record says no bytes were dropped: the file lost part of what was "
                "written (edited, or copied in pieces); those chunks' records are not in the numbers");
  else
    warning(log_, at.at, at.chunk,
            msg + "; the log has no stats record to say whether they were kept out at a size cap or lost "
                  "from the file");
}

// Chunks moved (the End chunk's number is the highest, each number once), some numbers not among the
// intact chunks: those a damaged chunk's header carries are its; the others are chunks missing, less the
// damaged chunks skipped whose numbers are unknown.
void ChunkDamage::reportMovedWithEnd(Judgement& j) {
  judgeMoved(j, j.placed);
  // Damaged chunks' numbers (distinct, not carried by an intact chunk, below the End chunk's), and the
  // numbers below the End chunk's that no chunk carries, intact or damaged (the first 41 listed).
  std::vector<const SequencedChunk*> hinted;
  for (const SequencedChunk& c : j.placed)
    if (!j.carried(c.sequence)) hinted.push_back(&c);
  std::sort(hinted.begin(), hinted.end(), [](auto* a, auto* b) { return a->sequence < b->sequence; });
  hinted.erase(std::unique(hinted.begin(), hinted.end(), [](auto* a, auto* b) { return a->sequence == b->sequence; }),
               hinted.end());
  const uint64_t open_count = j.absentIn(0, end_sequence_) - hinted.size();
  std::vector<uint32_t> open;
  for (uint32_t n = 0, h = 0; int64_t{n} < end_sequence_ && open.size() <= 40; ++n) {
    while (h < hinted.size() && hinted[h]->sequence < n) ++h;
    if (!j.carried(n) && !(h < hinted.size() && hinted[h]->sequence == n)) open.push_back(n);
  }
  // Damaged chunks skipped whose number is unknown (their header lost); the chunk cut by the file's end
  // is not counted skipped.
  const uint64_t skipped = log_.chunks_skipped - static_cast<uint64_t>(repeats_) - failed_decode_;
  const uint64_t skipped_numbered = j.hints_used - (j.cut_used ? 1 : 0);
  const uint64_t unnumbered = skipped > skipped_numbered ? skipped - skipped_numbered : 0;
  const uint64_t lost = open_count > unnumbered ? open_count - unnumbered : 0;
  const std::string numbers = (open_count == 1 ? "number " : "numbers ") + idList(open) +
                              (open_count == 1 ? " is" : " are");
  std::string hint_text;
  for (size_t i = 0; i < hinted.size() && i < 4; ++i)
    hint_text += "; number " + std::to_string(hinted[i]->sequence) + " is that of damaged chunk " +
                 std::to_string(hinted[i]->chunk) + " at byte " + std::to_string(hinted[i]->at) +
                 " (skipped; its header carries it)";
  if (hinted.size() > 4) hint_text += "; and " + counted(hinted.size() - 4, "more damaged chunk") + " so";
  if (lost > 0)
    missingTail(counted(lost, "chunk") + " missing: " + numbers +
                    (unnumbered > 0 ? " not among the intact chunks, and only " +
                                          counted(unnumbered, "damaged chunk") + " whose number is unknown " +
                                          (unnumbered == 1 ? "was" : "were") + " skipped"
                                    : std::string(" not in the file")) +
                    " (its end record's chunk carries number " + std::to_string(end_sequence_) +
                    ", the last written)" + hint_text + "; its chunks are also out of write order: " + movedText(j),
                *j.first_moved);
  else
    warning(log_, j.first_moved->at, j.first_moved->chunk,
            "chunks out of write order: " + movedText(j) +
                (open_count > 0 ? "; the " + numbers + " not among the intact chunks: " +
                                      (open_count == 1 ? "that of the damaged chunk skipped"
                                                       : "those of the damaged chunks skipped")
                                : std::string()) +
                hint_text + ". Its records are read in write order (by their numbers)");
}

void ChunkDamage::reportChunkByChunk(Judgement& j) {
  int64_t trusted_index = -1, trusted_sequence = -1;  // the last chunk whose number fits: index -1 is "before 0"
  uint64_t missing = 0, gaps = 0, odd = 0;
  const SequencedChunk* first_gap = nullptr;
  const SequencedChunk* first_odd = nullptr;
  int64_t gap_expected = 0, first_odd_expected = 0;
  bool first_odd_next_fits = false;  // the chunk after the first odd one carries the number expected there
  // A trace-mode log whose Stats count more records than the file holds (j.stats_short) confirms a jump
  // at the last chunk read (a chunk cut right before the final one), where no later chunk can. Chunks
  // kept out at KCOUNT_MAX_BYTES (or refused by the file) took their numbers: the Stats count their
  // bytes, and explain a jump.
  for (size_t i = 0; i < sequenced_.size(); ++i) {
    const SequencedChunk& c = sequenced_[i];
    const int64_t expected = trusted_sequence + (c.index - trusted_index);
    const int64_t seq = c.sequence;
    bool confirmed = seq > expected && i + 1 < sequenced_.size() &&
                     int64_t{sequenced_[i + 1].sequence} == seq + (sequenced_[i + 1].index - c.index);
    const bool last = i + 1 == sequenced_.size();  // no chunk after it to confirm a jump
    if (seq > expected && last && j.stats_short) confirmed = true;
    // The final chunk, which the writer's reserve always holds, follows kept-out chunks with a jump.
    if (seq > expected && last && j.stats_kept_out) confirmed = true;
    // A jump over numbers that other chunks of the file carry is chunks moved, not chunks missing.
    const uint64_t absent = seq > expected ? j.absentIn(expected, seq) : 0;
    if (confirmed && absent == 0) confirmed = false;
    if (seq != expected && !confirmed) {
      if (odd++ == 0) {
        first_odd = &c;
        first_odd_expected = expected;
        first_odd_next_fits =
            !last && int64_t{sequenced_[i + 1].sequence} == expected + (sequenced_[i + 1].index - c.index);
      }
      continue;
    }
    if (seq != expected) {
      missing += absent;
      if (gaps++ == 0) {
        first_gap = &c;
        gap_expected = expected;
      }
    }
    trusted_index = c.index;
    trusted_sequence = seq;
  }
  if (first_gap != nullptr && !j.stats_kept_out)
    missingTail(counted(missing, "chunk") + " missing: chunk " + std::to_string(first_gap->chunk) + " at byte " +
                    std::to_string(first_gap->at) + " carries sequence number " +
                    std::to_string(first_gap->sequence) + " where " + std::to_string(gap_expected) +
                    " was expected (" +
                    (first_gap->sequence - gap_expected > 1
                         ? "numbers " + std::to_string(gap_expected) + ".." +
                               std::to_string(first_gap->sequence - 1) + " are"
                         : "number " + std::to_string(gap_expected) + " is") +
                    " not in the file)" +
                    (gaps > 1 ? " (and at " + counted(gaps - 1, "more place") + ")" : ""),
                *first_gap);
  if (first_odd != nullptr)
    warning(log_, first_odd->at, first_odd->chunk,
            "chunk " + std::to_string(first_odd->chunk) + " at byte " + std::to_string(first_odd->at) +
                " carries sequence number " + std::to_string(first_odd->sequence) + " where " +
                std::to_string(first_odd_expected) + " was expected" +
                (odd > 1 ? " (and " + counted(odd - 1, "more chunk") + " out of line)" : "") +
                (first_odd_next_fits
                     ? ": a damaged chunk header, since the chunk after it carries the number expected there (the "
                       "number is not covered by the checksum)"
                 : int64_t{first_odd->sequence} > first_odd_expected
                     ? ": chunks before it are missing from the file, or its header is damaged (the number is "
                       "not covered by the checksum; no chunk after it tells which)"
                     : ": a damaged chunk header (the number is not covered by the checksum)") +
                "; its records are read");
}

}  // namespace kc::logread
