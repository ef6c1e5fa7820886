#include "tools/name_elision.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tools/kernel_names.h"
#include "tools/text.h"

namespace kc {

std::string elideMiddle(std::string_view s, size_t max_width) {
  if (max_width < 5) max_width = 5;
  if (displayWidth(s) <= max_width) return std::string(s);
  const size_t keep = max_width - 1;  // columns kept around the "…"
  const size_t head = (keep + 1) / 2, tail = keep - head;
  return std::string(s.substr(0, headBytes(s, head))) + "…" + std::string(s.substr(tailStart(s, tail)));
}

namespace {
// Bytes `a` and `b` have in common at the start and at the end, in whole UTF-8 characters (a common run that
// ends inside a character does not count that character). The end run does not reach into the start run.
size_t commonPrefixBytes(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t pre = 0;
  while (pre < n && a[pre] == b[pre]) ++pre;
  // (pre == a.size(): `a` is a prefix of `b` and ends at a character boundary; a[pre] is past its end.)
  while (pre > 0 && pre < a.size() && (static_cast<unsigned char>(a[pre]) & 0xC0) == 0x80) --pre;
  return pre;
}
size_t commonSuffixBytes(std::string_view a, std::string_view b, size_t pre) {
  const size_t n = std::min(a.size(), b.size());
  size_t suf = 0;
  while (suf < n - std::min(pre, n) && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  while (suf > 0 && (static_cast<unsigned char>(a[a.size() - suf]) & 0xC0) == 0x80) --suf;
  return suf;
}
// Most characters of a word kept beside the character where two names differ (widthTelling()).
constexpr size_t kMaxWordShown = 24;
bool wordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
// The smallest elideMiddle() width at which `a`, with `pre` bytes in common with another name at the start
// and `suf` at the end, shortens to a text that shows where they differ, with the rest of the word (letters
// and digits, at most kMaxWordShown more) that the first different character starts or ends:
// "…uniform_and_transform" against "…normal_and_transform", not "…m_and_transform" against
// "…l_and_transform". With p characters in common at the start and q at the end: a head of p + 1
// characters or more (width 2p + 2 or more), or a tail of q + 1 or more (width 2q + 3 or more).
size_t widthTelling(std::string_view a, size_t pre, size_t suf) {
  const size_t p = displayWidth(a.substr(0, pre)), q = displayWidth(a.substr(a.size() - suf));
  size_t head_end = pre;  // the head reaches to the end of the word the difference starts
  while (head_end < a.size() && wordByte(a[head_end]) && head_end - pre < kMaxWordShown) ++head_end;
  size_t tail_start = a.size() - suf;  // the tail reaches back to the start of the word the difference ends
  while (tail_start > pre && wordByte(a[tail_start - 1]) && a.size() - suf - tail_start < kMaxWordShown) --tail_start;
  const size_t head = std::max(p + 1, displayWidth(a.substr(0, head_end)));
  const size_t tail = std::max(q + 1, displayWidth(a.substr(tail_start)));
  return std::min(2 * head, 2 * tail + 1);
}
size_t widthTelling(std::string_view a, std::string_view b) {
  const size_t pre = commonPrefixBytes(a, b);
  return widthTelling(a, pre, commonSuffixBytes(a, b, pre));
}

// For each of the different names `names[idx[k]]` of one clash group, a width at which it shows a character
// where it differs from every other name of the group: the longest start it shares with any of them is
// shared with a neighbour in sorted order, the longest end with a neighbour in the order of reversed
// names, so the group costs a sort, not a comparison of every pair (a chain of nested ranges makes every
// path a clash of every other). The width is at least what any single other name needs (the longest
// start and end need not come from the same name): never too narrow to tell them apart.
std::vector<size_t> widthsTellingGroup(const std::vector<std::string>& names, const std::vector<size_t>& idx) {
  std::vector<size_t> by_name(idx), by_end(idx);
  std::sort(by_name.begin(), by_name.end(), [&](size_t x, size_t y) { return names[x] < names[y]; });
  auto endLess = [&](size_t x, size_t y) {
    return std::lexicographical_compare(names[x].rbegin(), names[x].rend(), names[y].rbegin(), names[y].rend());
  };
  std::sort(by_end.begin(), by_end.end(), endLess);
  std::unordered_map<size_t, size_t> pre, suf;  // index -> longest common start / end with another name
  // The nearest name before and after position k that differs from names[order[k]] (equal names sit together).
  auto longest = [&](const std::vector<size_t>& order, auto common, std::unordered_map<size_t, size_t>& into) {
    for (size_t k = 0; k < order.size(); ++k) {
      const std::string& me = names[order[k]];
      size_t best = 0;
      for (size_t j = k; j-- > 0;)
        if (names[order[j]] != me) {
          best = std::max(best, common(me, names[order[j]]));
          break;
        }
      for (size_t j = k + 1; j < order.size(); ++j)
        if (names[order[j]] != me) {
          best = std::max(best, common(me, names[order[j]]));
          break;
        }
      into[order[k]] = best;
    }
  };
  longest(by_name, [](std::string_view a, std::string_view b) { return commonPrefixBytes(a, b); }, pre);
  longest(by_end, [](std::string_view a, std::string_view b) { return commonSuffixBytes(a, b, 0); }, suf);
  std::vector<size_t> out;
  for (size_t i : idx) {
    const std::string& a = names[i];
    // The end run may not reach into the start run (elideMiddle's head and tail do not overlap).
    const size_t p = pre[i], q = std::min(suf[i], a.size() - std::min(p, a.size()));
    // A name with no different name in the group (it clashes with a name shown whole): 2, no word to show.
    const bool other = names[by_name.front()] != a || names[by_name.back()] != a;
    out.push_back(other ? widthTelling(a, p, q) : 2);
  }
  return out;
}
}  // namespace

std::vector<std::string> elideDistinct(const std::vector<std::string>& names, size_t max_width) {
  if (max_width < 5) max_width = 5;
  std::vector<size_t> width(names.size(), max_width);
  std::vector<std::string> out(names.size());
  for (size_t i = 0; i < names.size(); ++i) out[i] = elideMiddle(names[i], max_width);
  for (;;) {
    // Shortened text -> the indexes of the names shortened to it; the names shown in full.
    std::unordered_map<std::string, std::vector<size_t>> by_text;
    std::unordered_set<std::string_view> whole;
    for (size_t i = 0; i < names.size(); ++i) {
      if (out[i] != names[i]) by_text[out[i]].push_back(i);  // a name shown in full needs no more width
      else whole.insert(names[i]);
    }
    bool widened = false;
    for (const auto& [text, idx] : by_text) {
      bool clash = whole.count(text) > 0;  // a shortened name that reads as another name shown in full
      for (size_t i : idx) clash = clash || names[i] != names[idx.front()];
      if (!clash) continue;
      // Straight to the width at which its head or tail reaches a difference from each name it clashes
      // with (one character at a time took as many rounds as the names' common middle is long).
      const std::vector<size_t> telling = widthsTellingGroup(names, idx);
      for (size_t k = 0; k < idx.size(); ++k) {
        const size_t i = idx[k];
        // (A name with no different name in the group gets 2 from widthsTellingGroup: no more than +1.)
        size_t need = std::max(width[i] + 1, telling[k]);
        if (whole.count(text) > 0) need = std::max(need, widthTelling(names[i], text));
        width[i] = need;
        out[i] = elideMiddle(names[i], width[i]);
        widened = true;
      }
    }
    if (!widened) break;
  }
  // A column is as wide as its widest text: a name shortened less to tell it apart widens it, and the
  // others need not be cut shorter than that (a 66-character name cut at 60 beside a 100-wide one).
  size_t widest = max_width;
  for (size_t i = 0; i < names.size(); ++i)
    if (out[i] != names[i]) widest = std::max(widest, width[i]);
  if (widest > max_width)
    for (size_t i = 0; i < names.size(); ++i)
      if (out[i] != names[i] && width[i] < widest) out[i] = elideMiddle(names[i], widest);
  return out;
}

void tellKernelsApart(std::vector<std::string>& shown, const std::vector<std::string>& names, size_t max_width) {
  std::map<std::string, std::vector<size_t>> by_shown;
  for (size_t i = 0; i < shown.size(); ++i) by_shown[shown[i]].push_back(i);
  for (const auto& entry : by_shown) {
    const std::vector<size_t>& group = entry.second;  // named: clang 14 cannot capture a structured binding
    const std::string& first = names[group.front()];
    if (std::all_of(group.begin(), group.end(), [&](size_t i) { return names[i] == first; })) continue;
    std::vector<std::string> demangled;
    for (size_t i : group) demangled.push_back(displayText(demangleKernelName(names[i])));
    const std::vector<std::string> distinct = elideDistinct(demangled, max_width);
    for (size_t k = 0; k < group.size(); ++k) shown[group[k]] = distinct[k];
  }
}

}  // namespace kc
