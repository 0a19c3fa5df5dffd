// A strict JSON (RFC 8259) pull scanner for large files that only need a few
// of their values: the COCO instances reader walks the document with it and
// skips everything else, above all the segmentation polygons that make up most
// of a COCO file. Skipped values are validated as strictly as read ones
// (grammar, string escapes, UTF-8, numbers past double's range) but never
// converted, so a skip costs a pass over the bytes.
//
// The input is read in 4 MB chunks: memory stays flat however large the file.
// Once a call fails, every later call fails too and status() tells the file,
// the byte, line and column, and what is wrong.
//
// Duplicate object keys are the caller's business (the scanner reports every
// key as it comes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffyolo::source_internal {

class JsonScanner {
 public:
  enum class Type { kObject, kArray, kString, kNumber, kTrue, kFalse, kNull, kError };

  struct Number {
    double value = 0;
    // An integer literal (no fraction or exponent) that fits int64_t; `value`
    // holds it too, rounded.
    bool is_integer = false;
    int64_t integer = 0;
  };

  static constexpr size_t kDefaultChunk = size_t{4} << 20;

  // Scans `path`, read through `env`, `chunk` bytes at a time. Fails only if it
  // cannot be opened.
  static ffr::Status Open(ffr::Env* env, const std::string& path, std::unique_ptr<JsonScanner>* out,
                          size_t chunk = kDefaultChunk);
  // Scans `text` (kept by reference); `name` stands for the file in errors.
  // Tests pass a small `chunk` to split tokens between reads.
  JsonScanner(std::string name, std::string_view text, size_t chunk = kDefaultChunk);
  JsonScanner(const JsonScanner&) = delete;
  JsonScanner& operator=(const JsonScanner&) = delete;

  // The type of the next value, after whitespace (and a UTF-8 byte order mark
  // at the start of the input); kError, with status() set, when no value starts
  // there. Consumes nothing but whitespace.
  Type Peek();

  // Consume '{' or '['; false (and the scanner failed) when the next value is
  // something else.
  bool BeginObject();
  bool BeginArray();
  // Call before each member of an object: consumes the ',' between members and
  // the key with its ':', and stores the decoded key in *key (null: the key is
  // only validated). False at the closing '}' (consumed) or on failure.
  bool NextKey(std::string* key);
  // Call before each element of an array: true when an element follows, false
  // at the closing ']' (consumed) or on failure.
  bool NextElement();

  bool ReadString(std::string* out);
  // Fails on a number that strtod would turn into an infinity (1e400), as
  // nlohmann::json does; one too small for a double (1e-400) reads as 0 or a
  // denormal, as there.
  bool ReadNumber(Number* out);
  bool ReadBool(bool* out);
  // Validates and skips the next value, nested to any depth.
  bool SkipValue();

  // Requires that only whitespace is left.
  bool Finish();

  bool ok() const { return !failed_; }
  // The first failure: Corruption for malformed JSON, the Env's error for a
  // failed read.
  ffr::Status status() const;

 private:
  // Reads up to n bytes at offset into buf, *got < n only at the end.
  using ReadAt = std::function<ffr::Status(uint64_t offset, char* buf, size_t n, size_t* got)>;
  JsonScanner(std::string name, ReadAt read, size_t chunk);

  int PeekByte();  // the byte at the cursor, -1 at the end of the input (or a failed read)
  bool Refill();
  void SkipWhitespace();
  bool Begin(char open, Type type);
  bool Separator(char close);
  bool ScanString(std::string* out);
  bool ScanUtf8(std::string* out);
  bool ScanHex4(unsigned* code);
  // Validates a number; *magnitude_digits bounds its decimal magnitude from above
  // (the value is below 10^*magnitude_digits). The token stays in the buffer from
  // keep_ on.
  bool ScanNumber(bool* is_integer, int64_t* magnitude_digits);
  bool ConvertNumber(const char* begin, bool is_integer, Number* out);
  bool SkipNumber();
  bool SkipNumberList();
  bool Literal(const char* word);
  uint64_t OffsetOf(const char* p) const;
  // Records the first failure; always false. An `overflow` is worded as
  // nlohmann::json's out_of_range was ("malformed JSON: number overflow ...").
  bool Fail(uint64_t offset, std::string what, bool overflow = false);
  bool FailHere(std::string what) { return Fail(OffsetOf(p_), std::move(what)); }
  std::string Describe(int c) const;

  const std::string name_;
  const ReadAt read_;
  const size_t chunk_;
  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0;
  const char* p_ = nullptr;    // the cursor
  const char* end_ = nullptr;  // the end of the bytes read so far
  const char* keep_ = nullptr;  // bytes from here on survive a refill (a number token)
  uint64_t base_ = 0;          // the file offset of buf_[0]
  bool eof_ = false;
  bool started_ = false;       // the byte order mark has been looked for
  bool first_ = false;         // just after '{' or '[': no ',' before the first member
  bool failed_ = false;
  uint64_t fail_offset_ = 0;
  std::string fail_what_;
  bool fail_overflow_ = false;
  ffr::Status read_error_;
  std::string nesting_;  // SkipValue's closing brackets
};

}  // namespace ffyolo::source_internal
