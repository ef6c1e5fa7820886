// Damage diagnosis during the chunk walk (log_damage.h): damaged chunks skipped, junk bytes, repeats,
// chunks held for write order, a second log, zero tails, what follows the End chunk. The judgement of the
// sequence numbers after the walk is in log_damage_numbers.cpp.
#include "collector/log_damage.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "collector/counted.h"

namespace kc::logread {
namespace {

/// True if a chunk header (plain or packed) starts at `at` whose lengths are within the caps and whose
/// chunk fits in bytes: the place where a chunk plausibly starts, whether or not its checksum verifies.
bool chunkHeaderPlausible(std::span<const uint8_t> bytes, size_t at) {
  ChunkInfo c;
  if (!chunkHeaderAt(bytes, at, c)) return false;
  if (c.stored_bytes > kMaxChunkPayload || c.payload_bytes > kMaxChunkPayload) return false;
  return bytes.size() - at - c.header_bytes >= c.stored_bytes;
}

/// Bytes a scan over damaged bytes (resync, the skipped-chunk walk) goes before it tells the mapped file
/// it is done with them: a long damaged or zero-filled tail is not held in memory as it is scanned.
constexpr size_t kScanReleaseStep = size_t{4} << 20;

/// Offset of the first byte at or after `at` and before `end` that may start a chunk header (both chunk
/// magics begin with the same byte), or `end` if none.
size_t nextChunkCandidate(std::span<const uint8_t> bytes, size_t at, size_t end) {
  static_assert((kChunkMagic & 0xff) == (kPackedChunkMagic & 0xff), "chunk magics share their first byte");
  if (at >= end) return end;
  const void* hit = std::memchr(bytes.data() + at, static_cast<int>(kChunkMagic & 0xff), end - at);
  return hit == nullptr ? end : static_cast<size_t>(static_cast<const uint8_t*>(hit) - bytes.data());
}

/// nextChunkCandidate() over [at, end), kScanReleaseStep bytes at a time: each time the scan has passed
/// kScanReleaseStep bytes since `dropped_to`, they go to `drop` (may be empty) and `dropped_to` moves on.
/// Returns the candidate, or `end` if none.
size_t scanForChunk(std::span<const uint8_t> bytes, size_t at, size_t end, size_t& dropped_to, const ScanDrop& drop) {
  while (at < end) {
    const size_t window_end = std::min(end, at + kScanReleaseStep);
    const size_t c = nextChunkCandidate(bytes, at, window_end);
    if (drop && c - dropped_to >= kScanReleaseStep) {
      drop(dropped_to, c);
      dropped_to = c;
    }
    if (c < window_end) return c;
    at = window_end;
  }
  return end;
}

/// True if bytes [from, end of file) are all zero. `drop` (may be empty) is told the bytes passed, one
/// kScanReleaseStep window at a time, so a long zero tail of a mapped file is not all resident at once.
bool zeroFrom(std::span<const uint8_t> bytes, size_t from, const ScanDrop& drop) {
  for (size_t at = from; at < bytes.size();) {
    const size_t window_end = std::min(bytes.size(), at + kScanReleaseStep);
    if (std::any_of(bytes.begin() + at, bytes.begin() + window_end, [](uint8_t b) { return b != 0; })) return false;
    if (drop) drop(at, window_end);
    at = window_end;
  }
  return true;
}

/// Offset of the first kcount file header magic (kLogMagic) in [from, to), or `to` if none. Searched
/// kScanReleaseStep bytes at a time (windows overlap by the magic's length less one), each window's bytes
/// then going to `drop` (may be empty), as scanForChunk() does.
size_t findLogMagic(std::span<const uint8_t> bytes, size_t from, size_t to, const ScanDrop& drop) {
  to = std::min(to, bytes.size());
  for (size_t at = from; at < to;) {
    const size_t window_end = std::min(to, at + kScanReleaseStep + sizeof(kLogMagic) - 1);
    const auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(at);
    const auto end = bytes.begin() + static_cast<std::ptrdiff_t>(window_end);
    const auto hit = std::search(begin, end, std::begin(kLogMagic), std::end(kLogMagic));
    if (hit != end) return static_cast<size_t>(hit - bytes.begin());
    if (window_end == to) break;
    const size_t next = window_end - (sizeof(kLogMagic) - 1);
    if (drop) drop(at, next);
    at = next;
  }
  return to;
}

/// True if records laid end to end fill `payload` exactly: each record header has a type (not 0) and a
/// body length that leads to the next header or to the payload's end. Reads one 8-byte header per record, not the bodies.
bool recordsChain(std::span<const uint8_t> payload) {
  for (size_t at = 0; at < payload.size();) {
    if (payload.size() - at < sizeof(RecordHeader)) return false;
    RecordHeader rh;
    std::memcpy(&rh, payload.data() + at, sizeof(rh));
    at += sizeof(RecordHeader);
    if (rh.type == 0) return false;  // record types start at 1 (a zero-filled payload stops here)
    if (rh.body_bytes > payload.size() - at) return false;
    at += rh.body_bytes;
  }
  return true;
}

/// Cheap checks a candidate chunk that fits in bytes must pass before its checksum is computed during a
/// resync: a plain (or stored) payload's records chain to its end, and a zstd payload starts with a zstd
/// frame of the announced size. A chunk the writer wrote passes them (a chunk that fails them could not
/// be decoded either). The payload of a fake header in damaged bytes (any 4 bytes equal to a chunk magic)
/// fails them at its first record, mostly: so a damaged stretch holding many such headers, each claiming
/// megabytes, costs a record walk per header instead of a checksum of megabytes per header.
bool chunkStructureFits(std::span<const uint8_t> bytes, size_t at, const ChunkInfo& c) {
  const auto stored = bytes.subspan(at + c.header_bytes, c.stored_bytes);
  if (!c.packed || c.codec == static_cast<uint8_t>(ChunkCodec::kStored)) return recordsChain(stored);
  if (c.codec == static_cast<uint8_t>(ChunkCodec::kZstd)) {
    const unsigned long long size = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (size == ZSTD_CONTENTSIZE_ERROR) return false;
    return size == ZSTD_CONTENTSIZE_UNKNOWN || size == c.payload_bytes;
  }
  return true;  // a codec this reader does not know: only the checksum tells
}

/// Offset of the first chunk at or after `from` whose checksum verifies, or bytes.size() if none.
/// `drop` (may be empty) is told the bytes the scan has passed (scanForChunk). A candidate is checksummed
/// only when chunkStructureFits(): the checksum's cost is its whole claimed length, up to 16 MiB, and
/// damaged bytes may hold a chunk magic every few bytes.
size_t resync(std::span<const uint8_t> bytes, size_t from, const ScanDrop& drop = {}) {
  uint8_t magic[4], packed[4];
  std::memcpy(magic, &kChunkMagic, 4);
  std::memcpy(packed, &kPackedChunkMagic, 4);
  size_t dropped_to = from;
  for (size_t at = from; at + sizeof(ChunkHeader) <= bytes.size(); ++at) {
    at = scanForChunk(bytes, at, bytes.size(), dropped_to, drop);
    if (at + sizeof(ChunkHeader) > bytes.size()) break;
    ChunkInfo c;
    if ((std::memcmp(bytes.data() + at, magic, 4) == 0 || std::memcmp(bytes.data() + at, packed, 4) == 0) &&
        chunkHeaderPlausible(bytes, at) && chunkHeaderAt(bytes, at, c) && chunkStructureFits(bytes, at, c) &&
        chunkVerifies(bytes, at))
      return at;
  }
  return bytes.size();
}

}  // namespace

/// True when `sorted` (ascending sequence numbers of chunks) is 0, 1, ..., n-1, each once: every chunk the
/// writer numbered is there, none twice. A damaged number (outside the checksum) or a missing chunk leaves a
/// gap or a repeat.
bool numbersWhole(const std::vector<uint32_t>& sorted) {
  if (sorted.empty()) return false;
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != i) return false;
  return true;
}

std::string lastIntactText(const LogData& log) {
  return log.last_intact_chunk >= 0 ? "last intact chunk " + std::to_string(log.last_intact_chunk) + " ends at byte " +
                                          std::to_string(log.last_intact_end)
                                    : std::string("no intact chunk");
}

ChunkDamage::ChunkDamage(std::span<const uint8_t> bytes, LogData& log, ChunkWalk& walk, size_t chunks_from,
                         const ScanDrop& drop)
    : bytes_(bytes), log_(log), walk_(walk), chunks_from_(chunks_from), drop_(drop) {}

// ---- Reporting ----

void ChunkDamage::chunkError(uint64_t at, int64_t c, std::string msg, uint64_t chunks) {
  if (unlisted_.listed < kListedChunkErrors) {
    ++unlisted_.listed;
    error(log_, at, c, std::move(msg));
    return;
  }
  if (unlisted_.unlisted_chunks == 0) {
    unlisted_.first_at = at;
    unlisted_.first_chunk = c;
  }
  unlisted_.unlisted_chunks += chunks;
  unlisted_.last_at = std::max(unlisted_.last_at, at);
  unlisted_.last_chunk = std::max(unlisted_.last_chunk, c + static_cast<int64_t>(chunks) - 1);
}

// Junk bytes [from, to) where chunk `chunk` should start, followed by an intact chunk: an error that says
// where they lie and `why` they are junk; no chunk is counted skipped, reading goes on at `to`.
void ChunkDamage::junkBytes(size_t from, size_t to, const std::string& what, const std::string& why_junk) {
  const int64_t chunk = walk_.chunk;
  const std::string before = chunk == 0 ? std::string("the file header") : "chunk " + std::to_string(chunk - 1);
  chunkError(from, chunk,
             what + counted(to - from, "junk byte") + " (bytes " + std::to_string(from) + " to " +
                 std::to_string(to) + ") between " + before + " and chunk " + std::to_string(chunk) + ", skipped" +
                 why_junk,
             0);
  log_.junk_bytes += to - from;
  walk_.pos = to;
}

// A second log's file header at byte `at`: what of the file is read, the end of both errors that say so.
std::string ChunkDamage::firstLogOnly(size_t at) const {
  return "only the first log (bytes 0 to " + std::to_string(at) + ") is read, the " +
         std::to_string(bytes_.size() - at) + " bytes from there are not";
}

std::string ChunkDamage::wholeText() const {
  return "; the file's intact chunks carry every sequence number from 0 to " + std::to_string(whole_count_ - 1) +
         " once: no chunk is missing";
}

// ---- The numbers read and the file's intact chunks ----

void ChunkDamage::buildLookup() {
  if (lookup_built_) return;
  numbers_lookup_.reserve(sequenced_.size());
  for (const SequencedChunk& c : sequenced_) numbers_lookup_.push_back(c.sequence);
  std::sort(numbers_lookup_.begin(), numbers_lookup_.end());
  numbers_lookup_.erase(std::unique(numbers_lookup_.begin(), numbers_lookup_.end()), numbers_lookup_.end());
  lookup_built_ = true;
}

bool ChunkDamage::numberRead(uint32_t n) {
  buildLookup();
  return std::binary_search(numbers_lookup_.begin(), numbers_lookup_.end(), n);
}

// A chunk read (added to `sequenced_`): its number joins the look-up, if built.
void ChunkDamage::noteNumberRead(uint32_t n) {
  if (!lookup_built_) return;
  const auto it = std::lower_bound(numbers_lookup_.begin(), numbers_lookup_.end(), n);
  if (it != numbers_lookup_.end() && *it == n) return;
  numbers_lookup_.insert(it, n);
  if (below_end_of_ >= 0 && int64_t{n} < below_end_of_) ++below_end_;
}

// How many numbers below the End chunk's the chunks read carry.
uint64_t ChunkDamage::readBelowEnd() {
  buildLookup();
  if (below_end_of_ != end_sequence_) {
    below_end_of_ = end_sequence_;
    below_end_ = static_cast<uint64_t>(
        std::lower_bound(numbers_lookup_.begin(), numbers_lookup_.end(), static_cast<uint64_t>(end_sequence_),
                         [](uint32_t a, uint64_t v) { return a < v; }) -
        numbers_lookup_.begin());
  }
  return below_end_;
}

// True if a chunk header at `at` (intact or not) carries a number below the End chunk's that no chunk
// read carries: a chunk of this log moved after its End chunk. So too where bytes that are no chunk
// and no second log's file header lie before the next intact chunk and it carries such a number (junk
// between moved chunks, reported as such by the walk).
bool ChunkDamage::missingChunkAt(size_t at) {
  auto missing = [&](size_t c) {
    ChunkInfo ci;
    return chunkHeaderAt(bytes_, c, ci) && int64_t{ci.sequence} < end_sequence_ && !numberRead(ci.sequence);
  };
  if (end_sequence_ < 0) return false;
  if (missing(at)) return true;
  // Every number below the End chunk's read: nothing to look for in the bytes after it.
  if (readBelowEnd() == static_cast<uint64_t>(end_sequence_)) return false;
  const size_t next = resync(bytes_, at + 1, drop_);
  return next < bytes_.size() && missing(next) && findLogMagic(bytes_, at, next, drop_) >= next;
}

bool ChunkDamage::intactNumbersWhole() {
  if (whole_numbers_ >= 0) return whole_numbers_ == 1;
  std::vector<uint32_t> found;
  for (size_t at = resync(bytes_, chunks_from_, drop_); at < bytes_.size(); at = resync(bytes_, at, drop_)) {
    ChunkInfo ci;
    chunkHeaderAt(bytes_, at, ci);
    found.push_back(ci.sequence);
    file_chunks_.emplace_back(ci.sequence, at);
    const size_t end = at + ci.header_bytes + ci.stored_bytes;
    drop_(at, end);
    at = end;
    if (at >= bytes_.size()) break;
  }
  std::sort(found.begin(), found.end());
  std::sort(file_chunks_.begin(), file_chunks_.end());
  const bool whole = numbersWhole(found);
  whole_numbers_ = whole ? 1 : 0;
  whole_count_ = found.size();
  file_numbers_ = std::move(found);
  return whole;
}

// How many of the numbers in [from, to) the file's intact chunks carry (found by the same walk).
size_t ChunkDamage::intactNumbersIn(int64_t from, int64_t to) {
  intactNumbersWhole();
  const auto lo = std::lower_bound(file_numbers_.begin(), file_numbers_.end(), from,
                                   [](uint32_t a, int64_t v) { return int64_t{a} < v; });
  const auto hi = std::lower_bound(file_numbers_.begin(), file_numbers_.end(), to,
                                   [](uint32_t a, int64_t v) { return int64_t{a} < v; });
  return static_cast<size_t>(hi - lo);
}

// Whether an intact chunk after byte `at` carries a number in [from, to): found by the same walk.
bool ChunkDamage::numberFollows(int64_t from, int64_t to, size_t at) {
  intactNumbersWhole();
  auto it = std::lower_bound(file_chunks_.begin(), file_chunks_.end(), from,
                             [](const std::pair<uint32_t, size_t>& c, int64_t v) { return int64_t{c.first} < v; });
  for (; it != file_chunks_.end() && int64_t{it->first} < to; ++it)
    if (it->second > at) return true;
  return false;
}

// The sequence number expected for chunk `chunk` (the next one in file order): one past the last intact
// chunk's, plus the chunks skipped since (not the repeats, which carry no number of their own). So in a
// file whose chunks were moved it follows the number of the chunk before it, not the file position.
int64_t ChunkDamage::expectedHere() const {
  if (sequenced_.empty()) return walk_.chunk - repeats_;
  const SequencedChunk& last = sequenced_.back();
  return int64_t{last.sequence} + (walk_.chunk - repeats_ - last.index);
}

// The sequence number in the chunk header at `at` (-1 if no chunk header starts there).
int64_t ChunkDamage::sequenceAt(size_t at) const {
  ChunkInfo ci;
  return chunkHeaderAt(bytes_, at, ci) ? int64_t{ci.sequence} : -1;
}

// True if no plausible chunk header starts in [from, to).
bool ChunkDamage::noChunkHeaderIn(size_t from, size_t to) {
  size_t dropped_to = from;
  for (size_t at = scanForChunk(bytes_, from, to, dropped_to, drop_); at < to;
       at = scanForChunk(bytes_, at + 1, to, dropped_to, drop_))
    if (chunkHeaderPlausible(bytes_, at)) return false;
  return true;
}

// ---- The walk's damaged bytes ----

ChunkDamage::Step ChunkDamage::damagedChunk() {
  const size_t pos = walk_.pos;
  const size_t remain = bytes_.size() - pos;
  uint32_t magic = 0;
  if (remain >= sizeof(magic)) std::memcpy(&magic, bytes_.data() + pos, sizeof(magic));
  const size_t header_need = magic == kPackedChunkMagic ? sizeof(PackedChunkHeader) : sizeof(ChunkHeader);
  const bool header_fits = remain >= header_need;
  if (const std::optional<Step> step = logHeaderAtPos()) return *step;
  if (pos > 0 && magic == 0 && zeroTailAtPos()) return Step::kStop;
  if (!header_fits) {
    // Too few bytes for a header: a cut tail, unless an intact chunk follows (then it is damage).
    if (resync(bytes_, walk_.chunk == 0 ? sizeof(FileHeader) : pos + 1, drop_) >= bytes_.size()) {
      log_.truncated = true;
      error(log_, pos, walk_.chunk,
            "truncated at byte " + std::to_string(bytes_.size()) + " in chunk " + std::to_string(walk_.chunk) +
                ", which starts at byte " + std::to_string(pos) + " (chunk header needs " + std::to_string(header_need) + " bytes, " + std::to_string(remain) +
                " remain)");
      return Step::kStop;
    }
  }
  // A header that cannot be trusted: a wrong magic or an absurd length. Look for the next chunk that
  // verifies. The first chunk's search starts right after the file header, in case header_bytes lied.
  ChunkInfo h;
  if (!header_fits || !chunkHeaderAt(bytes_, pos, h))
    return resyncFrom(pos + 1, "bad chunk magic at byte " + std::to_string(pos) + " in chunk " +
                                   std::to_string(walk_.chunk))
               ? Step::kNext
               : Step::kStop;
  if (h.stored_bytes > kMaxChunkPayload || h.payload_bytes > kMaxChunkPayload) {
    const bool stored = h.stored_bytes > kMaxChunkPayload && h.packed;
    return resyncFrom(pos + 1, "chunk " + std::to_string(walk_.chunk) + " at byte " + std::to_string(pos) +
                                   " announces " + std::to_string(stored ? h.stored_bytes : h.payload_bytes) +
                                   (stored ? " stored bytes" : " payload bytes") + " (limit " +
                                   std::to_string(kMaxChunkPayload) + ")")
               ? Step::kNext
               : Step::kStop;
  }
  if (h.stored_bytes > bytes_.size() - pos - h.header_bytes) return payloadCut(h);
  return checksumMismatch(h);
}

// A kcount file header where a chunk should start, in a log that has not ended: a second log appended
// to one whose process did not close it (`cat killed.kcount other.kcount`). Its chunks verify, so
// reading on would merge two processes' records through colliding ids: the reading stops here, as
// after an End record, and the file is reported damaged (it is not one log). No value: no file header
// magic at walk.pos.
std::optional<ChunkDamage::Step> ChunkDamage::logHeaderAtPos() {
  const size_t pos = walk_.pos;
  const int64_t chunk = walk_.chunk;
  if (!(pos > sizeof(FileHeader) && bytes_.size() - pos >= sizeof(kLogMagic) &&
        std::memcmp(bytes_.data() + pos, kLogMagic, sizeof(kLogMagic)) == 0))
    return std::nullopt;
  // The log's own file header again, followed by an intact chunk that continues this log's numbering:
  // it carries the sequence number expected here, or a number other than 0 that no chunk read carries
  // (chunks moved; a second log's first chunk carries 0), or the file's intact chunks carry every number
  // 0..n-1 once (a second log would repeat its numbers). A repeated header, junk, not a second log.
  const size_t after = pos + sizeof(FileHeader);
  if (chunk > 0 && bytes_.size() - pos >= sizeof(FileHeader) &&
      std::memcmp(bytes_.data() + pos, bytes_.data(), sizeof(FileHeader)) == 0 && chunkVerifies(bytes_, after)) {
    const int64_t next_seq = sequenceAt(after), expected = expectedHere();
    const bool fits = next_seq == expected;
    const bool unread = !fits && next_seq != 0 && !numberRead(static_cast<uint32_t>(next_seq));
    if (fits || unread || intactNumbersWhole()) {
      chunkError(pos, chunk,
                 std::to_string(sizeof(FileHeader)) + " junk bytes (bytes " + std::to_string(pos) + " to " +
                     std::to_string(after) + ") between chunk " + std::to_string(chunk - 1) + " and chunk " +
                     std::to_string(chunk) + ", skipped: a copy of the file header, followed by a chunk that " +
                     "carries sequence number " + std::to_string(next_seq) +
                     (fits     ? ", the one expected there (not a second log, whose first chunk carries 0): no "
                                 "chunk is missing"
                      : unread ? ", which no chunk before it carries (chunks moved; not a second log, whose first "
                                 "chunk carries 0)"
                               : wholeText()),
                 0);
      log_.junk_bytes += sizeof(FileHeader);
      walk_.pos = after;
      return Step::kNext;
    }
  }
  error(log_, pos, chunk,
        "a second log starts at byte " + std::to_string(pos) +
            " (a kcount file header where chunk " + std::to_string(chunk) +
            " should start: logs concatenated into one file?), after a log with no end record; " +
            firstLogOnly(pos));
  walk_.log_end = pos;
  return Step::kStop;
}

// Only zero bytes from here to the end of the file, where a chunk should start: no chunk was ever
// in them (a chunk starts with its magic), so they are not damage: blocks the file system allocated
// whose data never reached the disk, or padding. The log ends at the last intact chunk, as after a
// kill. Not at chunk 0 with a damaged file header (the search for chunk 0 starts in the header).
bool ChunkDamage::zeroTailAtPos() {
  const size_t pos = walk_.pos;
  if (!zeroFrom(bytes_, pos, drop_)) return false;
  log_.zero_tail_offset = pos;
  log_.zero_tail_bytes = bytes_.size() - pos;
  warning(log_, pos, walk_.chunk,
          "the file ends in " + counted(log_.zero_tail_bytes, "zero byte") + " from byte " +
              std::to_string(pos) + ", where chunk " + std::to_string(walk_.chunk) +
              " would start: no chunk is in them (space the file system gave the file whose data never "
              "reached the disk, as after a crash or power loss while recording, or padding); records "
              "written there, if any, are lost");
  walk_.log_end = pos;
  return true;
}

// A chunk whose stored bytes run past the end of the file: either the file was cut short, or the length
// field is corrupt and intact chunks follow.
ChunkDamage::Step ChunkDamage::payloadCut(const ChunkInfo& h) {
  const size_t pos = walk_.pos;
  const int64_t chunk = walk_.chunk;
  const size_t payload_remain = bytes_.size() - pos - h.header_bytes;
  const size_t next = resync(bytes_, pos + 1, drop_);
  if (next < bytes_.size())
    return resyncFrom(pos + 1, "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) +
                                   " announces " + std::to_string(h.stored_bytes) +
                                   (h.packed ? " stored bytes but " : " payload bytes but ") +
                                   std::to_string(payload_remain) + " remain and an intact chunk follows")
               ? Step::kNext
               : Step::kStop;  // kStop: a second log starts in the bytes skipped
  log_.truncated = true;
  error(log_, pos, chunk,
        "truncated at byte " + std::to_string(bytes_.size()) + " in chunk " + std::to_string(chunk) +
            ", which starts at byte " + std::to_string(pos) + " (payload needs " + std::to_string(h.stored_bytes) + " bytes, " +
            std::to_string(payload_remain) + " remain)");
  // Its header is whole: its number says which chunk was cut (not counted skipped: the cut tail).
  damaged_numbered_.push_back(SequencedChunk{chunk, chunk - repeats_, pos, h.sequence, true});
  cut_numbered_ = true;
  return Step::kStop;
}

ChunkDamage::Step ChunkDamage::checksumMismatch(const ChunkInfo& h) {
  const size_t pos = walk_.pos;
  const size_t end = pos + h.header_bytes + h.stored_bytes;
  // Trust the length only if it leads to the end of the file or to a plausible chunk header (the next
  // chunk may be damaged too: it is then reported on its own, with its own number).
  const std::string what =
      "checksum mismatch in chunk " + std::to_string(walk_.chunk) + " at byte " + std::to_string(pos);
  // Where the file's intact chunks carry every number once, this is no chunk of the log: junk that
  // holds a chunk header (a fake one, or a copy of a header), skipped to the next intact chunk.
  if (intactNumbersWhole()) {
    const size_t next = resync(bytes_, pos + 1, drop_);
    if (next < bytes_.size() && findLogMagic(bytes_, pos + 1, next, drop_) >= next) {
      junkBytes(pos, next, what + " (it holds a chunk header whose checksum does not verify): ", wholeText());
      return Step::kNext;
    }
  }
  if (end == bytes_.size() || chunkHeaderPlausible(bytes_, end)) {
    chunkError(pos, walk_.chunk,
               what + "; its " + std::to_string(end - pos) + " bytes are skipped, reading resumes at byte " +
                   std::to_string(end));
    ++log_.chunks_skipped;
    damaged_numbered_.push_back(SequencedChunk{walk_.chunk, walk_.chunk - repeats_, pos, h.sequence, true});
    walk_.pos = end;
    ++walk_.chunk;
    return Step::kNext;
  }
  pending_number_ = h.sequence;
  if (!resyncFrom(pos + 1, what + " (its length leads to no chunk)")) return Step::kStop;
  pending_number_ = -1;
  return Step::kNext;
}

// Bytes [from, next) skipped on the way to the next intact chunk: each plausible chunk header in them
// (a damaged chunk whose own header survived) is one more damaged chunk, reported with its number
// and offset, so that chunks read + skipped add up and later chunk numbers stay true.
void ChunkDamage::skippedChunks(size_t from, size_t next) {
  size_t dropped_to = from;
  const auto candidate = [&](size_t at) { return scanForChunk(bytes_, at, next, dropped_to, drop_); };
  int64_t& chunk = walk_.chunk;
  for (size_t at = candidate(from); at < next;) {
    if (!chunkHeaderPlausible(bytes_, at)) {
      at = candidate(at + 1);
      continue;
    }
    ChunkInfo c;
    chunkHeaderAt(bytes_, at, c);
    const size_t chunk_end = at + c.header_bytes + c.stored_bytes;
    ++chunk;
    ++log_.chunks_skipped;
    damaged_numbered_.push_back(SequencedChunk{chunk, chunk - repeats_, at, c.sequence, true});
    chunkError(at, chunk,
               "damaged chunk " + std::to_string(chunk) + " at byte " + std::to_string(at) +
                   " (its checksum does not verify) skipped, inside the bytes skipped to the next intact chunk at byte " +
                   std::to_string(next));
    at = chunk_end <= next ? chunk_end : at + 1;
  }
}

// The damaged chunk at `pos`, counted skipped: its header's number, if it survived (pending_number_).
void ChunkDamage::notePendingNumber() {
  if (pending_number_ >= 0)
    damaged_numbered_.push_back(SequencedChunk{walk_.chunk, walk_.chunk - repeats_, walk_.pos,
                                               static_cast<uint32_t>(pending_number_), true});
  pending_number_ = -1;
}

// The damaged bytes at walk.pos (`why`): on to the next intact chunk at or after `from`. False when the
// reading stops (no intact chunk follows, or a second log's header lies before it).
bool ChunkDamage::resyncFrom(size_t from, const std::string& why) {
  const size_t pos = walk_.pos;
  int64_t& chunk = walk_.chunk;
  const size_t next = resync(bytes_, chunk == 0 ? std::min(from, sizeof(FileHeader)) : from, drop_);
  // A kcount file header among the bytes skipped: a second log appended to one cut inside a chunk
  // (`cat cut.kcount other.kcount`). Its chunks verify, so reading on would merge two processes'
  // records: the reading stops at that header, as where a header stands where a chunk should start.
  // Only where an intact chunk follows (without one, nothing is read past the damage anyway).
  const size_t at = next < bytes_.size() ? findLogMagic(bytes_, std::max<size_t>(from, 1), next, drop_) : next;
  if (at < next) {
    error(log_, pos, chunk,
          why + "; a second log starts at byte " + std::to_string(at) +
              " (a kcount file header in the bytes before the next intact chunk: logs concatenated into one "
              "file, the first cut short?); " + firstLogOnly(at));
    ++log_.chunks_skipped;
    notePendingNumber();
    if (at > pos + 1) skippedChunks(pos + 1, at);
    walk_.log_end = at;
    return false;
  }
  if (next >= bytes_.size()) {
    error(log_, pos, chunk, why + "; no intact chunk follows (bytes " + std::to_string(pos) + " to " +
                                std::to_string(bytes_.size()) + " are skipped)");
    ++log_.chunks_skipped;
    notePendingNumber();
    skippedChunks(pos + 1, bytes_.size());
    return false;
  }
  if (next > pos && junkBeforeNext(next, why)) return true;
  // For chunk 0 the search starts after the file header, so the next chunk may lie before pos.
  chunkError(pos, chunk,
             why + (next >= pos ? "; skipped " + counted(next - pos, "byte") + " (bytes " + std::to_string(pos) +
                                      " to " + std::to_string(next) + ")"
                                : std::string("; went back")) +
                 " to the next intact chunk at byte " + std::to_string(next));
  ++log_.chunks_skipped;
  notePendingNumber();
  if (next > pos) skippedChunks(pos + 1, next);
  ++chunk;
  lostHeaders(next);
  walk_.pos = next;
  return true;
}

// Bytes that hold no chunk header, followed by an intact chunk that carries the sequence number
// expected at pos: junk put between two chunks (bytes inserted by an edit or a copy), not a chunk
// lost. So too any bytes where the intact chunks of the file carry every number 0..n-1 once (chunks
// moved, junk before chunk 0, a fake chunk header). Reported as junk bytes (true); the chunk count and
// numbering go on from the chunks found.
bool ChunkDamage::junkBeforeNext(size_t next, const std::string& why) {
  const size_t pos = walk_.pos;
  const int64_t expected = expectedHere();
  const bool expected_next = noChunkHeaderIn(pos, next) && sequenceAt(next) == expected;
  if (!expected_next && !intactNumbersWhole()) return false;
  junkBytes(pos, next, why + ": ",
            expected_next ? std::string(next - pos == 1 ? "; it holds no chunk header and the chunk after it"
                                                        : "; they hold no chunk header and the chunk after them") +
                                " carries sequence number " +
                                std::to_string(expected) + ", the one expected there: no chunk is missing"
                          : std::string(wholeText()));
  return true;
}

// Chunks whose headers were destroyed too, in the bytes from walk.pos to the intact chunk at `next`: its
// sequence number (0, 1, 2, ... in write order) says how many chunks the skipped bytes held, when it is
// plausible (each chunk takes at least a header's bytes). Numbers jumped over that another intact chunk of
// the file carries are chunks moved, not lost here. The last skipped chunk's own header number, where it
// survived, is the nearer guide in a file of moved chunks.
void ChunkDamage::lostHeaders(size_t next) {
  const size_t pos = walk_.pos;
  int64_t& chunk = walk_.chunk;
  const bool numbered_here = !damaged_numbered_.empty() && damaged_numbered_.back().at >= pos;
  const int64_t after_expected = numbered_here ? int64_t{damaged_numbered_.back().sequence} + 1 : expectedHere();
  const int64_t seq = next > pos ? sequenceAt(next) : -1;
  if (next > pos && seq > after_expected &&
      static_cast<uint64_t>(seq - after_expected) <= (next - pos) / sizeof(ChunkHeader) &&
      intactNumbersIn(after_expected, seq) == 0) {
    const int64_t lost = seq - after_expected;
    chunkError(pos, chunk,
               std::to_string(lost) + (lost == 1 ? " more chunk" : " more chunks") + " in bytes " +
                   std::to_string(pos) + " to " + std::to_string(next) +
                   (lost == 1 ? " lost its header" : " lost their headers") + " too (the intact chunk at byte " +
                   std::to_string(next) +
                   " carries sequence number " + std::to_string(seq) + "): " +
                   (lost == 1 ? "chunk " + std::to_string(chunk)
                              : "chunks " + std::to_string(chunk) + " to " + std::to_string(chunk + lost - 1)) +
                   " skipped",
               static_cast<uint64_t>(lost));
    log_.chunks_skipped += static_cast<uint32_t>(lost);
    chunk += lost;
  }
}

// ---- Intact chunks: repeats, write order, what follows the End chunk ----

bool ChunkDamage::admit(const ChunkInfo& h) {
  const size_t pos = walk_.pos;
  int64_t& chunk = walk_.chunk;
  const size_t end = pos + h.header_bytes + h.stored_bytes;
  const auto stored = bytes_.subspan(pos + h.header_bytes, h.stored_bytes);
  auto [seen_it, first_seen] = seen_.try_emplace(h.checksum, SeenChunk{h.sequence, h.stored_bytes, chunk, pos});
  const SeenChunk& earlier = seen_it->second;
  if (!first_seen && earlier.sequence == h.sequence && earlier.stored_bytes == h.stored_bytes) {
    chunkError(pos, chunk,
               "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) + " repeats an earlier chunk (same " +
                   "bytes and sequence number " + std::to_string(h.sequence) +
                   "; the file was edited or joined from pieces): its records are skipped, so as not to count them twice");
    ++log_.chunks_skipped;
    ++repeats_;
    walk_.pos = end;
    ++chunk;
    return false;
  }
  // The payload of an earlier chunk, byte for byte, under another sequence number: a copy renumbered (the
  // writer never writes the same records twice). Its number is this file's (the chunks after it count on
  // it), its records are not read again.
  ChunkInfo earlier_header;
  if (!first_seen && earlier.stored_bytes == h.stored_bytes && h.stored_bytes > 0 &&
      chunkHeaderAt(bytes_, earlier.at, earlier_header) &&
      std::memcmp(bytes_.data() + earlier.at + earlier_header.header_bytes, stored.data(), stored.size()) == 0) {
    chunkError(pos, chunk,
               "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) + " repeats the payload of chunk " +
                   std::to_string(earlier.chunk) + " at byte " + std::to_string(earlier.at) +
                   " (the same bytes) under sequence number " + std::to_string(h.sequence) + " (that chunk carries " +
                   std::to_string(earlier.sequence) +
                   "; the file was edited or joined from pieces): a repeated chunk, its records are skipped, so as "
                   "not to count them twice");
    sequenced_.push_back(SequencedChunk{chunk, chunk - repeats_, pos, h.sequence});
    noteNumberRead(h.sequence);
    ++log_.chunks_skipped;
    ++failed_decode_;
    walk_.pos = end;
    ++chunk;
    return false;
  }
  sequenced_.push_back(SequencedChunk{chunk, chunk - repeats_, pos, h.sequence});
  noteNumberRead(h.sequence);
  return true;
}

// Records are decoded in write order: a chunk whose number is ahead of the next one to decode, where an
// intact chunk later in the file carries a number in between (chunks moved), waits until those are
// decoded. In a log in order no chunk waits, and the file walk finds nothing to hold.
bool ChunkDamage::hold(const ChunkInfo& h) {
  if (int64_t{h.sequence} > next_number_ && numberFollows(next_number_, h.sequence, walk_.pos)) {
    held_.emplace(h.sequence, HeldChunk{walk_.pos, walk_.chunk, h});
    return true;
  }
  return false;
}

std::optional<HeldChunk> ChunkDamage::nextHeld(size_t at) {
  if (held_.empty() ||
      (int64_t{held_.begin()->first} > next_number_ && numberFollows(next_number_, held_.begin()->first, at)))
    return std::nullopt;
  const auto node = held_.extract(held_.begin());
  return node.mapped();
}

void ChunkDamage::noteDecoded(uint32_t sequence, bool decoded) {
  if (int64_t{sequence} >= next_number_) next_number_ = int64_t{sequence} + 1;
  if (!decoded) ++failed_decode_;
  if (log_.complete && end_sequence_ < 0) end_sequence_ = sequence;
}

ChunkDamage::Step ChunkDamage::afterEndChunk() {
  const size_t pos = walk_.pos;
  // An End chunk that is not last: a chunk after it that carries a number below the End chunk's that no
  // chunk read carries is this log's, put after it (a file joined from pieces in another order), not a
  // second log nor records appended: reading goes on (an intact chunk is read, a damaged or cut one is
  // reported as such). Where no such chunk follows, what follows is judged as bytes after the End.
  if (pos < bytes_.size() && missingChunkAt(pos)) return Step::kNext;
  if (!log_.dataAfterEnd() && pos < bytes_.size() && zeroFrom(bytes_, pos, drop_)) {
    // Zero bytes after the End record: padding (or blocks allocated and never written), not a second
    // log nor records appended; the log is complete.
    log_.zero_tail_offset = pos;
    log_.zero_tail_bytes = bytes_.size() - pos;
    warning(log_, pos, walk_.chunk,
            counted(log_.zero_tail_bytes, "zero byte") + (log_.zero_tail_bytes == 1 ? " follows" : " follow") +
                " the end record, from byte " +
                std::to_string(pos) + ": padding (no chunk is in them); the log before them is complete");
    return Step::kStop;
  }
  if (!log_.dataAfterEnd() && pos < bytes_.size()) {
    // The End record closes the log. Bytes after its chunk are another log (`cat a.kcount a.kcount`)
    // or records appended after the close: reading them would count the same launches twice.
    log_.after_end_offset = pos;
    log_.after_end_bytes = bytes_.size() - pos;
    log_.after_end_is_log = bytes_.size() - pos >= sizeof(kLogMagic) &&
                            std::memcmp(bytes_.data() + pos, kLogMagic, sizeof(kLogMagic)) == 0;
    warning(log_, pos, walk_.chunk,
            counted(log_.after_end_bytes, "byte") + (log_.after_end_bytes == 1 ? " follows" : " follow") +
                " the end record, from byte " + std::to_string(pos) +
                (log_.after_end_is_log ? ": a second log starts there (logs concatenated into one file?)" : "") +
                "; only the log before " + (log_.after_end_bytes == 1 ? "it" : "them") + " (bytes 0 to " +
                std::to_string(pos) + ") is read");
  }
  return log_.dataAfterEnd() ? Step::kStop : Step::kNext;
}

void ChunkDamage::reportNoEnd() {
  if (log_.complete || log_.continuedInPart() != 0) return;
  // Without End record the walk read to the end of the file. Bytes after the last intact chunk are
  // damaged or cut short: the End record may be among them, so nothing says the process did not close
  // the log.
  const bool any_intact = log_.last_intact_chunk >= 0;
  const uint64_t lost_from = any_intact ? log_.last_intact_end : chunks_from_;
  if (lost_from < walk_.log_end)
    warning(log_, bytes_.size(), -1,
            std::string(kNoIntactEndRecordText) + "the bytes from byte " + std::to_string(lost_from) +
                " to the end of the file (chunk " + std::to_string(any_intact ? log_.last_intact_chunk + 1 : 0) +
                " on) are damaged or cut short, and the end record may be among them; " + lastIntactText(log_));
  else
    warning(log_, bytes_.size(), -1,
            std::string(kNoEndRecordText) +
                "the process did not close it (crash, kill, a write that failed such as a full disk, or still "
                "running); " +
                lastIntactText(log_));
}

}  // namespace kc::logread
