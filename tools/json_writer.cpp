#include "tools/json_writer.h"

#include <algorithm>

namespace kc {

std::string dumpJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonWriter::indent(size_t levels) {
  static constexpr std::string_view kSpaces = "                                ";
  for (size_t n = 2 * levels; n > 0;) {
    const size_t k = std::min(n, kSpaces.size());
    out_.write(kSpaces.data(), static_cast<std::streamsize>(k));
    n -= k;
  }
}

void JsonWriter::beforeValue() {
  // The document, or a member's value after its key: written where the writer stands.
  if (open_.empty() || open_.back().object) return;
  Level& in = open_.back();
  out_ << (in.empty ? "\n" : ",\n");
  in.empty = false;
  indent(open_.size());
}

void JsonWriter::value(const nlohmann::json& v) {
  beforeValue();
  // dumpJson() lays `v` out from column 0: every line after its first moves right by the depth it is
  // written at. A newline in the text is always one of the layout's (a string's is written "\n").
  const std::string text = dumpJson(v);
  size_t from = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out_.write(text.data() + from, static_cast<std::streamsize>(nl + 1 - from));
    indent(open_.size());
    from = nl + 1;
  }
  out_.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

void JsonWriter::open(bool object) {
  beforeValue();
  out_ << (object ? '{' : '[');
  open_.push_back(Level{object});
}

void JsonWriter::close() {
  const Level l = open_.back();
  open_.pop_back();
  if (!l.empty) {
    out_ << '\n';
    indent(open_.size());
  }
  out_ << (l.object ? '}' : ']');
}

void JsonWriter::object(const nlohmann::json& obj, const Members& streamed) {
  open(/*object=*/true);
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    Level& in = open_.back();
    out_ << (in.empty ? "\n" : ",\n");
    in.empty = false;
    indent(open_.size());
    out_ << dumpJson(it.key()) << ": ";
    if (auto s = streamed.find(it.key()); s != streamed.end()) s->second();
    else value(it.value());
  }
  close();
}

void JsonWriter::beginArray() { open(/*object=*/false); }

void JsonWriter::end() { close(); }

std::string jsonString(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace kc
