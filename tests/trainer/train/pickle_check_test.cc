// CheckPickle: what LibTorch writes passes; each construct on which LibTorch's
// unpickler would allocate without bound, read past its data or make a tensor
// past its storage is refused, naming the entry and the byte.
#include "pickle_check.h"

#include <c10/core/ScalarType.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fuzz/checkpoint_input.h"
#include "testing/test_env.h"
#include "zip_integrity.h"

namespace ffyolo {
namespace {

// Pickle bytes written opcode by opcode (protocol 2, as LibTorch and torch.save write them).
class Pickle {
 public:
  Pickle& Op(char op) {
    bytes_ += op;
    return *this;
  }
  Pickle& Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_ += static_cast<char>(v >> (8 * i));
    return *this;
  }
  Pickle& Str(const std::string& s) { return Op('X').Le(s.size(), 4).Raw(s); }
  Pickle& Int(uint8_t v) { return Op('K').Le(v, 1); }
  Pickle& Global(const std::string& module, const std::string& name) { return Op('c').Raw(module + "\n" + name + "\n"); }
  Pickle& Ints(const std::vector<uint8_t>& v) {  // a tuple of them
    Op('(');
    for (const uint8_t i : v) Int(i);
    return Op('t');
  }
  // torch._utils._rebuild_tensor_v2 of float storage data/0 of `elements`, as torch.save writes it.
  Pickle& Tensor(uint8_t elements, uint8_t offset, const std::vector<uint8_t>& sizes,
                 const std::vector<uint8_t>& strides) {
    Global("torch._utils", "_rebuild_tensor_v2").Op('(');
    Op('(').Str("storage").Global("torch", "FloatStorage").Str("0").Str("cpu").Int(elements).Op('t').Op('Q');
    Int(offset).Ints(sizes).Ints(strides).Op('\x89');
    Global("collections", "OrderedDict").Op(')').Op('R');
    return Op('t').Op('R');
  }
  Pickle& Raw(const std::string& s) {
    bytes_ += s;
    return *this;
  }
  std::string Stop() const { return bytes_ + "."; }

 private:
  std::string bytes_ = "\x80\x02";
};

// The archive holds data/0 of `record_bytes` (none when negative).
ffr::Status Check(const std::string& pickle, int64_t record_bytes = 40) {
  return CheckPickle(pickle, "archive/data.pkl", [&](const std::string& name) -> std::optional<uint64_t> {
    if (name != "archive/data/0" || record_bytes < 0) return std::nullopt;
    return record_bytes;
  });
}

TEST(PickleCheckTest, ACheckpointsPicklesPass) {
  // checkpoint_fuzz's seed: the entries of a checkpoint LibTorch 1.13 wrote, and the records they name.
  const std::string input =
      testing::ReadFileToString(testing::SourcePath("tests/fuzz/corpus/checkpoint_fuzz/last_yolov5n_w003_nc1"));
  ASSERT_FALSE(input.empty());
  const std::string zip =
      checkpoint_input::Zip(checkpoint_input::Entries(reinterpret_cast<const uint8_t*>(input.data()), input.size()));
  std::vector<ZipEntry> entries;
  ASSERT_TRUE(CheckZipIntegrity(reinterpret_cast<const uint8_t*>(zip.data()), zip.size(), "last.pt", &entries,
                                [](const std::string& name) { return name.find("pkl") != std::string::npos; })
                  .ok());
  std::map<std::string, uint64_t> sizes;
  for (const ZipEntry& e : entries) sizes[e.name] = e.size;
  int pickles = 0;
  for (const ZipEntry& e : entries) {
    if (e.name.find("pkl") == std::string::npos) continue;
    ++pickles;
    const ffr::Status s = CheckPickle(e.contents, e.name, [&](const std::string& name) -> std::optional<uint64_t> {
      const auto it = sizes.find(name);
      return it == sizes.end() ? std::nullopt : std::optional<uint64_t>(it->second);
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_GT(pickles, 100);  // data.pkl, constants.pkl and the code's .debug_pkl files
}

TEST(PickleCheckTest, TensorsWithinTheirStoragePass) {
  EXPECT_TRUE(Check(Pickle().Tensor(10, 0, {10}, {1}).Stop()).ok());
  EXPECT_TRUE(Check(Pickle().Tensor(10, 0, {2, 5}, {5, 1}).Stop()).ok());
  EXPECT_TRUE(Check(Pickle().Tensor(10, 9, {1}, {1}).Stop()).ok());
  EXPECT_TRUE(Check(Pickle().Tensor(10, 0, {0, 40}, {40, 1}).Stop()).ok());  // no elements: nothing read
  EXPECT_TRUE(Check(Pickle().Tensor(0, 0, {0}, {1}).Stop(), -1).ok());      // LibTorch reads no record
}

// checkpoint_fuzz in CI: one LONG_BINPUT of index 0x650004aa made LibTorch allocate 27 GB of memo.
TEST(PickleCheckTest, AMemoIndexPastThoseGivenIsRefused) {
  const ffr::Status s = Check(Pickle().Op('N').Op('r').Le(0x650004aa, 4).Stop());
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("'archive/data.pkl', byte 3: memo entry 1694500010 made after 0"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(Check(Pickle().Op('N').Op('q').Le(0, 1).Op('r').Le(1, 4).Op('q').Le(0, 1).Stop()).ok());
}

TEST(PickleCheckTest, AStorageLargerThanItsRecordIsRefused) {
  const ffr::Status s = Check(Pickle().Tensor(10, 0, {10}, {1}).Stop(), 39);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("storage 'archive/data/0' of 10 FloatStorage elements, in a record of 39 bytes"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(Check(Pickle().Tensor(10, 0, {10}, {1}).Stop(), -1).message().find("has no record"), std::string::npos);
}

TEST(PickleCheckTest, ATensorPastItsStorageIsRefused) {
  for (const std::string& p : {Pickle().Tensor(10, 0, {11}, {1}).Stop(), Pickle().Tensor(10, 1, {10}, {1}).Stop(),
                               Pickle().Tensor(10, 0, {2, 5}, {6, 1}).Stop()}) {
    const ffr::Status s = Check(p);
    EXPECT_TRUE(s.IsCorruption());
    EXPECT_NE(s.message().find("of a storage of 10"), std::string::npos) << s.ToString();
  }
  // Sizes and strides that do not pair up, or that overflow.
  EXPECT_TRUE(Check(Pickle().Tensor(10, 0, {10}, {1, 1}).Stop()).IsCorruption());
  Pickle huge;
  huge.Global("torch._utils", "_rebuild_tensor_v2").Op('(');
  huge.Op('(').Str("storage").Global("torch", "FloatStorage").Str("0").Str("cpu").Int(10).Op('t').Op('Q');
  huge.Int(0).Op('(').Op('\x8a').Le(8, 1).Le(uint64_t{1} << 62, 8).Op('t');
  huge.Op('(').Op('\x8a').Le(8, 1).Le(uint64_t{1} << 62, 8).Op('t').Op('\x89').Op('}').Op('t').Op('R');
  EXPECT_NE(Check(huge.Stop()).message().find("a tensor past any storage"), std::string::npos);
}

// A call through an index the pickle never named (LibTorch calls its functions by number) would
// rebuild a tensor unchecked.
TEST(PickleCheckTest, ACallOfWhatThePickleDidNotNameIsRefused) {
  const ffr::Status s = Check(Pickle().Int(0).Op(')').Op('R').Stop());
  EXPECT_NE(s.message().find("a call of something that is not a function the pickle named"), std::string::npos)
      << s.ToString();
  // A number that happens to index _rebuild_tensor_v2 is that function: its argument is checked.
  Pickle by_number;
  by_number.Global("torch._utils", "_rebuild_tensor_v2").Int(0).Op(')').Op('R');
  EXPECT_NE(Check(by_number.Stop()).message().find("a tensor not made of a storage"), std::string::npos);
}

TEST(PickleCheckTest, ContainersThatReachBelowTheirMarkAreRefused) {
  EXPECT_NE(Check(Pickle().Op('(').Str("key").Op('d').Stop()).message().find("odd number"), std::string::npos);
  EXPECT_NE(Check(Pickle().Op('}').Op('(').Str("k").Op('u').Stop()).message().find("odd number"), std::string::npos);
  EXPECT_NE(Check(Pickle().Op('(').Str("v").Op('e').Stop()).message().find("added to no container"),
            std::string::npos);
  // A call whose function lies below the mark: LibTorch's TUPLE would then start past the stack's end.
  Pickle below;
  below.Global("collections", "OrderedDict").Op('(').Op(')').Op('R');
  EXPECT_NE(Check(below.Stop()).message().find("a call without a function"), std::string::npos);
  EXPECT_TRUE(Check(Pickle().Op(')').Op('\x86').Stop()).IsCorruption());  // TUPLE2 of one item
  EXPECT_TRUE(Check(Pickle().Op('t').Stop()).IsCorruption());             // TUPLE without MARK
  EXPECT_TRUE(Check(Pickle().Op('}').Str("k").Op('s').Stop()).IsCorruption());  // SETITEM without a value
}

// pickle_check_fuzz's ten-minute run: 34,889 nested TUPLE1s overflowed the check's own stack (its
// tuples' destructors recursed); LibTorch's unpickler dies the same way on a million (a 1 MB pickle).
TEST(PickleCheckTest, ContainersNestedTooDeepAreRefused) {
  const auto nested = [](int depth) {
    Pickle p;
    p.Op('N');
    for (int i = 0; i < depth; ++i) p.Op('\x85');  // TUPLE1
    return p.Stop();
  };
  EXPECT_TRUE(Check(nested(1000)).ok());
  for (const int depth : {1001, 34889, 1000000}) {
    const ffr::Status s = Check(nested(depth));
    EXPECT_NE(s.message().find("containers nested over 1000 deep"), std::string::npos) << depth << ": " << s.ToString();
  }
  // Nested top down through the memo: each dict goes into the one made before it, read back from the memo.
  Pickle top_down;
  top_down.Op('}').Op('r').Le(0, 4);
  for (uint32_t i = 1; i <= 1000; ++i)
    top_down.Op('j').Le(i - 1, 4).Str("k").Op('}').Op('r').Le(i, 4).Op('s');
  EXPECT_NE(Check(top_down.Stop()).message().find("containers nested over 1000 deep"), std::string::npos);
  // A list that holds itself.
  const ffr::Status itself = Check(Pickle().Op(']').Op('q').Le(0, 1).Op('(').Op('h').Le(0, 1).Op('e').Stop());
  EXPECT_NE(itself.message().find("byte 2: a container that holds itself"), std::string::npos) << itself.ToString();
}

TEST(PickleCheckTest, BytesPastTheEndAreRefused) {
  const ffr::Status s = Check(Pickle().Op('X').Le(0x7fffffff, 4).Raw("abc").Stop());
  EXPECT_NE(s.message().find("byte 2: a string of 2147483647 bytes runs past the end"), std::string::npos)
      << s.ToString();
  EXPECT_NE(Check("\x80\x02N").message().find("ends before its STOP"), std::string::npos);
  EXPECT_TRUE(Check(Pickle().Op('J').Le(1, 2).Stop().substr(0, 5)).IsCorruption());
  EXPECT_TRUE(Check(Pickle().Op('c').Raw("torch._utils").Stop()).IsCorruption());  // GLOBAL without newlines
}

TEST(PickleCheckTest, WhatLibTorchDoesNotReadIsRefused) {
  EXPECT_NE(Check("\x80\x03N.").message().find("pickle protocol 3; LibTorch reads protocol 2"), std::string::npos);
  EXPECT_NE(Check("N.").message().find("not a pickle"), std::string::npos);
  EXPECT_NE(Check(Pickle().Op('\x8a').Le(4, 1).Le(1, 4).Stop()).message().find("an integer of 4 bytes"),
            std::string::npos);
  EXPECT_NE(Check(Pickle().Op('N').Op('0').Stop()).message().find("byte 3: opcode 0x30, which LibTorch"),
            std::string::npos);  // POP
  EXPECT_NE(Check(Pickle().Global("torch._utils", "_rebuild_qtensor").Stop()).message().find("a kind of tensor"),
            std::string::npos);
  EXPECT_NE(Check(Pickle().Global("torch", "QInt8Storage").Stop()).message().find("does not hold"), std::string::npos);
  EXPECT_TRUE(Check(Pickle().Op('(').Str("storage").Int(12).Str("0").Str("cpu").Int(1).Op('t').Op('Q').Stop())
                  .IsCorruption());  // element type 12 (QInt8) given as a number
}

// The storage classes and numbers are LibTorch's own.
TEST(PickleCheckTest, StorageTypesAreLibTorchs) {
  for (const StorageType& t : StorageTypes()) {
    const auto type = static_cast<c10::ScalarType>(t.scalar_type);
    EXPECT_EQ(std::string(c10::toString(type)) + "Storage", t.class_name);
    EXPECT_EQ(static_cast<int64_t>(c10::elementSize(type)), t.element_bytes) << t.class_name;
  }
}

}  // namespace
}  // namespace ffyolo
