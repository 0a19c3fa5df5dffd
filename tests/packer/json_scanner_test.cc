// JsonScanner, the strict JSON pull scanner behind the COCO instances reader:
// what it decodes, what it rejects (checked against nlohmann::json, the parser
// it replaced), where it says the error is, and that tokens split between reads
// (chunks of 1 and 3 bytes) read the same.
#include "json_scanner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffyolo::source_internal {
namespace {

using ::testing::HasSubstr;
using Type = JsonScanner::Type;
using namespace std::string_literals;

constexpr size_t kChunks[] = {1, 3, JsonScanner::kDefaultChunk};

// Validates a whole document the way the COCO reader skips a value.
ffr::Status Validate(const std::string& text, size_t chunk) {
  JsonScanner json("doc.json", text, chunk);
  json.SkipValue();
  json.Finish();
  return json.status();
}

TEST(JsonScannerTest, ReadsKeysStringsAndEscapes) {
  const std::string text =
      "\xEF\xBB\xBF {\"plain\": \"a b\", \"esc\\u0061ped\": \"q\\\" s\\\\ sl\\/ \\b\\f\\n\\r\\t\","
      " \"utf8\": \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\", \"pair\": \"\\u00e9\\ud83d\\ude00\"}";
  for (size_t chunk : kChunks) {
    JsonScanner json("doc.json", text, chunk);
    ASSERT_EQ(json.Peek(), Type::kObject);
    ASSERT_TRUE(json.BeginObject());
    std::vector<std::pair<std::string, std::string>> members;
    std::string key, value;
    while (json.NextKey(&key)) {
      ASSERT_TRUE(json.ReadString(&value)) << json.status().ToString();
      members.emplace_back(key, value);
    }
    ASSERT_TRUE(json.Finish()) << json.status().ToString();
    EXPECT_THAT(members, ::testing::ElementsAre(
                             std::make_pair(std::string("plain"), std::string("a b")),
                             std::make_pair(std::string("escaped"), std::string("q\" s\\ sl/ \b\f\n\r\t")),
                             std::make_pair(std::string("utf8"), std::string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")),
                             std::make_pair(std::string("pair"), std::string("\xC3\xA9\xF0\x9F\x98\x80"))))
        << "chunk " << chunk;
  }
}

TEST(JsonScannerTest, ReadsNumbers) {
  const std::string text =
      "[0, -0, 42, -17, 3.25, -1.5e3, 2E-2, 1e+2, 7.0, 9223372036854775807, -9223372036854775808,"
      " 9223372036854775808, 1e-400, 1.7976931348623157e308, 123456789012345678901234567890]";
  for (size_t chunk : kChunks) {
    JsonScanner json("doc.json", text, chunk);
    ASSERT_TRUE(json.BeginArray());
    std::vector<JsonScanner::Number> numbers;
    while (json.NextElement()) {
      JsonScanner::Number n;
      ASSERT_TRUE(json.ReadNumber(&n)) << json.status().ToString();
      numbers.push_back(n);
    }
    ASSERT_TRUE(json.Finish()) << json.status().ToString();
    ASSERT_EQ(numbers.size(), 15u);
    const auto integer = [&](size_t k) { return numbers[k].is_integer ? numbers[k].integer : -999; };
    EXPECT_EQ(integer(0), 0);
    EXPECT_EQ(integer(1), 0);
    EXPECT_EQ(integer(2), 42);
    EXPECT_EQ(integer(3), -17);
    EXPECT_FALSE(numbers[4].is_integer);
    EXPECT_EQ(numbers[4].value, 3.25);
    EXPECT_EQ(numbers[5].value, -1500);
    EXPECT_EQ(numbers[6].value, 0.02);
    EXPECT_EQ(numbers[7].value, 100);
    EXPECT_FALSE(numbers[8].is_integer);  // 7.0 is a float literal; the COCO reader accepts it as an integer
    EXPECT_EQ(numbers[8].value, 7);
    EXPECT_EQ(integer(9), INT64_MAX);
    EXPECT_EQ(integer(10), INT64_MIN);
    EXPECT_FALSE(numbers[11].is_integer);  // past int64: a double, as strtod reads it
    EXPECT_EQ(numbers[11].value, 9223372036854775808.0);
    EXPECT_EQ(numbers[12].value, 0);  // underflow is no error (nlohmann agrees)
    EXPECT_EQ(numbers[13].value, 1.7976931348623157e308);
    EXPECT_EQ(numbers[14].value, 1.2345678901234568e29);
  }
}

TEST(JsonScannerTest, NumberPastDoubleRangeFailsReadOrSkipped) {
  const std::string digits400 = "1" + std::string(400, '0');
  for (const std::string& number : {std::string("1e400"), std::string("-1.8e308"), digits400,
                                    std::string("0.001e312")}) {
    for (size_t chunk : kChunks) {
      const ffr::Status s = Validate("{\"segmentation\": [[1, 2, " + number + "]]}", chunk);
      ASSERT_TRUE(s.IsCorruption()) << number << ": " << s.ToString();
      EXPECT_THAT(s.message(), HasSubstr("doc.json: malformed JSON: number overflow parsing '" + number.substr(0, 20)));
      EXPECT_THAT(s.message(), HasSubstr("at byte offset 25 (line 1, column 26)"));
      JsonScanner json("doc.json", number, chunk);
      JsonScanner::Number n;
      EXPECT_FALSE(json.ReadNumber(&n));
    }
  }
  // The largest doubles and numbers that round down to them are fine.
  for (const std::string& number : {std::string("1.7976931348623158e308"), std::string("0.1e309"),
                                    std::string("17976931348623157") + std::string(292, '0')})
    EXPECT_TRUE(Validate("[" + number + "]", 3).ok()) << number;
}

TEST(JsonScannerTest, SkipsHugeAndDeepValues) {
  // A segmentation of a million coordinates and a value nested 100,000 deep.
  std::string polygon = "{\"segmentation\": [[";
  for (int k = 0; k < 1000000; ++k) polygon += (k ? ", " : "") + std::to_string(k % 640) + ".5";
  polygon += "]], \"deep\": " + std::string(100000, '[') + "{\"a\": [true, false, null, \"s\"]}" +
             std::string(100000, ']') + ", \"id\": 3}";
  for (size_t chunk : {size_t{3}, size_t{4} << 20}) {
    JsonScanner json("doc.json", polygon, chunk);
    ASSERT_TRUE(json.BeginObject());
    std::string key;
    ASSERT_TRUE(json.NextKey(&key));
    EXPECT_EQ(key, "segmentation");
    ASSERT_TRUE(json.SkipValue()) << json.status().ToString();
    ASSERT_TRUE(json.NextKey(&key));
    EXPECT_EQ(key, "deep");
    ASSERT_TRUE(json.SkipValue()) << json.status().ToString();
    ASSERT_TRUE(json.NextKey(&key));
    EXPECT_EQ(key, "id");
    JsonScanner::Number id;
    ASSERT_TRUE(json.ReadNumber(&id));
    EXPECT_EQ(id.integer, 3);
    EXPECT_FALSE(json.NextKey(&key));
    EXPECT_TRUE(json.Finish()) << json.status().ToString();
  }
  // One bracket short, the same depth fails.
  EXPECT_FALSE(Validate(std::string(100000, '[') + std::string(99999, ']'), 4096).ok());
}

// Malformed input at every structural position, each rejected by nlohmann::json too.
const std::string kMalformed[] = {
    ""s, " "s, "{"s, "["s, "{\"a\""s, "{\"a\":"s, "{\"a\":1"s, "{\"a\":1,"s, "{\"a\":1,}"s, "{,\"a\":1}"s, "{\"a\" 1}"s,
    "{\"a\":}"s, "{1:2}"s, "{\"a\":1 \"b\":2}"s, "{'a':1}"s, "[1,]"s, "[,1]"s, "[1 2]"s, "[1,,2]"s, "[1}"s, "{\"a\":1]"s,
    "[1]]"s, "{} x"s, "{}{}"s, "01"s, "-01"s, "1."s, ".5"s, "-"s, "+1"s, "1e"s, "1e+"s, "1.e3"s, "0x10"s, "NaN"s, "Infinity"s,
    "-Infinity"s, "tru"s, "true1"s, "nul"s, "nulll"s, "False"s, "\"abc"s, "\"\\x\""s, "\"\\u12\""s, "\"\\u12G4\""s,
    "\"\\ud800\""s, "\"\\ud800\\u0041\""s, "\"\\udc00\""s, "\"\\"s, "\"a\x01\""s, "\"tab\there\""s, "\"\xFF\""s,
    "\"\xC0\xAF\""s, "\"\xC3\""s, "\"\xE2\x82\""s, "\"\xED\xA0\x80\""s, "\"\xF4\x90\x80\x80\""s, "\"\xF8\x88\x80\x80\x80\""s,
    "\xEF\xBB{}"s, "\xEF{}"s, "[1]\xEF\xBB\xBF"s, "/* c */ {}"s, "{} // c"s, "[1e400]"s, "[-1e400]"s, "\x00"s,
    "[\"a\"\x00]"s,
};

// nlohmann::json ends its input at a NUL byte, as a C string would, and so
// accepts a value followed by one; RFC 8259 allows no raw NUL (found by
// coco_json_fuzz: "8\0\0\0{...}").
TEST(JsonScannerTest, RejectsANulByteAfterTheValueThatNlohmannTakesForTheEnd) {
  for (const std::string& text : {"8\0\0\0{\"info\": 1}"s, "{}\0"s, "[1] \0 x"s}) {
    EXPECT_TRUE(nlohmann::json::accept(text)) << "nlohmann's quirk, the reason for this test";
    for (size_t chunk : kChunks) {
      const ffr::Status s = Validate(text, chunk);
      EXPECT_TRUE(s.IsCorruption()) << "accepted (chunk " << chunk << ")";
      EXPECT_THAT(s.message(), HasSubstr("unexpected byte 0x00 after the top-level value")) << s.message();
    }
  }
}

TEST(JsonScannerTest, RejectsWhatNlohmannRejects) {
  for (const std::string& text : kMalformed) {
    ASSERT_FALSE(nlohmann::json::accept(text)) << "the test case itself: " << text;
    for (size_t chunk : kChunks) {
      const ffr::Status s = Validate(text, chunk);
      EXPECT_TRUE(s.IsCorruption()) << "accepted: '" << text << "' (chunk " << chunk << ")";
      EXPECT_THAT(s.message(), HasSubstr("doc.json: malformed")) << text;
    }
  }
}

TEST(JsonScannerTest, AcceptsWhatNlohmannAccepts) {
  const char* const good[] = {
      "{}", "[]", " \t\r\n{ } ", "0", "-0.0e-0", "\"\"", "true", "null", "[[], {}, [[{}]]]",
      "{\"a\": {\"b\": [1, {\"c\": null}]}, \"a\": 2}", "\xEF\xBB\xBF[1]", "\"\\u0000\"", "\"\xF4\x8F\xBF\xBF\"",
      "\"\xEE\x80\x80 \xED\x9F\xBF\"", "[1E5, 1e-5, -0.5E+5]",
  };
  for (const char* text : good) {
    ASSERT_TRUE(nlohmann::json::accept(text)) << "the test case itself: " << text;
    for (size_t chunk : kChunks) EXPECT_TRUE(Validate(text, chunk).ok()) << Validate(text, chunk).ToString();
  }
}

// Polygon coordinates take a fast path; a number it leaves to the general one
// (a malformed number, an exponent, a number cut by the end of a read: every
// chunk size cuts it at another byte) must be judged as anywhere else.
TEST(JsonScannerTest, NumbersInAPolygonAreJudgedAsAnywhereElse) {
  const std::string numbers[] = {"0",    "-0",  "12.5", "-640.25", "1e5",  "1E-5", "-0.5e+3", "0.0", "01",
                                 "-01",  "1.",  "-",    "1e",      "1.e3", "+1",   ".5",      "1.5.5", "00",
                                 "1-2",  "0x1", std::string(300, '9'), "1" + std::string(400, '0')};
  for (const std::string& number : numbers) {
    const std::string doc = "{\"segmentation\": [[1, 2.5, " + number + ", 3, " + number + "]]}";
    const bool valid = nlohmann::json::accept(doc);
    for (size_t chunk = 1; chunk <= doc.size() + 1; ++chunk)
      EXPECT_EQ(Validate(doc, chunk).ok(), valid) << doc << " (chunk " << chunk << ")";
  }
}

TEST(JsonScannerTest, EveryPrefixOfADocumentFails) {
  const std::string doc = R"({"images": [{"id": 1, "file_name": "a\"b.jpg", "bbox": [1.5, -2e3]}], "x": [true, null]})";
  ASSERT_TRUE(Validate(doc, 3).ok());
  for (size_t n = 0; n < doc.size(); ++n)
    EXPECT_FALSE(Validate(doc.substr(0, n), 3).ok()) << "prefix of " << n << " bytes accepted";
}

TEST(JsonScannerTest, ErrorsSayWhereAndWhat) {
  const ffr::Status comma = Validate("{\n  \"a\": [1,,2]\n}", 4);
  EXPECT_THAT(comma.message(), HasSubstr("doc.json: malformed or truncated JSON at byte offset 12 (line 2, column 11): "
                                         "unexpected ','; expected a value"));
  const ffr::Status trailing = Validate("{\"a\": [1, 2, ]}", 4);
  EXPECT_THAT(trailing.message(), HasSubstr("(line 1, column 14): a trailing comma before ']'"));
  const ffr::Status escape = Validate("[\"C:\\windows\"]", 4);
  EXPECT_THAT(escape.message(), HasSubstr("invalid escape '\\w' in a string"));
  const ffr::Status utf8 = Validate("[\"caf\xFF\"]", 4);
  EXPECT_THAT(utf8.message(), HasSubstr("(line 1, column 6): ill-formed UTF-8 (byte 0xFF) inside a string"));
  // Latin-1: 0xE9 starts a three-byte sequence, and the quote after it is the error.
  const ffr::Status latin1 = Validate("[\"caf\xE9\"]", 4);
  EXPECT_THAT(latin1.message(), HasSubstr("(line 1, column 7): ill-formed UTF-8 ('\"') inside a string"));
  const ffr::Status truncated = Validate("[1, 2", 4);
  EXPECT_THAT(truncated.message(), HasSubstr("unexpected end of input; expected ',' or ']'"));
}

// A file is read through the Env in chunks; a failed read is the Env's error, not malformed JSON.
TEST(JsonScannerTest, ReadsAFileThroughTheEnv) {
  testing::ScratchDir dir("json_scanner");
  const std::string path = dir / "doc.json";
  const std::string doc = "{\"images\": [" + std::string(200, ' ') + "1]}";
  ASSERT_TRUE(testing::WriteStringToFile(path, doc));
  std::unique_ptr<JsonScanner> json;
  ASSERT_TRUE(JsonScanner::Open(ffr::Env::Default(), path, &json).ok());
  EXPECT_TRUE(json->SkipValue() && json->Finish()) << json->status().ToString();

  testing::FaultyEnv env;
  env.fail_reads_after_open = true;  // reads from byte 60 on fail: the second read of 64 bytes here
  ASSERT_TRUE(JsonScanner::Open(&env, path, &json, 64).ok());
  EXPECT_FALSE(json->SkipValue() && json->Finish());
  EXPECT_TRUE(json->status().IsIOError()) << json->status().ToString();
  EXPECT_THAT(json->status().message(), HasSubstr(path));

  EXPECT_TRUE(JsonScanner::Open(ffr::Env::Default(), dir / "absent.json", &json).IsNotFound());
}

TEST(JsonScannerTest, WrongTypeFailsTheRead) {
  JsonScanner json("doc.json", "[\"x\"]");
  ASSERT_TRUE(json.BeginArray());
  ASSERT_TRUE(json.NextElement());
  JsonScanner::Number n;
  EXPECT_FALSE(json.ReadNumber(&n));
  EXPECT_THAT(json.status().message(), HasSubstr("unexpected '\"'; expected a number"));
  EXPECT_FALSE(json.NextElement());  // a failed scanner stays failed
}

}  // namespace
}  // namespace ffyolo::source_internal
