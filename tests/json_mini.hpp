// A small JSON parser (RFC 8259 values; enough to check the trace files the
// tests read). Header-only, for tests: strings' \u escapes become '?'.
#pragma once

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace json_mini {

struct Json;
using JsonObject = std::map<std::string, Json>;
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> v;
  const JsonObject& obj() const { return std::get<JsonObject>(v); }
  const JsonArray& arr() const { return std::get<JsonArray>(v); }
  const std::string& str() const { return std::get<std::string>(v); }
  double num() const { return std::get<double>(v); }
  bool has(const std::string& k) const { return obj().count(k) > 0; }
  const Json& operator[](const std::string& k) const { return obj().at(k); }
};

class Parser {
 public:
  explicit Parser(std::string text) : s_(std::move(text)) {}
  Json parse() {
    Json j = value();
    space();
    if (i_ != s_.size()) fail("trailing characters");
    return j;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string("JSON: ") + what + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    space();
    if (i_ >= s_.size() || s_[i_] != c) fail("unexpected character");
    ++i_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("bad escape");
      c = s_[i_++];
      switch (c) {
        case '"': case '\\': case '/': out += c; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u':
          if (i_ + 4 > s_.size()) fail("bad \\u escape");
          out += '?';
          i_ += 4;
          break;
        default: fail("bad escape");
      }
    }
  }
  Json value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      JsonObject o;
      space();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return {o};
      }
      while (true) {
        std::string k = string();
        expect(':');
        o[k] = value();
        space();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        expect('}');
        return {o};
      }
    }
    if (c == '[') {
      ++i_;
      JsonArray a;
      space();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return {a};
      }
      while (true) {
        a.push_back(value());
        space();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        expect(']');
        return {a};
      }
    }
    if (c == '"') return {string()};
    if (literal("true")) return {true};
    if (literal("false")) return {false};
    if (literal("null")) return {nullptr};
    const std::size_t start = i_;
    if (s_[i_] == '-') ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
      ++i_;
    if (start == i_) fail("unexpected character");
    return {std::stod(s_.substr(start, i_ - start))};
  }
  std::string s_;
  std::size_t i_ = 0;
};

inline Json parse(const std::string& text) { return Parser(text).parse(); }
inline Json parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("JSON: cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

}  // namespace json_mini
