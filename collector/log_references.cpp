// The record decoder's checks of string and scope ids once every chunk is read: references to ids no
// record defined, gaps in the tables (definitions lost to damage) and cycles of scope parents. Part of
// RecordDecoder (log_decoder.h); on the reading thread only.
#include <algorithm>
#include <string>
#include <vector>

#include "collector/counted.h"
#include "collector/log_decoder.h"

namespace kc::logread {
namespace {

/// Most out-of-range references reported one by one; the rest are counted in one more issue.
constexpr size_t kMaxReferenceIssues = 16;

}  // namespace

void markMissing(LogData& log, const std::vector<bool>& str_def, const std::vector<bool>& scope_def) {
  bool any_missing = false;
  log.strings_missing.assign(log.strings.size(), false);
  log.scopes_missing.assign(log.scopes.size(), false);
  for (size_t id = 1; id < log.strings.size(); ++id) any_missing |= (log.strings_missing[id] = !str_def[id]);
  for (size_t id = 1; id < log.scopes.size(); ++id) any_missing |= (log.scopes_missing[id] = !scope_def[id]);
  if (!any_missing) {
    log.strings_missing.clear();
    log.scopes_missing.clear();
  }
}

std::string idList(const std::vector<uint32_t>& ids, size_t max_items) {
  std::string out;
  size_t items = 0;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (items == max_items) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    ++items;
    i = j + 1;
  }
  return out;
}

void RecordDecoder::noteRef(bool is_string, uint32_t id, const char* kind, uint64_t index) {
  auto it = refs_.find({is_string, id});
  if (it == refs_.end()) {
    if (refs_.size() >= kMaxPendingRefIds) {
      ++refs_unlisted_;
      return;
    }
    it = refs_.emplace(std::make_pair(is_string, id), Ref{0, kind, index, rec_at_, rec_chunk_}).first;
  }
  ++it->second.records;
}

/// Reports every string or scope id a decoded record refers to that no record defined: past the highest
/// defined id, or a gap below it (a lost chunk, or a corrupt record inside a verified chunk). The records
/// are kept; LogData::str() and scopePath() show such ids as "<bad ... id N>" (LogData::strings_missing,
/// scopes_missing mark the gaps), the analysis credits undefined scopes to the root. Runs after all chunks:
/// a definition may follow its first use by a chunk. References were noted while decoding (refs_, with the
/// location of the first record that used the id); the last complete snapshot is checked here. One issue
/// per id (at most kMaxReferenceIssues), at the first record that used it, then one issue listing every
/// undefined id.
void RecordDecoder::checkReferences() {
  LogData& log = log_;
  const size_t n_strings = log.strings.size(), n_scopes = log.scopes.size();
  // Gaps: ids below the table sizes that no record defined.
  str_def_.resize(std::max(str_def_.size(), n_strings));
  scope_def_.resize(std::max(scope_def_.size(), n_scopes));
  markMissing(log, str_def_, scope_def_);
  if (!log.snapshots.empty()) {  // the last complete snapshot is the one the analysis uses
    const SnapshotData& sd = log.snapshots.back();
    setRecordAt(sd.offset, sd.chunk);
    for (size_t i = 0; i < sd.scopes.size(); ++i) refScope(sd.scopes[i].scope_id, "snapshot scope", i);
    for (size_t i = 0; i < sd.kernels.size(); ++i) {
      refString(sd.kernels[i].name_id, "snapshot kernel", i);
      if (!(sd.kernels[i].flags & kSnapshotKernelUnmatched)) refScope(sd.kernels[i].scope_id, "snapshot kernel", i);
    }
  }
  // Earlier snapshots (`kcount summary --series`) are not checked, but their ids are kept by compactScopes().
  for (const SnapshotData& sd : log.snapshots) {
    for (const auto& r : sd.scopes) markScopeRef(r.scope_id);
    for (const auto& r : sd.kernels)
      if (!(r.flags & kSnapshotKernelUnmatched)) markScopeRef(r.scope_id);
  }
  log.undefined_scope_refs.clear();
  for (uint32_t id = 1; id < scope_ref_.size(); ++id)
    if (scope_ref_[id] && !(id < scope_def_.size() && scope_def_[id])) log.undefined_scope_refs.push_back(id);
  size_t listed = 0;
  uint64_t unlisted = refs_unlisted_, records[2] = {0, 0};
  std::vector<uint32_t> undefined[2];  // [0] scopes, [1] strings
  for (const auto& [key, r] : refs_) {
    const auto& [is_string, id] = key;
    if (is_string ? (id < str_def_.size() && str_def_[id]) : (id < scope_def_.size() && scope_def_[id])) continue;
    undefined[is_string].push_back(id);
    records[is_string] += r.records;
    if (listed == kMaxReferenceIssues) {
      unlisted += r.records;
      continue;
    }
    ++listed;
    const size_t n = is_string ? n_strings : n_scopes;
    const std::string what = std::string(is_string ? "string" : "scope") + " id " + std::to_string(id);
    error(log, r.first_at, r.first_chunk,
          (id >= n ? what + " out of range (" + std::to_string(n) + (is_string ? " strings" : " scopes") + " defined)"
                   : what + " is not defined (no " + (is_string ? "string" : "scope") +
                         " record of the log defines it; its definition was lost)") +
              ": " + std::to_string(r.records) + (r.records == 1 ? " record refers" : " records refer") +
              " to it, the first is " + r.first_kind + " record " + std::to_string(r.first_index) + " " +
              recordPlace(r.first_at, r.first_chunk));
  }
  if (unlisted > 0)
    error(log, ReadIssue::kNoOffset, -1,
          std::to_string(unlisted) +
              " more references to string or scope ids out of range or not defined (found after reading)");
  if (!undefined[0].empty() || !undefined[1].empty()) {
    std::string text = "undefined ids (their definitions were lost; found after reading):";
    if (!undefined[1].empty())
      text += " " + counted(undefined[1].size(), "string id") + " (" + idList(undefined[1]) + "), used by " +
              counted(records[1], "record") + ", show as <bad string id N>" + (undefined[0].empty() ? "" : ";");
    if (!undefined[0].empty())
      text += " " + counted(undefined[0].size(), "scope id") + " (" + idList(undefined[0]) + "), used by " +
              counted(records[0], "record") + ", show as <bad scope id N>; their launches, kernels and "
              "ranges are counted in the row (unknown range: definition lost to damage)";
    if (refs_unlisted_ > 0) text += "; further ids not listed";
    error(log, ReadIssue::kNoOffset, -1, text);
  }
  checkScopeTree();
}

/// Reports each cycle of parent ids among the defined scopes (a scope that is, through its parents, its own
/// ancestor: damage a checksum cannot see, e.g. a corrupt record written as such). A writer defines a
/// scope's parent before it (docs/format.md), so no log it wrote has one. The analysis cuts such a chain
/// and hangs it under the top level (collector/analysis.cpp); here it is named, at the record of the scope
/// where the walk met itself, and the log reads as damaged. A parent id that is not defined is a lost
/// definition, reported by checkReferences(), not a cycle. At most kMaxReferenceIssues cycles are listed.
void RecordDecoder::checkScopeTree() {
  LogData& log = log_;
  const size_t n = std::min(log.scopes.size(), scope_def_.size());
  std::vector<uint8_t> state(n, 0);  // 0 not walked, 1 on the current walk, 2 reaches the top level or a lost one
  std::vector<uint32_t> walk;
  size_t cycles = 0;
  for (size_t start = 1; start < n; ++start) {
    if (!scope_def_[start] || state[start] != 0) continue;
    walk.clear();
    uint32_t id = static_cast<uint32_t>(start);
    while (id != kRootScope && id < n && scope_def_[id] && state[id] == 0) {
      state[id] = 1;
      walk.push_back(id);
      id = log.scopes[id].parent_id;
    }
    if (id != kRootScope && id < n && scope_def_[id] && state[id] == 1) {
      ++cycles;
      if (cycles <= kMaxReferenceIssues) {
        std::string members;
        const auto first = std::find(walk.begin(), walk.end(), id);
        for (auto it = first; it != walk.end(); ++it)
          members += (members.empty() ? "" : " -> ") + std::to_string(*it) + " (" + std::string(log.str(log.scopes[*it].name_id)) + ")";
        const auto [at, chunk] = id < scope_at_.size() ? scope_at_[id] : std::pair<uint64_t, int64_t>{ReadIssue::kNoOffset, -1};
        error(log, at, chunk,
              "damaged scope table: scope " + std::to_string(id) + " is its own ancestor through its parent ids (" +
                  members + " -> " + std::to_string(id) + "), defined " + recordPlace(at, chunk) +
                  "; its ranges are shown under the top level");
      }
    }
    for (uint32_t w : walk) state[w] = 2;
  }
  if (cycles > kMaxReferenceIssues)
    error(log, ReadIssue::kNoOffset, -1,
          std::to_string(cycles - kMaxReferenceIssues) + " more cycles of scope parent ids (found after reading)");
}

}  // namespace kc::logread
