// Which log files form one run (collector/run_files.h).
#include "collector/run_files.h"

#include <algorithm>

#include <sys/stat.h>

#include <fmt/format.h>

#include "collector/counted.h"
#include "collector/log_format.h"
#include "collector/shown_value.h"

namespace kc {

namespace {
/// K > 0 if `path` is the name the library gives part K of the run whose part `member_part` is named
/// `member` (rotatedPath); 0 otherwise.
uint32_t partOfRotatedName(const std::string& path, const std::string& member, uint32_t member_part) {
  const std::string ext = ".kcount";
  auto ends = [](const std::string& s, const std::string& tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::string first = member;  // the name of part 0
  if (member_part > 0) {
    const std::string tail = "." + std::to_string(member_part);
    if (ends(member, tail + ext)) first = member.substr(0, member.size() - tail.size() - ext.size()) + ext;
    else if (ends(member, tail)) first = member.substr(0, member.size() - tail.size());
    else return 0;
  }
  const bool with_ext = ends(first, ext);
  const std::string pre = (with_ext ? first.substr(0, first.size() - ext.size()) : first) + ".";
  const std::string suf = with_ext ? ext : "";
  if (path.size() <= pre.size() + suf.size() || path.compare(0, pre.size(), pre) != 0 || (with_ext && !ends(path, suf)))
    return 0;
  const std::string digits = path.substr(pre.size(), path.size() - pre.size() - suf.size());
  if (digits.empty() || digits.size() > 9 || digits[0] == '0' || digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return static_cast<uint32_t>(std::stoul(digits));
}
}  // namespace

void adoptUnnamedParts(const std::vector<std::string>& paths, const std::vector<LogData*>& logs) {
  for (size_t i = 0; i < logs.size() && i < paths.size(); ++i) {
    LogData& l = *logs[i];
    if (l.not_a_log || !runIdentity(l).empty() || l.rotationPart() > 0 || !l.meta(kMetaRotatedFile).empty()) continue;
    for (size_t j = 0; j < logs.size() && j < paths.size(); ++j) {
      const LogData& o = *logs[j];
      if (j == i || runIdentity(o).empty()) continue;
      const uint32_t k = partOfRotatedName(paths[i], paths[j], o.rotationPart());
      if (k == 0 || k == o.rotationPart()) continue;
      for (const char* key : {"host", "pid", "start_ns"}) l.metadata.emplace_back(key, o.meta(key));
      l.metadata.emplace_back(kMetaRotatedFile, std::to_string(k));
      l.issues.push_back({ReadIssue::Severity::kWarning, 0, -1,
                          "the file holds no metadata (the first chunk of a rotated part repeats it; that chunk is "
                          "not in the file): read as part " + std::to_string(k) + " of the run of " + paths[j] +
                              ", by its name"});
      break;
    }
  }
}

std::vector<LogData> readLogHeads(const std::vector<std::string>& paths) {
  std::vector<LogData> heads;
  heads.reserve(paths.size());
  for (const auto& p : paths) heads.push_back(readLogHead(p));
  return heads;
}

std::vector<std::vector<std::string>> groupRotatedParts(const std::vector<std::string>& paths) {
  return groupRotatedParts(paths, readLogHeads(paths));
}

std::vector<std::vector<std::string>> groupRotatedParts(const std::vector<std::string>& paths,
                                                        const std::vector<LogData>& heads) {
  struct File {
    std::string path;
    std::string id;
    uint32_t part = 0;
  };
  // A part without metadata (its first chunk not in the file) joins its run by its name.
  std::vector<LogData> named(heads.begin(), heads.begin() + std::min(heads.size(), paths.size()));
  std::vector<LogData*> ptrs;
  for (LogData& h : named) ptrs.push_back(&h);
  adoptUnnamedParts(paths, ptrs);
  std::vector<File> files;
  for (size_t i = 0; i < named.size(); ++i) files.push_back({paths[i], runIdentity(named[i]), named[i].rotationPart()});
  std::vector<std::vector<std::string>> groups;
  std::vector<bool> taken(files.size(), false);
  for (size_t i = 0; i < files.size(); ++i) {
    if (taken[i]) continue;
    std::vector<size_t> members{i};
    if (!files[i].id.empty())
      for (size_t j = i + 1; j < files.size(); ++j)
        if (!taken[j] && files[j].id == files[i].id) members.push_back(j);
    std::sort(members.begin(), members.end(), [&](size_t a, size_t b) { return files[a].part < files[b].part; });
    bool distinct = true;
    for (size_t k = 1; k < members.size(); ++k) distinct = distinct && files[members[k]].part != files[members[k - 1]].part;
    if (!distinct) members = {i};  // the same part twice (a file given twice): read each file alone
    std::vector<std::string> g;
    for (size_t m : members) {
      taken[m] = true;
      g.push_back(files[m].path);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<PartsGiven> partsGiven(const std::vector<std::string>& paths) {
  std::vector<LogData> read = readLogHeads(paths);
  std::vector<LogData*> named;
  for (auto& h : read) named.push_back(&h);
  adoptUnnamedParts(paths, named);  // a part without metadata, by its name
  std::vector<const LogData*> logs;
  for (const auto& h : read) logs.push_back(&h);
  return partsGiven(logs);
}

std::vector<PartsGiven> partsGiven(const std::vector<const LogData*>& logs) {
  struct Head {
    std::string id;
    uint32_t part = 0, next = 0;
  };
  std::vector<Head> heads;
  for (const LogData* h : logs)
    heads.push_back({runIdentity(*h), h->rotationPart(), h->isContinuedPart() ? h->continuedInPart() : 0});
  auto given = [&](const std::string& id, uint32_t part) {
    return std::any_of(heads.begin(), heads.end(), [&](const Head& h) { return h.id == id && h.part == part; });
  };
  std::vector<PartsGiven> out(logs.size());
  for (size_t i = 0; i < heads.size(); ++i) {
    const Head& h = heads[i];
    if (h.id.empty()) continue;
    for (uint32_t k = 0; k < h.part; ++k)
      if (!given(h.id, k)) out[i].missing_earlier.push_back(k);
    out[i].earlier = h.part > 0 && out[i].missing_earlier.empty();
    out[i].next = h.next > 0 && given(h.id, h.next);
  }
  return out;
}

std::vector<Duplicate> findDuplicates(const std::vector<std::string>& paths) {
  return findDuplicates(paths, readLogHeads(paths));
}

std::vector<Duplicate> findDuplicates(const std::vector<std::string>& paths, const std::vector<LogData>& heads) {
  std::vector<const LogData*> logs;
  for (const auto& h : heads) logs.push_back(&h);
  return findDuplicates(paths, logs);
}

std::vector<Duplicate> findDuplicates(const std::vector<std::string>& paths, const std::vector<const LogData*>& logs) {
  struct Key {
    bool stat_ok = false;
    dev_t dev = 0;
    ino_t ino = 0;
    std::string id;
    uint32_t part = 0;
    uint64_t bytes = 0;
    Duplicate::End end;
  };
  std::vector<Key> keys;
  std::vector<Duplicate> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    Key k;
    struct stat st {};
    if (::stat(paths[i].c_str(), &st) == 0) {
      k.stat_ok = true;
      k.dev = st.st_dev;
      k.ino = st.st_ino;
      k.bytes = static_cast<uint64_t>(st.st_size);
      if (S_ISREG(st.st_mode) && !logs[i]->not_a_log) {
        k.id = runIdentity(*logs[i]);
        k.part = logs[i]->rotationPart();
        k.end = {logs[i]->file_bytes == k.bytes, logs[i]->complete,
                 logs[i]->dataAfterEnd() ? logs[i]->after_end_offset : 0, logs[i]->after_end_is_log};
      }
    }
    for (size_t j = 0; j < keys.size(); ++j) {
      const Key& o = keys[j];
      if (!k.stat_ok || !o.stat_ok) continue;
      if (std::any_of(out.begin(), out.end(), [&](const Duplicate& d) { return d.index == j; })) continue;
      const bool same_file = k.dev == o.dev && k.ino == o.ino;
      if (same_file || (!k.id.empty() && k.id == o.id && k.part == o.part)) {
        out.push_back({i, j, same_file, k.part, o.bytes, k.bytes, o.end, k.end});
        break;
      }
    }
    keys.push_back(std::move(k));
  }
  return out;
}

std::string duplicateText(const std::vector<std::string>& paths, const Duplicate& d) {
  const std::string first = shownPath(paths[d.original]);
  const std::string again = shownPath(paths[d.index]);
  if (d.same_file) return "the same file as " + first + " (given twice)";
  std::string s = first + " and " + again + " are copies of one recording (same host, pid and start" +
                  (d.part > 0 ? fmt::format(", rotated part {}", d.part) : std::string()) + ")";
  if (!d.differs()) return s;
  // The larger file may be the smaller one with bytes after its End record (a log twice over, junk appended).
  const bool again_larger = d.bytes > d.original_bytes;
  const Duplicate::End& large = again_larger ? d.end : d.original_end;
  const Duplicate::End& small = again_larger ? d.original_end : d.end;
  const uint64_t small_bytes = std::min(d.bytes, d.original_bytes), large_bytes = std::max(d.bytes, d.original_bytes);
  std::string why;
  if (large.read && large.after_end_offset == small_bytes && small.read && small.after_end_offset == 0)
    why = fmt::format("{} is {} followed by {} after its end record{}", again_larger ? again : first,
                      again_larger ? first : again, counted(large_bytes - small_bytes, "byte"),
                      large.after_end_is_log ? ": a second log (the recording twice over, or files concatenated)"
                                             : " that are not a log");
  else if (large.whole && small.whole)
    why = !large.read || !small.read ? "one was copied before the recording ended, or was cut"
          : large.after_end_offset != 0 || small.after_end_offset != 0 ? "one has bytes after its end record"
                                                                       : "their chunks differ";
  else
    why = "one was copied before the recording ended, was cut, or has bytes after its end record";
  s += fmt::format(" of different sizes ({} and {}: {})", d.original_bytes, counted(d.bytes, "byte"), why);
  return s;
}

}  // namespace kc
