#include "json_scanner.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ffyolo::source_internal {

using ffr::Status;

namespace {

// Bytes a string holds as they are: all but '"', '\\', control characters and
// non-ASCII (UTF-8, checked byte by byte). The buffer's '\0' sentinel is not
// plain either, so the fast loop stops at the end of what was read.
struct PlainBytes {
  bool plain[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlain;

bool IsDigit(int c) { return c >= '0' && c <= '9'; }

// A number of at most this many integer digits (and no exponent) is below
// 10^308, so finite as a double for sure.
constexpr int64_t kMaxFiniteDigits = 308;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The end of a number at `p` that has no exponent and ends before `end`, the
// end of the buffer, found without ScanNumber's check for the buffer's end at
// every byte (the NUL at `end` stops every loop); nullptr for anything else,
// which ScanNumber then validates or reports.
inline const char* EndOfPlainNumber(const char* p, const char* end) {
  if (*p == '-') ++p;
  if (*p == '0') {
    ++p;
  } else {
    const char* const digits = p;
    while (IsDigit(static_cast<unsigned char>(*p))) ++p;
    if (p == digits || p - digits > kMaxFiniteDigits) return nullptr;
  }
  if (*p == '.') {
    ++p;
    if (!IsDigit(static_cast<unsigned char>(*p))) return nullptr;
    while (IsDigit(static_cast<unsigned char>(*p))) ++p;
  }
  if (p == end || IsDigit(static_cast<unsigned char>(*p)) || *p == 'e' || *p == 'E') return nullptr;
  return p;
}

void AppendUtf8(unsigned code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

}  // namespace

Status JsonScanner::Open(ffr::Env* env, const std::string& path, std::unique_ptr<JsonScanner>* out,
                         size_t chunk) {
  std::unique_ptr<ffr::RandomAccessFile> file;
  FFR_RETURN_IF_ERROR(env->NewRandomAccessFile(path, /*direct=*/false, &file));
  std::shared_ptr<ffr::RandomAccessFile> shared(std::move(file));
  out->reset(new JsonScanner(
      path,
      [shared](uint64_t offset, char* buf, size_t n, size_t* got) { return shared->Read(offset, n, buf, got); },
      chunk));
  return Status::OK();
}

JsonScanner::JsonScanner(std::string name, std::string_view text, size_t chunk)
    : JsonScanner(
          std::move(name),
          [text](uint64_t offset, char* buf, size_t n, size_t* got) {
            *got = offset < text.size() ? std::min<size_t>(n, text.size() - offset) : 0;
            if (*got > 0) std::memcpy(buf, text.data() + offset, *got);
            return Status::OK();
          },
          chunk) {}

JsonScanner::JsonScanner(std::string name, ReadAt read, size_t chunk)
    : name_(std::move(name)), read_(std::move(read)), chunk_(std::max<size_t>(chunk, 1)) {
  capacity_ = chunk_;
  buf_.reset(new char[capacity_ + 1]);
  p_ = end_ = buf_.get();
  buf_[0] = '\0';
}

bool JsonScanner::Refill() {
  if (eof_ || failed_) return false;
  // Only an unfinished number token (keep_) needs bytes from before the cursor.
  char* const old = buf_.get();
  const char* from = keep_ != nullptr ? keep_ : p_;
  const size_t kept = static_cast<size_t>(end_ - from);
  char* buf = old;
  if (kept + chunk_ > capacity_) {  // a number longer than a chunk: rare, grow
    capacity_ = std::max(capacity_ * 2, kept + chunk_);
    std::unique_ptr<char[]> grown(new char[capacity_ + 1]);
    std::memcpy(grown.get(), from, kept);
    buf_ = std::move(grown);
    buf = buf_.get();
  } else {
    std::memmove(buf, from, kept);
  }
  base_ += static_cast<uint64_t>(from - old);
  p_ = buf + (p_ - from);
  if (keep_ != nullptr) keep_ = buf;
  char* const tail = buf + kept;
  size_t got = 0;
  const Status s = read_(base_ + kept, tail, chunk_, &got);
  end_ = tail;
  if (!s.ok()) {
    *tail = '\0';
    read_error_ = s;
    failed_ = true;
    return false;
  }
  end_ = tail + got;
  buf[kept + got] = '\0';
  if (got < chunk_) eof_ = true;
  return got > 0;
}

int JsonScanner::PeekByte() {
  if (p_ == end_ && !Refill()) return -1;
  return static_cast<unsigned char>(*p_);
}

void JsonScanner::SkipWhitespace() {
  if (!started_) {
    started_ = true;
    // nlohmann::json accepts a UTF-8 byte order mark at the start, and only a whole one.
    if (PeekByte() == 0xEF) {
      ++p_;
      if (PeekByte() != 0xBB || (++p_, PeekByte() != 0xBF)) {
        FailHere("invalid byte order mark; it must be 0xEF 0xBB 0xBF if given");
        return;
      }
      ++p_;
    }
  }
  for (;;) {
    const char* p = p_;
    while (IsSpace(*p)) ++p;
    p_ = p;
    if (p != end_ || !Refill()) return;  // stopped at the '\0' after the buffer: read on
  }
}

JsonScanner::Type JsonScanner::Peek() {
  if (failed_) return Type::kError;
  SkipWhitespace();
  const int c = PeekByte();
  switch (c) {
    case '{': return Type::kObject;
    case '[': return Type::kArray;
    case '"': return Type::kString;
    case 't': return Type::kTrue;
    case 'f': return Type::kFalse;
    case 'n': return Type::kNull;
    case '-': return Type::kNumber;
    default:
      if (IsDigit(c)) return Type::kNumber;
      FailHere("unexpected " + Describe(c) + "; expected a value");
      return Type::kError;
  }
}

bool JsonScanner::Begin(char open, Type type) {
  const Type t = Peek();
  if (t == Type::kError) return false;
  if (t != type) return FailHere("unexpected " + Describe(PeekByte()) + "; expected '" + open + "'");
  ++p_;
  first_ = true;
  return true;
}

bool JsonScanner::BeginObject() { return Begin('{', Type::kObject); }
bool JsonScanner::BeginArray() { return Begin('[', Type::kArray); }

// The ',' between members or elements, or the closing bracket. True when a
// member or element follows.
bool JsonScanner::Separator(char close) {
  if (failed_) return false;
  SkipWhitespace();
  int c = PeekByte();
  if (c == close) {
    ++p_;
    first_ = false;
    return false;
  }
  if (first_) {
    first_ = false;
    return true;
  }
  if (c != ',') {
    const std::string expected = std::string("expected ',' or '") + close + "'";
    return FailHere("unexpected " + Describe(c) + "; " + expected);
  }
  ++p_;
  SkipWhitespace();
  c = PeekByte();
  if (c == close) return FailHere(std::string("a trailing comma before '") + close + "'");
  return true;
}

bool JsonScanner::NextKey(std::string* key) {
  if (!Separator('}')) return false;
  if (PeekByte() != '"') return FailHere("unexpected " + Describe(PeekByte()) + "; expected a string (an object key)");
  if (!ScanString(key)) return false;
  SkipWhitespace();
  if (PeekByte() != ':') return FailHere("unexpected " + Describe(PeekByte()) + "; expected ':' after an object key");
  ++p_;
  return true;
}

bool JsonScanner::NextElement() { return Separator(']'); }

bool JsonScanner::ReadString(std::string* out) {
  const Type t = Peek();
  if (t == Type::kError) return false;
  if (t != Type::kString) return FailHere("unexpected " + Describe(PeekByte()) + "; expected a string");
  return ScanString(out);
}

bool JsonScanner::ScanString(std::string* out) {
  ++p_;  // the opening quote
  if (out != nullptr) out->clear();
  for (;;) {
    const char* run = p_;
    while (kPlain.plain[static_cast<unsigned char>(*p_)]) ++p_;
    if (out != nullptr) out->append(run, static_cast<size_t>(p_ - run));
    const int c = PeekByte();
    if (c == '"') {
      ++p_;
      return true;
    }
    if (c < 0) return FailHere("the input ends inside a string");
    if (c == '\\') {
      ++p_;
      const int e = PeekByte();
      char plain = 0;
      switch (e) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          ++p_;
          unsigned code = 0;
          if (!ScanHex4(&code)) return false;
          if (code >= 0xDC00 && code <= 0xDFFF)
            return FailHere("a \\uDC00-\\uDFFF escape must follow a \\uD800-\\uDBFF one (a UTF-16 surrogate pair)");
          if (code >= 0xD800 && code <= 0xDBFF) {
            unsigned low = 0;
            if (PeekByte() != '\\' || (++p_, PeekByte() != 'u'))
              return FailHere("a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one");
            ++p_;
            if (!ScanHex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF)
              return FailHere("a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          if (out != nullptr) AppendUtf8(code, out);
          continue;
        }
        default:
          return FailHere("invalid escape '\\" + (e < 0 ? std::string() : std::string(1, static_cast<char>(e))) +
                          "' in a string" + (e < 0 ? " (the input ends there)" : ""));
      }
      ++p_;
      if (out != nullptr) out->push_back(plain);
    } else if (c < 0x20) {
      return FailHere("control character " + Describe(c) + " inside a string (it must be escaped)");
    } else if (c >= 0x80) {
      if (!ScanUtf8(out)) return false;
    }
    // else: a plain byte that was not read yet when the fast loop ran
  }
}

bool JsonScanner::ScanHex4(unsigned* code) {
  *code = 0;
  for (int k = 0; k < 4; ++k) {
    const int c = PeekByte();
    int digit;
    if (IsDigit(c)) {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return FailHere("a \\u escape needs four hex digits, not " + Describe(c));
    }
    *code = *code * 16 + static_cast<unsigned>(digit);
    ++p_;
  }
  return true;
}

// RFC 3629's well-formed sequences: no overlong forms, no surrogates, nothing
// past U+10FFFF (what nlohmann::json accepts too).
bool JsonScanner::ScanUtf8(std::string* out) {
  const int lead = PeekByte();
  int more = 0;
  int low = 0x80, high = 0xBF;  // the range of the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    more = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    more = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    more = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return FailHere("ill-formed UTF-8 (" + Describe(lead) + ") inside a string");
  }
  if (out != nullptr) out->push_back(static_cast<char>(lead));
  ++p_;
  for (int k = 0; k < more; ++k) {
    const int c = PeekByte();
    if (c < low || c > high) return FailHere("ill-formed UTF-8 (" + Describe(c) + ") inside a string");
    if (out != nullptr) out->push_back(static_cast<char>(c));
    ++p_;
    low = 0x80;
    high = 0xBF;
  }
  return true;
}

bool JsonScanner::ScanNumber(bool* is_integer, int64_t* magnitude_digits) {
  // Numbers are most of a COCO file: a local cursor, which the compiler keeps in
  // a register (p_ is reloaded after every byte read through a char pointer).
  const char* p = p_;
  const auto peek = [&]() -> int {
    if (p == end_) {
      p_ = p;
      const bool more = Refill();  // may move the buffer, and p_ with it
      p = p_;
      if (!more) return -1;
    }
    return static_cast<unsigned char>(*p);
  };
  const auto fail = [&](std::string what) {
    p_ = p;
    return FailHere(std::move(what));
  };
  int c = peek();
  if (c == '-') {
    ++p;
    c = peek();
  }
  int64_t int_digits = 0;
  if (c == '0') {
    ++p;
    int_digits = 1;
    c = peek();
    if (IsDigit(c)) return fail("a number with a leading zero");
  } else if (IsDigit(c)) {
    do {
      ++int_digits;
      ++p;
      c = peek();
    } while (IsDigit(c));
  } else {
    return fail("unexpected " + Describe(c) + " in a number; expected a digit after '-'");
  }
  *is_integer = true;
  if (c == '.') {
    *is_integer = false;
    ++p;
    c = peek();
    if (!IsDigit(c)) return fail("unexpected " + Describe(c) + " in a number; expected a digit after '.'");
    do {
      ++p;
      c = peek();
    } while (IsDigit(c));
  }
  int64_t exponent = 0;
  if (c == 'e' || c == 'E') {
    *is_integer = false;
    ++p;
    c = peek();
    const bool negative = c == '-';
    if (c == '+' || c == '-') {
      ++p;
      c = peek();
    }
    if (!IsDigit(c)) return fail("unexpected " + Describe(c) + " in a number; expected a digit in the exponent");
    do {
      if (exponent < 1000000000) exponent = exponent * 10 + (c - '0');  // saturates: only its size matters
      ++p;
      c = peek();
    } while (IsDigit(c));
    if (negative) exponent = -exponent;
  }
  p_ = p;
  *magnitude_digits = int_digits + exponent;
  return true;
}

bool JsonScanner::ConvertNumber(const char* begin, bool is_integer, Number* out) {
  const char* const end = p_;
  if (is_integer) {
    const auto r = std::from_chars(begin, end, out->integer);
    if (r.ec == std::errc() && r.ptr == end) {
      out->is_integer = true;
      out->value = static_cast<double>(out->integer);
      return true;
    }
  }
  out->is_integer = false;
  const auto r = std::from_chars(begin, end, out->value);
  if (r.ec == std::errc() && r.ptr == end) return true;
  // Past double's range either way; strtod (nlohmann::json's choice) says which: an
  // infinity is an error there, an underflow is 0 or a denormal.
  const std::string token(begin, end);
  const double value = std::strtod(token.c_str(), nullptr);
  if (std::isinf(value)) {
    const std::string shown = token.size() <= 40 ? token : token.substr(0, 37) + "...";
    return Fail(OffsetOf(begin), "number overflow parsing '" + shown + "'", /*overflow=*/true);
  }
  out->value = value;
  return true;
}

bool JsonScanner::ReadNumber(Number* out) {
  const Type t = Peek();
  if (t == Type::kError) return false;
  if (t != Type::kNumber) return FailHere("unexpected " + Describe(PeekByte()) + "; expected a number");
  keep_ = p_;
  bool is_integer = false;
  int64_t magnitude = 0;
  const bool ok = ScanNumber(&is_integer, &magnitude) && ConvertNumber(keep_, is_integer, out);
  keep_ = nullptr;
  return ok;
}

bool JsonScanner::SkipNumber() {
  if (const char* end = EndOfPlainNumber(p_, end_)) {
    p_ = end;
    return true;
  }
  keep_ = p_;
  bool is_integer = false;
  int64_t magnitude = 0;
  bool ok = ScanNumber(&is_integer, &magnitude);
  // Below 10^308 a number is finite for sure; only bigger ones are converted to see.
  Number unused;
  if (ok && magnitude > kMaxFiniteDigits) ok = ConvertNumber(keep_, is_integer, &unused);
  keep_ = nullptr;
  return ok;
}

// The rest of an array of numbers, such as a segmentation polygon: ", 1.5, 2"
// as long as it comes whole in the buffer. Stops before anything else (the
// closing bracket, another kind of value, the end of the buffer) for the
// general path, which also reports errors.
bool JsonScanner::SkipNumberList() {
  // Polygon coordinates are most of a COCO file: a local cursor, and the
  // common number inline.
  const char* p = p_;
  for (;;) {
    const char* const after_number = p;
    while (IsSpace(*p)) ++p;
    if (*p != ',') {
      p_ = after_number;
      return true;
    }
    ++p;
    while (IsSpace(*p)) ++p;
    if (const char* end = EndOfPlainNumber(p, end_)) {
      p = end;
      continue;
    }
    if (*p != '-' && !IsDigit(static_cast<unsigned char>(*p))) {
      p_ = after_number;
      return true;
    }
    p_ = p;
    if (!SkipNumber()) return false;
    p = p_;
  }
}

bool JsonScanner::Literal(const char* word) {
  for (const char* w = word; *w != '\0'; ++w) {
    if (PeekByte() != static_cast<unsigned char>(*w))
      return FailHere("unexpected " + Describe(PeekByte()) + "; expected '" + word + "'");
    ++p_;
  }
  return true;
}

bool JsonScanner::ReadBool(bool* out) {
  const Type t = Peek();
  if (t == Type::kError) return false;
  if (t != Type::kTrue && t != Type::kFalse)
    return FailHere("unexpected " + Describe(PeekByte()) + "; expected true or false");
  *out = t == Type::kTrue;
  return Literal(*out ? "true" : "false");
}

bool JsonScanner::SkipValue() {
  // The closing bracket of each container the skip is in; a loop, not recursion:
  // a hostile file may nest a million deep.
  nesting_.clear();
  for (;;) {
    switch (Peek()) {
      case Type::kError: return false;
      case Type::kObject:
        ++p_;
        first_ = true;
        nesting_.push_back('}');
        break;
      case Type::kArray:
        ++p_;
        first_ = true;
        nesting_.push_back(']');
        break;
      case Type::kString:
        if (!ScanString(nullptr)) return false;
        break;
      case Type::kNumber:
        if (!SkipNumber()) return false;
        if (!nesting_.empty() && nesting_.back() == ']' && !SkipNumberList()) return false;
        break;
      case Type::kTrue:
        if (!Literal("true")) return false;
        break;
      case Type::kFalse:
        if (!Literal("false")) return false;
        break;
      case Type::kNull:
        if (!Literal("null")) return false;
        break;
    }
    // On to the next value, closing the containers that end first.
    for (;;) {
      if (nesting_.empty()) return true;
      const bool more = nesting_.back() == '}' ? NextKey(nullptr) : NextElement();
      if (failed_) return false;
      if (more) break;
      nesting_.pop_back();
    }
  }
}

bool JsonScanner::Finish() {
  if (failed_) return false;
  SkipWhitespace();
  const int c = PeekByte();
  if (c >= 0) return FailHere("unexpected " + Describe(c) + " after the top-level value; expected the end of the input");
  return !failed_;
}

uint64_t JsonScanner::OffsetOf(const char* p) const { return base_ + static_cast<uint64_t>(p - buf_.get()); }

bool JsonScanner::Fail(uint64_t offset, std::string what, bool overflow) {
  if (failed_) return false;
  failed_ = true;
  fail_offset_ = offset;
  fail_what_ = std::move(what);
  fail_overflow_ = overflow;
  return false;
}

std::string JsonScanner::Describe(int c) const {
  if (c < 0) return "end of input";
  if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(c));
  return std::string("byte ") + hex;
}

Status JsonScanner::status() const {
  if (!failed_) return Status::OK();
  if (!read_error_.ok()) return read_error_;
  // Line and column come from reading the file up to the error again: counting
  // lines all along would slow every whitespace skip for the sake of failures.
  uint64_t line = 1, column = 1;
  std::unique_ptr<char[]> chunk(new char[std::min<size_t>(chunk_, 1 << 20)]);
  for (uint64_t offset = 0; offset < fail_offset_;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(std::min<size_t>(chunk_, 1 << 20), fail_offset_ - offset));
    size_t got = 0;
    if (!read_(offset, chunk.get(), want, &got).ok() || got == 0) break;
    for (size_t k = 0; k < got; ++k) {
      if (chunk[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    offset += got;
  }
  const std::string where =
      "at byte offset " + std::to_string(fail_offset_) + " (line " + std::to_string(line) + ", column " +
      std::to_string(column) + ")";
  if (fail_overflow_) return Status::Corruption(name_ + ": malformed JSON: " + fail_what_ + " " + where);
  return Status::Corruption(name_ + ": malformed or truncated JSON " + where + ": " + fail_what_);
}

}  // namespace ffyolo::source_internal
