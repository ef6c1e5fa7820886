// JSON text as kcount prints it, for a whole document (dumpJson) or written a piece at a time (JsonWriter).
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kc {

/// JSON text as kcount prints it (2-space indent). Strings from a log are bytes as recorded (NVTX
/// messages, kernel names, or damage): invalid UTF-8 is written as U+FFFD instead of throwing.
std::string dumpJson(const nlohmann::json& j);

/// Writes one JSON document to a stream a piece at a time, laid out byte for byte as dumpJson() lays out
/// the document built whole, so that an array with one element per range or kernel is written as its
/// elements are made (each a small nlohmann::json, dumped with dumpJson()) instead of being held in
/// memory whole. Objects are written from an nlohmann::json holding their members (object()): their keys
/// come in the order nlohmann::json keeps them (sorted), as dumpJson() writes them; the members that
/// grow with the log are written by functions that call this writer. Writes no newline after the
/// document. Write errors are left in the stream's state (the writer goes on). Not thread-safe; `out`
/// must outlive the writer.
class JsonWriter {
 public:
  /// Functions that write the value of a member of object() (exactly one value through the writer: a
  /// value(), or a beginArray() ... end()), by member key.
  using Members = std::map<std::string, std::function<void()>, std::less<>>;

  explicit JsonWriter(std::ostream& out) : out_(out) {}

  /// `v` whole, as the next value: the document, the next element of the innermost open array, or the
  /// value of the member object() is writing.
  void value(const nlohmann::json& v);
  /// Object `obj` (an nlohmann::json object) as the next value, as value(obj) writes it, except that the
  /// value of each member whose key is in `streamed` is written by that function instead (the member's
  /// value in `obj` only places it among the keys: null will do).
  void object(const nlohmann::json& obj, const Members& streamed);
  /// Opens an array as the next value; its elements are the values written until the matching end().
  void beginArray();
  /// Closes the innermost array opened by beginArray() ("[]" if it got no element).
  void end();

 private:
  /// Before a value: inside an array, the separator, a newline and the element's indentation.
  void beforeValue();
  /// Opens a container: '[' or '{' after beforeValue().
  void open(bool object);
  /// Closes the innermost container.
  void close();
  void indent(size_t levels);

  struct Level {
    bool object;
    bool empty = true;
  };
  std::ostream& out_;
  std::vector<Level> open_;  // the containers open, outermost first
};

/// `s` (valid UTF-8) as a JSON string: quoted, with '"', '\\' and control characters escaped.
std::string jsonString(const std::string& s);

}  // namespace kc
