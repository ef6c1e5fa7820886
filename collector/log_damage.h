// Damage diagnosis of the log reader: what the chunk walk (decodeLog(), log_decoder.cpp) hands over when the
// bytes where a chunk should start are not an intact chunk, or an intact chunk is a repeat, out of write
// order, or after the End record. Damaged chunks are skipped and counted, junk bytes named, moved chunks held
// until their turn, a second log or a zero tail ends the reading, and the chunks' sequence numbers are judged
// once the whole file is read (chunks moved, missing, or a damaged header). Every finding is an issue of
// LogData with its byte offset (docs/reader-guarantees.md). Internal to collector/. Not thread-safe: one per
// read, on the reading thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collector/log_decoder.h"

namespace kc::logread {

/// Start of the reader's warning for a log without End record whose chunks all verified to the end of
/// the file: the process did not close it (markCutShortPart() finds it by this text).
inline constexpr std::string_view kNoEndRecordText = "log has no end record: ";
/// Start of the warning for a log without End record whose bytes after the last intact chunk are damaged
/// or cut short: the End record may have been among them (markCutShortPart() finds it too).
inline constexpr std::string_view kNoIntactEndRecordText = "log has no intact end record: ";

/// True when `sorted` (ascending sequence numbers of chunks) is 0, 1, ..., n-1, each once: every chunk the
/// writer numbered is there, none twice.
bool numbersWhole(const std::vector<uint32_t>& sorted);
/// "last intact chunk N ends at byte B" or "no intact chunk".
std::string lastIntactText(const LogData& log);

/// Where the chunk walk stands, shared by the walk and ChunkDamage.
struct ChunkWalk {
  size_t pos = 0;      // byte offset where the next chunk should start
  int64_t chunk = 0;   // its index in file order (as messages number chunks; skipped chunks count)
  size_t log_end = 0;  // where this log's bytes end: the file's end, a second log's header, or a zero tail
};

/// An intact chunk waiting for chunks with lower sequence numbers later in the file (write order).
struct HeldChunk {
  size_t at;      // byte offset of its header
  int64_t chunk;  // index in file order
  ChunkInfo info;
};

/// The damage diagnosis of one read: holds what the walk learns of the file's chunks (the sequence numbers
/// read, the damaged chunks skipped and the numbers their headers carry, repeats, chunks held for write
/// order, the End chunk's number) and reports what is wrong, at the walk's position (ChunkWalk). Holds
/// references to `bytes`, `log`, `walk` and `drop`, which must outlive it. Throws only std::bad_alloc.
class ChunkDamage {
 public:
  /// What the walk does next.
  enum class Step { kNext, kStop };

  /// `chunks_from`: where chunk 0 starts (after the file header); `drop` is told the bytes a scan over
  /// damaged bytes has passed.
  ChunkDamage(std::span<const uint8_t> bytes, LogData& log, ChunkWalk& walk, size_t chunks_from,
              const ScanDrop& drop);

  /// The bytes at walk.pos are not an intact chunk (chunkIntactAt() is false): a second log's file header
  /// or a copy of this one, a zero tail, a tail cut short, a damaged header or payload. Reports it, moves the
  /// walk past it (to the next intact chunk, counting the chunks skipped) or says the reading stops there.
  Step damagedChunk();
  /// An intact chunk `h` at walk.pos: false (reported, skipped, the walk moved past it) if it repeats an
  /// earlier chunk (same bytes); true if it is to be decoded (its number is noted as read).
  bool admit(const ChunkInfo& h);
  /// True if the intact chunk `h` at walk.pos must wait (held) for chunks with lower numbers later in the
  /// file; they are decoded in write order through nextHeld().
  bool hold(const ChunkInfo& h);
  /// The next held chunk whose turn has come: its number is next in write order, or no intact chunk after
  /// byte `at` carries a number before it. After releaseHeld(), every held chunk in turn.
  std::optional<HeldChunk> nextHeld(size_t at);
  /// Lets every held chunk go (the walk is over).
  void releaseHeld() { next_number_ = INT64_MAX; }
  /// A chunk numbered `sequence` was decoded (`decoded`) or skipped as its payload did not decode.
  void noteDecoded(uint32_t sequence, bool decoded);
  /// After an intact chunk of a log whose End record was read, the walk at the bytes after it: this log's
  /// chunks moved after the End chunk are read on (kNext); zero bytes or other bytes end the reading (kStop
  /// where bytes other than this log's follow: LogData::after_end_*, zero_tail_*).
  Step afterEndChunk();
  /// After the walk: the one error for the damaged chunks not listed, then the judgement of the chunks'
  /// sequence numbers (moved, missing, damaged headers; LogData::chunks_out_of_order).
  void finishWalk();
  /// After every other check: the warning for a log without End record (not for a rotated part closed for
  /// rotation), saying whether bytes after the last intact chunk may have held it.
  void reportNoEnd();

 private:
  /// An intact chunk as the sequence check sees it.
  struct SequencedChunk {
    int64_t chunk;  // in file order (as messages number chunks)
    int64_t index;  // chunk less the repeats before it: the sequence number the writer gave it, if all is well
    uint64_t at;
    uint32_t sequence;
    bool damaged = false;  // a damaged chunk skipped, whose header carries `sequence` (not trusted alone)
  };
  struct SeenChunk {
    uint32_t sequence, stored_bytes;
    int64_t chunk;
    uint64_t at;
  };
  struct Judgement;  // the sequence numbers' judgement after the walk (log_damage_numbers.cpp)

  // Reporting.
  void chunkError(uint64_t at, int64_t c, std::string msg, uint64_t chunks = 1);
  void junkBytes(size_t from, size_t to, const std::string& what, const std::string& why_junk);
  std::string firstLogOnly(size_t at) const;
  std::string wholeText() const;
  // The steps of damagedChunk(), in the order the walk meets them.
  std::optional<Step> logHeaderAtPos();
  bool zeroTailAtPos();
  Step payloadCut(const ChunkInfo& h);
  Step checksumMismatch(const ChunkInfo& h);
  bool resyncFrom(size_t from, const std::string& why);
  bool junkBeforeNext(size_t next, const std::string& why);
  void lostHeaders(size_t next);
  void skippedChunks(size_t from, size_t next);
  void notePendingNumber();
  // The numbers read and the file's intact chunks.
  void buildLookup();
  bool numberRead(uint32_t n);
  void noteNumberRead(uint32_t n);
  uint64_t readBelowEnd();
  bool missingChunkAt(size_t at);
  bool intactNumbersWhole();
  size_t intactNumbersIn(int64_t from, int64_t to);
  bool numberFollows(int64_t from, int64_t to, size_t at);
  int64_t expectedHere() const;
  int64_t sequenceAt(size_t at) const;
  bool noChunkHeaderIn(size_t from, size_t to);
  // The judgement after the walk (log_damage_numbers.cpp).
  void fixEndNumber(Judgement& j);
  void placeDamaged(Judgement& j);
  void judgeMoved(Judgement& j, const std::vector<SequencedChunk>& list);
  std::string movedText(const Judgement& j) const;
  void missingTail(const std::string& msg, const SequencedChunk& at);
  void reportMovedWithEnd(Judgement& j);
  void reportChunkByChunk(Judgement& j);

  std::span<const uint8_t> bytes_;
  LogData& log_;
  ChunkWalk& walk_;
  const size_t chunks_from_;  // where chunk 0 starts
  const ScanDrop& drop_;
  // Errors of damaged chunks met on the way (a bad checksum, magic or length, a repeat): the first
  // kListedChunkErrors are issues one by one; the chunks of later ones are counted and said in one error
  // after the reading, so a file of thousands of damaged chunks gives a screen of lines, not thousands
  // (chunks_skipped keeps the exact count).
  struct {
    uint64_t listed = 0, unlisted_chunks = 0, first_at = 0, last_at = 0;
    int64_t first_chunk = -1, last_chunk = -1;
  } unlisted_;
  // Sequence numbers of the chunks that verify (the writer numbers the chunks of a file 0, 1, 2, ...;
  // docs/format.md). The number is outside the checksum, so one number alone is not trusted: a chunk
  // equal to an earlier one (checksum, size and number) is a repeat, whose records would count twice; a
  // jump confirmed by the chunk after it is chunks missing; any other odd number is a damaged header.
  // The writer itself leaves a jump only for chunks it kept out at the size cap or the file refused,
  // which its Stats record counts in bytes_dropped: jumps are judged after the whole file is read.
  std::vector<SequencedChunk> sequenced_;
  // Damaged chunks skipped whose header survived (a chunk cut short, a payload damaged), with the number
  // their header carries: not trusted alone, it may say where a chunk missing from the numbers went.
  std::vector<SequencedChunk> damaged_numbered_;
  int64_t pending_number_ = -1;  // the number of the damaged chunk at `pos` that resyncFrom() skips, if known
  bool cut_numbered_ = false;    // the last of damaged_numbered_ is the chunk the file's end cuts (not skipped)
  int64_t repeats_ = 0;
  std::unordered_map<uint64_t, SeenChunk> seen_;  // checksum -> the first intact chunk with it
  // The End chunk's number once it is read. An End chunk that is not last is followed by this log's chunks
  // where they carry numbers below the End chunk's that no chunk read carries (a file joined from pieces in
  // another order): those are read on, whatever follows them (a zero tail, trailing bytes, a second log, a
  // cut or damaged chunk), which is then judged as after any End chunk.
  int64_t end_sequence_ = -1;
  // The numbers of the chunks read (those of `sequenced_`), sorted and each once, for look-ups: built from
  // `sequenced_` on the first look-up (a copy of the file header, an End chunk that is not last; a log in
  // order makes none) and kept up to date after it. below_end_ counts those below the End chunk's number
  // (below_end_of_: the End number it counts for), so no pass over them is made per chunk.
  std::vector<uint32_t> numbers_lookup_;
  bool lookup_built_ = false;
  uint64_t below_end_ = 0;
  int64_t below_end_of_ = -1;
  uint32_t failed_decode_ = 0;  // chunks in `sequenced_` whose records were not decoded (counted skipped)
  // Whether the sequence numbers of the intact chunks of the whole file are 0..n-1 each once: no chunk is
  // missing, so bytes that are no intact chunk are junk (inserted by an edit or a copy), whatever they
  // hold, even a chunk header whose checksum fails. Found on first need (bytes to skip) by one walk
  // over the file from chunk 0 to chunk (resync(): cheap checks before checksums), then kept.
  int whole_numbers_ = -1;  // -1 not known yet, else 0 or 1
  size_t whole_count_ = 0;  // n, when whole
  std::vector<uint32_t> file_numbers_;  // the numbers of the file's intact chunks, sorted (repeats kept)
  std::vector<std::pair<uint32_t, size_t>> file_chunks_;  // (number, byte offset) of each, sorted
  // Intact chunks that wait for chunks with lower numbers later in the file (hold()), by number.
  std::multimap<uint32_t, HeldChunk> held_;
  int64_t next_number_ = 0;  // one past the highest number decoded: the next chunk in write order
};

}  // namespace kc::logread
