// Display width of table text (wide East Asian characters, combining marks, invalid UTF-8) and text
// tables fitted to a width by narrowing their name columns.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "tools/kernel_names.h"
#include "tools/name_elision.h"
#include "tools/table_width.h"

namespace {

/// `s` repeated `n` times.
std::string times(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("display width: ASCII and narrow characters take one column each") {
  CHECK(kc::displayWidth("") == 0);
  CHECK(kc::displayWidth("step/gate") == 9);
  CHECK(kc::displayWidth("472 µs") == 6);  // µ: two bytes, one column
  CHECK(kc::displayWidth("a…b ×3 ~") == 8);
}

TEST_CASE("display width: wide East Asian characters take two columns") {
  CHECK(kc::displayWidth("前向") == 4);            // CJK ideographs
  CHECK(kc::displayWidth("step/注意力") == 11);
  CHECK(kc::displayWidth("ｆｕｌｌ") == 8);        // fullwidth Latin letters
  CHECK(kc::displayWidth("カーネル") == 8);        // katakana
}

TEST_CASE("display width: combining marks take no column") {
  CHECK(kc::displayWidth("cafe\xcc\x81") == 4);      // e + U+0301 COMBINING ACUTE ACCENT
  CHECK(kc::displayWidth("\xe5\x89\x8d\xcc\x81") == 2);  // 前 + U+0301
}

TEST_CASE("display width: invalid UTF-8 counts one replacement character per byte, never crashes") {
  CHECK(kc::displayWidth("\xff") == 1);
  CHECK(kc::displayWidth("a\xff" "b") == 3);
  CHECK(kc::displayWidth("caf\xe9") == 4);     // Latin-1 é
  CHECK(kc::displayWidth("\xe5\x89") == 2);    // a CJK character cut after two of its three bytes
  CHECK(kc::displayWidth("\x80\x80\x80") == 3);  // continuation bytes alone
  CHECK(kc::displayWidth("\xed\xa0\x80") == 3);  // an encoded surrogate (not valid UTF-8)
  // Shortening such text keeps every byte whole and the width within bounds.
  const std::string bad = times("\xff", 100);
  CHECK(kc::displayWidth(kc::elideMiddle(bad, 20)) == 20);
  CHECK(kc::displayWidth(kc::ellipsize(bad, 20)) == 20);
}

TEST_CASE("names are shortened by display columns: a wide character is never split") {
  const std::string cjk = times("注", 100);  // 200 columns
  const std::string e = kc::elideMiddle(cjk, 60);
  // 59 columns around the "…": 15 characters (30 columns) before it, 14 (28) after: 59 columns in all.
  CHECK(e == times("注", 15) + "…" + times("注", 14));
  CHECK(kc::displayWidth(e) <= 60);
  CHECK(kc::displayWidth(e) >= 59);
  const std::string c = kc::ellipsize(cjk, 9);
  CHECK(c == times("注", 4) + "…");
  CHECK(kc::displayWidth(c) == 9);
  // A name of 60 columns stays whole; one of 62 (31 wide characters) does not.
  CHECK(kc::elideMiddle(times("注", 30), 60) == times("注", 30));
  CHECK(kc::elideMiddle(times("注", 31), 60) != times("注", 31));
  // A combining mark stays with its base character: the tail does not start with it.
  const std::string marks = times("e\xcc\x81", 100);
  const std::string m = kc::elideMiddle(marks, 21);
  CHECK(kc::displayWidth(m) == 21);
  CHECK(m.substr(m.find("…") + std::string("…").size(), 1) == "e");
}

TEST_CASE("names shortened together stay distinguishable with wide characters") {
  const std::string head = times("前", 30), tail = times("后", 30);
  const auto e = kc::elideDistinct({head + "甲" + tail, head + "乙" + tail}, 60);
  CHECK(e[0] != e[1]);
}

TEST_CASE("fitTable narrows the name column, the widest first, never the numbers") {
  // A heading and three rows: a name column of 80 columns, a number column.
  std::vector<std::vector<std::string>> rows{{"range", "kernels"}};
  kc::NameColumn names;
  names.index = 0;
  names.widest = 1000;
  for (const std::string& n : {times("a", 80), times("注", 40), std::string("short")}) {
    names.names.push_back(n);
    rows.push_back({n, "123456"});
  }
  const auto original = rows;
  // 80 + 2 + 7 = 89 columns: fits 89 as it is, nothing changed.
  CHECK_FALSE(kc::fitTable(rows, 1, {names}, 0, 89));
  CHECK(rows == original);
  CHECK_FALSE(kc::fitTable(rows, 1, {names}, 0, 0));  // 0: no limit
  // 50 columns: the names are cut to 41 columns, the numbers kept.
  REQUIRE(kc::fitTable(rows, 1, {names}, 0, 50));
  for (size_t r = 1; r < rows.size(); ++r) {
    CHECK(kc::displayWidth(rows[r][0]) <= 41);
    CHECK(rows[r][1] == "123456");
  }
  CHECK(rows[3][0] == "short");
  CHECK(rows[0] == original[0]);  // headings never cut
  // Narrower than kMinFitNameColumn + the numbers: left as it is (printed unshortened).
  auto narrow = original;
  CHECK_FALSE(kc::fitTable(narrow, 1, {names}, 0, kc::kMinFitNameColumn + 8));
  CHECK(narrow == original);
  CHECK(kc::fitTable(narrow, 1, {names}, 0, kc::kMinFitNameColumn + 9));
}

TEST_CASE("fitTable: a list column is cut at its end, prefixes and suffixes kept whole") {
  std::vector<std::vector<std::string>> rows{{"range", "n", "ranges"}};
  kc::NameColumn tree, list;
  tree.index = 0;
  list.index = 2;
  list.cut_end = true;
  list.widest = std::numeric_limits<size_t>::max();
  for (int i = 0; i < 3; ++i) {
    tree.prefix.push_back(std::string(2 * i, ' '));
    tree.names.push_back(times("名", 10) + std::to_string(i));
    tree.suffix.push_back(i == 1 ? " ~" : "");
    list.names.push_back(times("step/x ×20, ", 10));
    rows.push_back({tree.prefix[i] + tree.names[i] + tree.suffix[i], "1", list.names[i]});
  }
  REQUIRE(kc::fitTable(rows, 1, {tree, list}, 0, 60));
  for (size_t r = 1; r < rows.size(); ++r) {
    CHECK(rows[r][2].ends_with("…"));
    CHECK(rows[r][1] == "1");
  }
  CHECK(rows[2][0].starts_with("  "));
  CHECK(rows[2][0].ends_with("1 ~"));
  CHECK(rows[3][0] == "    " + times("名", 10) + "2");  // 25 columns: not the widest, not cut
}

TEST_CASE("fitColumns: columns dropped by rank, highest first, a rank's columns together; numbers whole") {
  // range, launches, GPU A, GPU B, GPU change, CPU time: ranks 0, 1, 0, 0, 0, 2.
  std::vector<std::vector<std::string>> rows{{"range", "launches", "GPU A", "B", "change", "CPU time"}};
  kc::NameColumn names;
  names.index = 0;
  for (int i = 0; i < 3; ++i) {
    names.names.push_back("range_" + std::string(30, char('a' + i)));
    rows.push_back({names.names.back(), "123456", "1.25 ms", "2.50 ms", "+100%", "999.9 ms"});
  }
  const auto original = rows;
  const std::vector<unsigned> ranks{0, 1, 0, 0, 0, 2};
  auto all = original;
  CHECK(kc::fitColumns(all, 1, {names}, 0, 0, ranks).empty());  // 0: no limit
  CHECK(all == original);
  // Wide enough with names shortened: nothing dropped.
  all = original;
  CHECK(kc::fitColumns(all, 1, {names}, 0, 75, ranks).empty());
  CHECK(all[0].size() == 6);
  // 60: CPU time alone goes.
  all = original;
  CHECK(kc::fitColumns(all, 1, {names}, 0, 60, ranks).columns == std::vector<size_t>{5});
  // 50: CPU time (rank 2) goes, then launches (rank 1); GPU A, B, change stay whole.
  all = original;
  const kc::DroppedColumns d = kc::fitColumns(all, 1, {names}, 0, 50, ranks, {"", "launches", "", "", "", "CPU"});
  CHECK(d.columns == std::vector<size_t>{5, 1});
  CHECK(d.labels == std::vector<std::string>{"CPU", "launches"});
  REQUIRE(all[0] == std::vector<std::string>{"range", "GPU A", "B", "change"});
  for (size_t r = 1; r < all.size(); ++r) {
    CHECK(all[r][1] == "1.25 ms");
    CHECK(all[r][3] == "+100%");
    size_t line = 3 * 2;
    for (const auto& c : all[r]) line += kc::displayWidth(c);
    CHECK(line <= 50);
  }
  CHECK(all[1][0] != all[2][0]);  // names still different
  const std::string note = kc::droppedColumnsLine(d, 60);
  CHECK(note.find("CPU, launches") != std::string::npos);
  CHECK(note.find("--width 0") != std::string::npos);
}

TEST_CASE("fitColumns: names like each other narrowed around their difference at the last resort") {
  std::vector<std::vector<std::string>> rows{{"range", "n"}};
  kc::NameColumn names;
  names.index = 0;
  for (const char* v : {"geglu", "swiglu"})
    for (const char* a : {"sdpa", "none"}) {
      names.names.push_back(std::string("block norm=rms mlp=") + v + " attn=" + a + " dtype=bf16 t=4096 h=2048 i=5504");
      rows.push_back({names.names.back(), "1"});
    }
  kc::fitColumns(rows, 1, {names}, 0, 40, {0, 0});
  std::set<std::string> shown;
  for (size_t r = 1; r < rows.size(); ++r) {
    CHECK(kc::displayWidth(rows[r][0]) + 2 + 1 <= 40);
    shown.insert(rows[r][0]);
  }
  CHECK(shown.size() == 4);
}

TEST_CASE("wrapLine: at spaces with a hanging indent; a word longer than a line cut; blanks kept inside a line") {
  CHECK(kc::wrapLine("short line", 80) == "short line");
  CHECK(kc::wrapLine("aaaa bbbb cccc dddd", 0) == "aaaa bbbb cccc dddd");
  CHECK(kc::wrapLine("aaaa bbbb cccc dddd", 10) == "aaaa bbbb\n    cccc\n    dddd");
  CHECK(kc::wrapLine("  x:  aaaa bbbb", 12) == "  x:  aaaa\n      bbbb");
  CHECK(kc::wrapLine(std::string(25, 'z'), 10) == std::string(10, 'z') + "\n    " + std::string(6, 'z') + "\n    " +
                                                     std::string(6, 'z') + "\n    " + std::string(3, 'z'));
  for (const auto& line : {std::string("前向传播 前向传播 前向传播"), std::string(40, 'q') + " r"}) {
    const std::string w = kc::wrapLine(line, 12);
    size_t at = 0;
    while (at <= w.size()) {
      const size_t nl = w.find('\n', at);
      CHECK(kc::displayWidth(w.substr(at, nl == std::string::npos ? std::string::npos : nl - at)) <= 12);
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
  }
  CHECK(kc::wrapText("a\nbbbb cccc\n", 8) == "a\nbbbb\n    cccc\n");
}
