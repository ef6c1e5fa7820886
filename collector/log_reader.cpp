#include "collector/log_reader.h"

#include <cstdio>

#include <algorithm>
#include <sys/stat.h>

#include <iterator>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "collector/log_damage.h"
#include "collector/log_decoder.h"
#include "collector/mapped_file.h"
#include "collector/run_files.h"

// The chunk walk and the record decoder are in log_decoder.cpp, damage diagnosis in log_damage.cpp; this
// file holds the entry points (readLog, readLogFile, readLogHead), LogData's look-ups and the joining of
// rotated parts.
namespace kc {

using logread::addIssue;
using logread::error;
using logread::kNoEndRecordText;
using logread::kNoIntactEndRecordText;
using logread::lastIntactText;
using logread::markMissing;
using logread::sumStats;

namespace {

/// Deepest range nesting scopePath() follows before giving up (corrupt parents must not loop).
constexpr int kMaxScopeDepth = 256;
/// Path prefix of a scope nested deeper than kMaxScopeDepth (a valid chain; the library drops ranges
/// nested deeper, so only a crafted log has one): its innermost kMaxScopeDepth names follow.
constexpr const char* kOuterRangesCut = "<outer ranges past 256 levels>/";

}  // namespace

namespace {
uint32_t metaNumber(const LogData& d, std::string_view key) {
  const std::string v = d.meta(key);
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<uint32_t>(std::stoul(v));
}
}  // namespace

uint32_t LogData::rotationPart() const { return metaNumber(*this, kMetaRotatedFile); }
uint32_t LogData::continuedInPart() const { return metaNumber(*this, kMetaContinuedIn); }

std::string runIdentity(const LogData& log) {
  const std::string host = log.meta("host"), pid = log.meta("pid"), start = log.meta("start_ns");
  if (pid.empty() || start.empty()) return {};
  return host + "|" + pid + "|" + start;
}

LogData readLogHead(const std::string& path, size_t max_bytes) {
  LogData out;
  out.strings.resize(1);
  out.scopes.resize(1);
  // Only regular files, as readLogFile: opening a FIFO blocks until a writer comes, reading it consumes it.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  std::vector<uint8_t> buf(max_bytes);
  const size_t n = std::fread(buf.data(), 1, buf.size(), f);
  std::fclose(f);
  buf.resize(n);
  ReadOptions ro;
  ro.keep_records = false;
  out = readLog(buf, ro);
  out.issues.clear();
  return out;
}

void markCutShortPart(LogData& log, const std::string& later_name, uint32_t later_part, bool run_marks_parts) {
  if (log.complete || log.continuedInPart() > 0 || log.not_a_log) return;
  const std::string k = std::to_string(log.rotationPart());
  const std::string follows = "yet part " + std::to_string(later_part) + " of the same run (" + later_name + ") follows it";
  // Cut inside a chunk, or by a writer known to mark its parts: the end of this part is lost. Otherwise the
  // file may be a non-last part written before parts were marked (continued_in_file), which ends like this.
  // The reader's warning for the log's missing End record, if any; "no intact end record": damaged or cut
  // bytes follow the last intact chunk.
  auto no_end = std::find_if(log.issues.begin(), log.issues.end(), [](const ReadIssue& i) {
    return i.chunk == -1 && (i.message.starts_with(kNoEndRecordText) || i.message.starts_with(kNoIntactEndRecordText));
  });
  const bool damaged_tail = no_end != log.issues.end() && no_end->message.starts_with(kNoIntactEndRecordText);
  const bool cut = log.truncated || damaged_tail || run_marks_parts;
  const std::string text =
      cut ? "rotated part " + k + " is cut short: it has no end record and was not closed for rotation (no " +
                "continued_in_file key), " + follows + ", so the run went on: records at the end of part " + k +
                " are lost (the file was cut short or damaged); " + lastIntactText(log)
          : "rotated part " + k + " has no end record and no continued_in_file key, " + follows +
                ": cut short at a chunk boundary (records at its end lost), or written by a kcount that did not "
                "mark its parts yet; " + lastIntactText(log);
  const auto severity = cut ? ReadIssue::Severity::kError : ReadIssue::Severity::kWarning;
  if (no_end != log.issues.end()) {
    no_end->severity = severity;
    no_end->message = text;
    return;
  }
  addIssue(log, severity, log.file_bytes, -1, text);
}

LogData joinRotatedParts(std::vector<LogData> parts, const std::vector<std::string>& names) {
  LogData out;
  if (parts.empty()) return out;
  {
    std::vector<LogData*> ptrs;
    for (LogData& p : parts) ptrs.push_back(&p);
    adoptUnnamedParts(names, ptrs);
  }
  out.major = parts.front().major;
  out.minor = parts.front().minor;
  out.strings.resize(1);
  out.scopes.resize(1);
  auto name = [&](size_t i) { return i < names.size() ? names[i] : std::string("?"); };
  // Numbering: 0, 1, 2, ... with nothing missing, and the last part not continued elsewhere.
  uint32_t expect = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const uint32_t k = parts[i].rotationPart();
    if (k > expect)
      addIssue(out, ReadIssue::Severity::kWarning, 0, -1,
            "rotated log: " + (k - expect == 1 ? "part " + std::to_string(expect)
                                               : "parts " + std::to_string(expect) + " to " + std::to_string(k - 1)) +
                " not given (the files before " + name(i) + ", part " + std::to_string(k) +
                "): their records are missing from this report");
    expect = k + 1;
    out.joined_parts.push_back(k);
  }
  // A part closed for rotation (continued_in_file) shows that the writer marks its parts.
  const bool run_marks_parts =
      std::any_of(parts.begin(), parts.end(), [](const LogData& p) { return p.isContinuedPart(); });
  std::vector<bool> str_def(1, true), scope_def(1, true);  // ids some part defined
  for (size_t i = 0; i < parts.size(); ++i) {
    LogData& p = parts[i];
    const bool last = i + 1 == parts.size();
    const uint32_t part = p.rotationPart(), continued_in = p.isContinuedPart() ? p.continuedInPart() : 0;
    // A part before the last that neither ends the log nor was closed for rotation lost its end.
    if (!last) markCutShortPart(p, name(i + 1), parts[i + 1].rotationPart(), run_marks_parts);
    for (auto& kv : p.metadata) {
      if (kv.first == kMetaRotatedFile || (kv.first == kMetaContinuedIn && !last)) continue;
      out.metadata.push_back(std::move(kv));
    }
    if (p.strings.size() > out.strings.size()) out.strings.resize(p.strings.size());
    if (p.strings.size() > str_def.size()) str_def.resize(p.strings.size());
    for (size_t id = 1; id < p.strings.size(); ++id)
      if (p.stringDefined(static_cast<uint32_t>(id))) {
        str_def[id] = true;
        if (!p.strings[id].empty()) out.strings[id] = std::move(p.strings[id]);
      }
    if (p.scopes.size() > out.scopes.size()) out.scopes.resize(p.scopes.size());
    if (p.scopes.size() > scope_def.size()) scope_def.resize(p.scopes.size());
    for (size_t id = 1; id < p.scopes.size(); ++id)
      if (p.scopeDefined(static_cast<uint32_t>(id))) {
        scope_def[id] = true;
        if (p.scopes[id].name_id != 0 || p.scopes[id].parent_id != 0) out.scopes[id] = p.scopes[id];
      }
    auto append = [](auto& into, auto& from) { into.insert(into.end(), from.begin(), from.end()); };
    append(out.launches, p.launches);
    append(out.kernels, p.kernels);
    append(out.ranges, p.ranges);
    append(out.graph_nodes, p.graph_nodes);
    append(out.mem_ops, p.mem_ops);
    append(out.segments, p.segments);
    append(out.range_callbacks, p.range_callbacks);
    for (LogData::RecordMark m : p.segment_marks)
      out.segment_marks.push_back({m.launches + out.launch_records, m.kernels + out.kernel_records,
                                   m.mem_ops + out.mem_op_records});
    for (auto& snap : p.snapshots) out.snapshots.push_back(std::move(snap));
    out.summary_mode = out.summary_mode || p.summary_mode;
    out.incomplete_snapshots += p.incomplete_snapshots;
    out.launch_records += p.launch_records;
    out.mem_call_records += p.mem_call_records;
    out.kernel_records += p.kernel_records;
    out.range_records += p.range_records;
    out.graph_node_records += p.graph_node_records;
    out.mem_op_records += p.mem_op_records;
    if (p.has_stats) {
      sumStats(out.stats, p.stats);
      out.has_stats = true;
      out.has_not_written_stats = out.has_not_written_stats || p.has_not_written_stats;
    }
    if (last) {
      out.complete = p.complete;
      out.snapshot_cut_at_end = p.snapshot_cut_at_end;
      out.last_intact_chunk = p.last_intact_chunk;
      out.last_intact_end = p.last_intact_end;
    }
    if (p.after_end_bytes > 0 && out.after_end_bytes == 0) {
      out.after_end_offset = p.after_end_offset;
      out.after_end_bytes = p.after_end_bytes;
      out.after_end_is_log = p.after_end_is_log;
    }
    out.truncated = out.truncated || p.truncated;
    out.chunks_read += p.chunks_read;
    out.chunks_skipped += p.chunks_skipped;
    out.packed_chunks += p.packed_chunks;
    out.file_bytes += p.file_bytes;
    for (auto& issue : p.issues) {
      issue.message = "part " + std::to_string(part) + " (" + name(i) + "): " + issue.message;
      out.issues.push_back(std::move(issue));
    }
    if (last && continued_in > 0)
      addIssue(out, ReadIssue::Severity::kWarning, p.file_bytes, -1,
            "rotated log: it continues in part " + std::to_string(continued_in) + ", which was not given (" + name(i) +
                " is part " + std::to_string(part) + "): its records are missing from this report");
  }
  markMissing(out, str_def, scope_def);  // an id is missing from the joined log only if no part defined it
  // Ids used without a definition in some part and defined by none.
  for (const LogData& p : parts) out.undefined_scope_refs.insert(out.undefined_scope_refs.end(),
                                                                 p.undefined_scope_refs.begin(), p.undefined_scope_refs.end());
  std::sort(out.undefined_scope_refs.begin(), out.undefined_scope_refs.end());
  out.undefined_scope_refs.erase(std::unique(out.undefined_scope_refs.begin(), out.undefined_scope_refs.end()),
                                 out.undefined_scope_refs.end());
  std::erase_if(out.undefined_scope_refs, [&](uint32_t id) { return id < scope_def.size() && scope_def[id]; });
  out.parts = static_cast<uint32_t>(parts.size());
  return out;
}

std::string LogData::meta(std::string_view key) const {
  for (auto it = metadata.rbegin(); it != metadata.rend(); ++it)
    if (it->first == key) return it->second;
  return {};
}

bool gpuTimeRecorded(const LogData& d) {
  const std::string v = d.meta("gpu_time");
  return v != "off" && v != "graphs";
}

bool graphGpuTimeRecorded(const LogData& d) { return d.meta("gpu_time") == "graphs"; }

std::string_view LogData::str(uint32_t id) const {
  if (id == kNoString) return {};
  if (stringDefined(id)) return strings[id];
  // One text per bad id, kept per thread in a node-based map (its elements never move): a caller may
  // hold the view of one bad id while it asks for another (a scope's name, then its domain and path).
  thread_local std::unordered_map<uint32_t, std::string> bad;
  auto [it, added] = bad.try_emplace(id);
  if (added) it->second = "<bad string id " + std::to_string(id) + ">";
  return it->second;
}

std::string lostRangeName(uint32_t log_scope_id) { return "(lost range " + std::to_string(log_scope_id) + ")"; }

uint32_t LogData::scopeIndex(uint32_t log_id) const {
  if (scope_log_ids.empty() || log_id >= scope_id_end) return log_id;
  const auto it = std::lower_bound(scope_log_ids.begin(), scope_log_ids.end(), log_id);
  return it != scope_log_ids.end() && *it == log_id ? static_cast<uint32_t>(it - scope_log_ids.begin())
                                                    : kUnknownScopeIndex;
}

void compactScopes(LogData& log, size_t min_dropped) {
  const size_t n = log.scopes.size();
  if (!log.scope_log_ids.empty() || n <= 2) return;
  constexpr uint32_t kDrop = ~uint32_t{0};
  std::vector<uint32_t> index(n, kDrop);  // old id -> new index (kDrop: dropped)
  auto keep = [&](uint32_t id) {
    if (id < n) index[id] = 0;
  };
  keep(kRootScope);
  keep(kOverflowScope);
  for (uint32_t id = 1; id < n; ++id)
    if (log.scopeDefined(id)) {
      keep(id);
      keep(log.scopes[id].parent_id);
    }
  for (uint32_t id : log.undefined_scope_refs) keep(id);
  uint32_t kept = 0;
  for (uint32_t& i : index)
    if (i != kDrop) i = kept++;
  if (n - kept < min_dropped) return;

  auto map = [&](uint32_t id) { return id >= n ? id : index[id] != kDrop ? index[id] : LogData::kUnknownScopeIndex; };
  std::vector<ScopeBody> scopes(kept);
  std::vector<bool> missing;
  log.scope_log_ids.assign(kept, 0);
  for (uint32_t id = 0; id < n; ++id) {
    if (index[id] == kDrop) continue;
    const uint32_t to = index[id];
    const bool defined = log.scopeDefined(id);
    scopes[to] = log.scopes[id];
    if (defined && id != kRootScope) scopes[to].parent_id = map(log.scopes[id].parent_id);
    log.scope_log_ids[to] = id;
    if (!defined) {
      missing.resize(kept, false);
      missing[to] = true;
    }
  }
  log.scopes = std::move(scopes);
  log.scopes_missing = std::move(missing);
  log.scope_id_end = static_cast<uint32_t>(n);
  for (auto& l : log.launches) l.scope_id = map(l.scope_id);
  for (auto& r : log.ranges) r.scope_id = map(r.scope_id);
  for (auto& g : log.graph_nodes) g.scope_id = map(g.scope_id);
  for (auto& c : log.range_callbacks) c.scope_id = map(c.scope_id);
  for (auto& sd : log.snapshots) {
    for (auto& r : sd.scopes) r.scope_id = map(r.scope_id);
    for (auto& r : sd.kernels)
      if (!(r.flags & kSnapshotKernelUnmatched)) r.scope_id = map(r.scope_id);
  }
}

bool LogData::isOverflowScope(uint32_t id) const {
  if (id != kOverflowScope || !scopeDefined(id) || !stringDefined(kOverflowString)) return false;
  const ScopeBody& s = scopes[id];
  return s.parent_id == kRootScope && s.name_id == kOverflowString && strings[kOverflowString] == kStringTableFullText;
}

std::string LogData::scopePath(uint32_t scope_id) const {
  if (scope_id == kRootScope) return "(no range)";
  if (!scopeDefined(scope_id)) return "<bad scope id " + std::to_string(logScopeId(scope_id)) + ">";
  std::vector<uint32_t> chain;
  std::unordered_set<uint32_t> seen;
  uint32_t id = scope_id;
  bool broken = false;
  std::string lost;  // a parent whose definition was lost: shown as "(lost range P)/..."
  while (id != kRootScope) {
    if (id < scopes.size() && !scopeDefined(id)) {
      lost = lostRangeName(logScopeId(id)) + "/";
      break;
    }
    if (id >= scopes.size() || !seen.insert(id).second) {
      broken = true;  // bad parent id or a cycle: show what we have
      break;
    }
    if (chain.size() >= kMaxScopeDepth) {
      lost = kOuterRangesCut;  // deeper than the library nests (a crafted chain): its innermost ranges
      break;
    }
    chain.push_back(id);
    id = scopes[id].parent_id;
  }
  std::string path = broken ? "<broken parent>/" : lost;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    path += str(scopes[*it].name_id);  // kNoString: the empty name, "" (a path "a//b" or "")
    if (std::next(it) != chain.rend()) path += '/';
  }
  return path;
}

bool LogData::damaged() const {
  for (const auto& i : issues)
    if (i.severity == ReadIssue::Severity::kError) return true;
  return false;
}

LogData readLog(std::span<const uint8_t> bytes, const ReadOptions& options) {
  return logread::decodeLog(bytes, options, [](size_t) {}, [](size_t, size_t) {});
}

LogData readLogFile(const std::string& path, const ReadOptions& options) {
  auto failed = [](std::string message) {
    LogData log;
    log.strings.resize(1);
    log.scopes.resize(1);
    error(log, 0, -1, std::move(message));
    return log;
  };
  // Only regular files: a FIFO would block forever, a folder has no bytes.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return failed(path + " is not a regular file");
  MappedFile file;
  std::string why;
  if (!file.open(path, why)) return failed(why);
  LogData log = logread::decodeLog(file.bytes(), options, [&file](size_t done) { file.release(done); },
                                   [&file](size_t from, size_t to) { file.drop(from, to); });
  if (const uint64_t at = file.shrankAt(); at != UINT64_MAX)
    error(log, at, -1,
          "the file shrank while it was read (another process truncated or rewrote it): its bytes from byte " +
              std::to_string(at) + " on read as zeros; what comes before them is read");
  return log;
}

}  // namespace kc
