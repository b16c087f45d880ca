// json.h: a small, self-contained JSON reader (and writer) in C++11.
//
// It parses one JSON document (RFC 8259) into a json::Value tree, enough for
// the game protocols of Arena. No dependencies beyond the standard library.
//
//   json::Value v = json::parse(line);          // throws json::Error
//   int x = v["Coordinates"]["X"].as_int();     // a missing key gives null
//   for (size_t i = 0; i < v["BulletsInfo"].size(); i++) ...
//   const json::Value& b = v["BulletsInfo"][i];
//   std::string id = b.get_string("OwnerId", "");  // with a default
//   std::cout << v.dump() << "\n";              // compact JSON again
//
// Numbers are kept as double (exact for integers up to 2^53). Strings are
// UTF-8; \uXXXX escapes (surrogate pairs included) are decoded to UTF-8.
// Object members keep their order; a repeated key: the first one wins.
#ifndef ARENA_JSON_H
#define ARENA_JSON_H

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace json {

// Error is thrown for malformed input and for asking a value for the wrong
// type (e.g. as_int() on a string).
struct Error : std::runtime_error {
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

enum Type { Null, Bool, Number, String, Array, Object };

class Value {
 public:
  typedef std::vector<Value> Items;
  typedef std::vector<std::pair<std::string, Value> > Members;

  Value() : type_(Null), bool_(false), number_(0) {}
  Value(bool b) : type_(Bool), bool_(b), number_(0) {}
  Value(int n) : type_(Number), bool_(false), number_(n) {}
  Value(double n) : type_(Number), bool_(false), number_(n) {}
  Value(const char* s) : type_(String), bool_(false), number_(0), string_(s) {}
  Value(const std::string& s) : type_(String), bool_(false), number_(0), string_(s) {}
  static Value array() { Value v; v.type_ = Array; return v; }
  static Value object() { Value v; v.type_ = Object; return v; }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Null; }
  bool is_bool() const { return type_ == Bool; }
  bool is_number() const { return type_ == Number; }
  bool is_string() const { return type_ == String; }
  bool is_array() const { return type_ == Array; }
  bool is_object() const { return type_ == Object; }

  bool as_bool() const { check(Bool, "a boolean"); return bool_; }
  double as_number() const { check(Number, "a number"); return number_; }
  int as_int() const {
    check(Number, "a number");
    if (number_ != std::floor(number_) || number_ < -2147483648.0 || number_ > 2147483647.0)
      throw Error("expected an integer, got " + brief());
    return static_cast<int>(number_);
  }
  long long as_int64() const {
    check(Number, "a number");
    if (number_ != std::floor(number_) || std::fabs(number_) > 9007199254740992.0)
      throw Error("expected an integer, got " + brief());
    return static_cast<long long>(number_);
  }
  const std::string& as_string() const { check(String, "a string"); return string_; }
  const Items& items() const { check(Array, "an array"); return items_; }
  const Members& members() const { check(Object, "an object"); return members_; }

  // Arrays: the number of items; objects: the number of members; else 0.
  size_t size() const {
    if (type_ == Array) return items_.size();
    if (type_ == Object) return members_.size();
    return 0;
  }

  // The i-th item of an array (throws when out of range or not an array).
  const Value& operator[](size_t i) const {
    check(Array, "an array");
    if (i >= items_.size()) throw Error("array index out of range");
    return items_[i];
  }
  const Value& operator[](int i) const { return (*this)[static_cast<size_t>(i)]; }

  // The member named key of an object, or a null value when there is none
  // (or when this is not an object): lookups can be chained safely.
  const Value& operator[](const std::string& key) const {
    const Value* v = find(key);
    return v ? *v : null_value();
  }
  const Value& operator[](const char* key) const { return (*this)[std::string(key)]; }
  bool has(const std::string& key) const { return find(key) != 0; }

  // A member with a default for when it is missing or null.
  int get_int(const std::string& key, int def) const {
    const Value& v = (*this)[key];
    return v.is_null() ? def : v.as_int();
  }
  double get_number(const std::string& key, double def) const {
    const Value& v = (*this)[key];
    return v.is_null() ? def : v.as_number();
  }
  std::string get_string(const std::string& key, const std::string& def) const {
    const Value& v = (*this)[key];
    return v.is_null() ? def : v.as_string();
  }

  // Building values (e.g. an answer): push_back on arrays, set on objects.
  Value& push_back(const Value& v) {
    check(Array, "an array");
    items_.push_back(v);
    return items_.back();
  }
  Value& set(const std::string& key, const Value& v) {
    check(Object, "an object");
    for (size_t i = 0; i < members_.size(); i++)
      if (members_[i].first == key) return members_[i].second = v;
    members_.push_back(std::make_pair(key, v));
    return members_.back().second;
  }

  // Compact JSON text of this value.
  std::string dump() const {
    std::string out;
    dump_to(out);
    return out;
  }

 private:
  friend class Parser;

  const Value* find(const std::string& key) const {
    if (type_ != Object) return 0;
    for (size_t i = 0; i < members_.size(); i++)
      if (members_[i].first == key) return &members_[i].second;
    return 0;
  }

  void check(Type want, const char* name) const {
    if (type_ != want) throw Error(std::string("expected ") + name + ", got " + brief());
  }

  // The start of dump(), for error messages.
  std::string brief() const {
    std::string d = dump();
    return d.size() <= 60 ? d : d.substr(0, 57) + "...";
  }

  static const Value& null_value() {
    static const Value null;
    return null;
  }

  static void dump_string(std::string& out, const std::string& s) {
    out += '"';
    for (size_t i = 0; i < s.size(); i++) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    out += '"';
  }

  void dump_to(std::string& out) const {
    switch (type_) {
      case Null: out += "null"; break;
      case Bool: out += bool_ ? "true" : "false"; break;
      case Number: {
        char buf[32];
        if (number_ == std::floor(number_) && std::fabs(number_) < 1e15)
          std::snprintf(buf, sizeof buf, "%.0f", number_);
        else if (std::isfinite(number_))
          std::snprintf(buf, sizeof buf, "%.17g", number_);
        else
          std::snprintf(buf, sizeof buf, "null");  // JSON has no NaN/Infinity
        out += buf;
        break;
      }
      case String: dump_string(out, string_); break;
      case Array:
        out += '[';
        for (size_t i = 0; i < items_.size(); i++) {
          if (i) out += ',';
          items_[i].dump_to(out);
        }
        out += ']';
        break;
      case Object:
        out += '{';
        for (size_t i = 0; i < members_.size(); i++) {
          if (i) out += ',';
          dump_string(out, members_[i].first);
          out += ':';
          members_[i].second.dump_to(out);
        }
        out += '}';
        break;
    }
  }

  Type type_;
  bool bool_;
  double number_;
  std::string string_;
  Items items_;
  Members members_;
};

// Parser reads one JSON document; use json::parse below.
class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text), i_(0), depth_(0) {}

  Value document() {
    Value v = value();
    space();
    if (i_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  static const int kMaxDepth = 512;  // nesting limit: no stack overflow

  void fail(const std::string& why) const {
    throw Error("JSON: " + why + " at offset " + std::to_string(i_));
  }

  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) i_++;
  }

  bool literal(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    return true;
  }

  Value value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end of input");
    char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Value(string());
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (literal("true")) return Value(true);
    if (literal("false")) return Value(false);
    if (literal("null")) return Value();
    fail(std::string("unexpected character '") + c + "'");
    return Value();
  }

  void enter() {
    if (++depth_ > kMaxDepth) fail("nested too deeply");
  }

  Value array() {
    enter();
    Value v = Value::array();
    i_++;  // [
    space();
    if (i_ < s_.size() && s_[i_] == ']') {
      i_++;
      depth_--;
      return v;
    }
    for (;;) {
      v.items_.push_back(value());
      space();
      if (i_ < s_.size() && s_[i_] == ',') { i_++; continue; }
      if (i_ < s_.size() && s_[i_] == ']') { i_++; break; }
      fail("expected ',' or ']'");
    }
    depth_--;
    return v;
  }

  Value object() {
    enter();
    Value v = Value::object();
    i_++;  // {
    space();
    if (i_ < s_.size() && s_[i_] == '}') {
      i_++;
      depth_--;
      return v;
    }
    for (;;) {
      space();
      if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key");
      std::string key = string();
      space();
      if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':'");
      i_++;
      Value member = value();
      if (!v.has(key)) v.members_.push_back(std::make_pair(key, std::move(member)));
      space();
      if (i_ < s_.size() && s_[i_] == ',') { i_++; continue; }
      if (i_ < s_.size() && s_[i_] == '}') { i_++; break; }
      fail("expected ',' or '}'");
    }
    depth_--;
    return v;
  }

  Value number() {
    size_t start = i_;
    if (s_[i_] == '-') i_++;
    if (i_ < s_.size() && s_[i_] == '0') {
      i_++;
    } else if (i_ < s_.size() && s_[i_] >= '1' && s_[i_] <= '9') {
      while (i_ < s_.size() && isdigit(s_[i_])) i_++;
    } else {
      fail("bad number");
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      i_++;
      if (i_ >= s_.size() || !isdigit(s_[i_])) fail("bad number");
      while (i_ < s_.size() && isdigit(s_[i_])) i_++;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      i_++;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) i_++;
      if (i_ >= s_.size() || !isdigit(s_[i_])) fail("bad number");
      while (i_ < s_.size() && isdigit(s_[i_])) i_++;
    }
    return Value(std::strtod(s_.substr(start, i_ - start).c_str(), 0));
  }

  static bool isdigit(char c) { return c >= '0' && c <= '9'; }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("bad \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
      char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    i_++;  // opening quote
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated string");
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a surrogate pair
            if (s_.compare(i_, 2, "\\u") != 0) fail("lone surrogate");
            i_ += 2;
            unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("lone surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default: fail(std::string("bad escape \\") + e);
      }
    }
  }

  const std::string& s_;
  size_t i_;
  int depth_;
};

// parse reads one JSON document; surrounding whitespace is allowed.
inline Value parse(const std::string& text) { return Parser(text).document(); }

}  // namespace json

#endif  // ARENA_JSON_H
