#include "ffyolo/hyp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

std::string ShippedHyp(const std::string& name) {
  return testing::SourcePath("configs/hyps/hyp." + name + ".yaml");
}

// The values of Ultralytics v7.0's data/hyps/hyp.scratch-low.yaml.
Hyp ScratchLow() {
  Hyp h;
  h.lr0 = 0.01, h.lrf = 0.01, h.momentum = 0.937, h.weight_decay = 0.0005;
  h.warmup_epochs = 3.0, h.warmup_momentum = 0.8, h.warmup_bias_lr = 0.1;
  h.box = 0.05, h.cls = 0.5, h.cls_pw = 1.0, h.obj = 1.0, h.obj_pw = 1.0, h.iou_t = 0.20, h.anchor_t = 4.0;
  h.fl_gamma = 0.0;
  h.hsv_h = 0.015, h.hsv_s = 0.7, h.hsv_v = 0.4;
  h.degrees = 0.0, h.translate = 0.1, h.scale = 0.5, h.shear = 0.0, h.perspective = 0.0;
  h.flipud = 0.0, h.fliplr = 0.5, h.mosaic = 1.0, h.mixup = 0.0, h.copy_paste = 0.0;
  return h;
}

Hyp ScratchHigh() {
  Hyp h = ScratchLow();
  h.lrf = 0.1, h.cls = 0.3, h.obj = 0.7, h.scale = 0.9, h.mixup = 0.1, h.copy_paste = 0.1;
  return h;
}

Hyp ScratchMed() {
  Hyp h = ScratchHigh();
  h.copy_paste = 0.0;
  return h;
}

void ExpectSameHyp(const Hyp& a, const Hyp& b) {
#define FFYOLO_EXPECT_FIELD(f) EXPECT_EQ(a.f, b.f) << #f
  FFYOLO_EXPECT_FIELD(lr0);
  FFYOLO_EXPECT_FIELD(lrf);
  FFYOLO_EXPECT_FIELD(momentum);
  FFYOLO_EXPECT_FIELD(weight_decay);
  FFYOLO_EXPECT_FIELD(warmup_epochs);
  FFYOLO_EXPECT_FIELD(warmup_momentum);
  FFYOLO_EXPECT_FIELD(warmup_bias_lr);
  FFYOLO_EXPECT_FIELD(box);
  FFYOLO_EXPECT_FIELD(cls);
  FFYOLO_EXPECT_FIELD(cls_pw);
  FFYOLO_EXPECT_FIELD(obj);
  FFYOLO_EXPECT_FIELD(obj_pw);
  FFYOLO_EXPECT_FIELD(iou_t);
  FFYOLO_EXPECT_FIELD(anchor_t);
  FFYOLO_EXPECT_FIELD(fl_gamma);
  FFYOLO_EXPECT_FIELD(hsv_h);
  FFYOLO_EXPECT_FIELD(hsv_s);
  FFYOLO_EXPECT_FIELD(hsv_v);
  FFYOLO_EXPECT_FIELD(degrees);
  FFYOLO_EXPECT_FIELD(translate);
  FFYOLO_EXPECT_FIELD(scale);
  FFYOLO_EXPECT_FIELD(shear);
  FFYOLO_EXPECT_FIELD(perspective);
  FFYOLO_EXPECT_FIELD(flipud);
  FFYOLO_EXPECT_FIELD(fliplr);
  FFYOLO_EXPECT_FIELD(mosaic);
  FFYOLO_EXPECT_FIELD(mixup);
  FFYOLO_EXPECT_FIELD(copy_paste);
#undef FFYOLO_EXPECT_FIELD
}

TEST(Hyp, ShippedFilesHaveUltralyticsValues) {
  const struct {
    const char* name;
    Hyp expected;
  } cases[] = {{"scratch-low", ScratchLow()}, {"scratch-med", ScratchMed()}, {"scratch-high", ScratchHigh()}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Hyp loaded;
    loaded.lr0 = -1;  // must be overwritten by the file
    const ffr::Status s = Hyp::Load(ShippedHyp(c.name), &loaded);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectSameHyp(loaded, c.expected);
  }
}

TEST(Hyp, DefaultsAreScratchLow) { ExpectSameHyp(Hyp(), ScratchLow()); }

TEST(Hyp, ShippedFilesListEveryKeyInToYamlOrder) {
  // Every key of the files, in order, as ToYaml writes them (comments and blank lines aside).
  const std::string text = testing::ReadFileToString(ShippedHyp("scratch-high"));
  std::string keys_in_file, keys_in_yaml;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line[0] != '#') keys_in_file += line.substr(0, line.find(':')) + " ";
    pos = end + 1;
  }
  const std::string yaml = ScratchHigh().ToYaml();
  for (size_t p = 0; p < yaml.size(); p = yaml.find('\n', p) + 1) keys_in_yaml += yaml.substr(p, yaml.find(':', p) - p) + " ";
  EXPECT_EQ(keys_in_file, keys_in_yaml);
}

TEST(Hyp, ToYamlRoundTrips) {
  Hyp h = ScratchHigh();
  h.lr0 = 0.0123456789012345;  // needs full precision
  h.degrees = 1e-7;
  h.warmup_epochs = 5;
  Hyp back;
  const ffr::Status s = Hyp::Parse(h.ToYaml(), "round trip", &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectSameHyp(back, h);
  // Plain decimals, as Ultralytics writes them: PyYAML reads 5e-04 as a string.
  const std::string yaml = h.ToYaml();
  EXPECT_NE(yaml.find("warmup_epochs: 5.0\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("weight_decay: 0.0005\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("degrees: 0.0000001\n"), std::string::npos) << yaml;
}

TEST(Hyp, MissingKeysKeepDefaults) {
  Hyp h;
  const ffr::Status s = Hyp::Parse("lr0: 0.02  # faster\nmixup: 0.25\n", "partial.yaml", &h);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Hyp expected = ScratchLow();
  expected.lr0 = 0.02;
  expected.mixup = 0.25;
  ExpectSameHyp(h, expected);
}

TEST(Hyp, MissingKeysAreListed) {
  Hyp h;
  std::vector<std::string> defaulted;
  ASSERT_TRUE(Hyp::Parse("lr0: 0.02\nmixup: 0.25\n", "partial.yaml", &h, &defaulted).ok());
  EXPECT_EQ(defaulted.size(), 26u);
  EXPECT_EQ(defaulted.front(), "lrf");
  EXPECT_EQ(std::count(defaulted.begin(), defaulted.end(), "mixup"), 0);
  for (const char* name : {"scratch-low", "scratch-med", "scratch-high"}) {  // in range, and complete
    const ffr::Status s = Hyp::Load(ShippedHyp(name), &h, &defaulted);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(defaulted.empty()) << name;
  }
}

TEST(Hyp, ValuesOutOfTheirRangeNameFileLineKeyAndRange) {
  const struct {
    const char* yaml;
    const char* says;
  } cases[] = {{"lr0: -1\n", "bad.yaml:1: lr0 must be > 0, not -1"},
               {"momentum: 0.9\nlr0: 0\n", "bad.yaml:2: lr0 must be > 0, not 0"},
               {"fliplr: 1.5\n", "fliplr must be in [0, 1], not 1.5"},
               {"weight_decay: -0.0005\n", "weight_decay must be >= 0, not -0.0005"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    Hyp h;
    const ffr::Status s = Hyp::Parse(c.yaml, "bad.yaml", &h);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
  }
}

TEST(Hyp, UnknownKeyNamesFileAndKey) {
  Hyp h;
  const ffr::Status s = Hyp::Parse("lr0: 0.01\nmomentun: 0.9\n", "my_hyp.yaml", &h);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("my_hyp.yaml:2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("momentun"), std::string::npos) << s.message();
}

// yaml-cpp would read the first lr0, PyYAML (train.py) the last.
TEST(Hyp, ARepeatedKeyIsRefused) {
  Hyp h;
  const ffr::Status s = Hyp::Parse("lr0: 0.01\nmomentum: 0.9\nlr0: 0.1\n", "my_hyp.yaml", &h);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("my_hyp.yaml:3: key 'lr0' appears twice"), std::string::npos) << s.message();
}

TEST(Hyp, UnknownKeyInAFileNamesThePath) {
  testing::ScratchDir dir("loader_hyp_unknown_key");
  const std::string path = dir / "hyp.yaml";
  ASSERT_TRUE(testing::WriteStringToFile(path, "lr0: 0.01\nalbumentations: []\n"));
  Hyp h;
  const ffr::Status s = Hyp::Load(path, &h);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("albumentations"), std::string::npos) << s.message();
}

TEST(Hyp, BadValuesNameTheKey) {
  for (const char* yaml : {"scale: big\n", "scale: 0.5x\n", "scale: [0.5]\n", "scale:\n", "scale: .nan\n",
                           "scale: true\n"}) {
    SCOPED_TRACE(yaml);
    Hyp h;
    const ffr::Status s = Hyp::Parse(yaml, "bad.yaml", &h);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find("bad.yaml"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("scale"), std::string::npos) << s.message();
  }
}

TEST(Hyp, AcceptsUltralyticsNumberSpellings) {
  Hyp h;
  const ffr::Status s = Hyp::Parse("lr0: 1E-3\nwarmup_epochs: 3\nweight_decay: 5e-4\n", "spellings.yaml", &h);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(h.lr0, 0.001);
  EXPECT_EQ(h.warmup_epochs, 3.0);
  EXPECT_EQ(h.weight_decay, 0.0005);
}

TEST(Hyp, CustomAnchorsAreNotSupported) {
  Hyp h;
  const ffr::Status s = Hyp::Parse("lr0: 0.01\nanchors: 3\n", "anchors.yaml", &h);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("anchors.yaml"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("model YAML"), std::string::npos) << s.message();
}

TEST(Hyp, RejectsDocumentsThatAreNotAMapping) {
  for (const char* yaml : {"", "- lr0: 0.01\n", "lr0: [unclosed\n"}) {
    SCOPED_TRACE(yaml);
    Hyp h;
    const ffr::Status s = Hyp::Parse(yaml, "odd.yaml", &h);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find("odd.yaml"), std::string::npos) << s.message();
  }
}

TEST(Hyp, FailedParseLeavesOutputUntouched) {
  Hyp h;
  h.lr0 = 0.5;
  EXPECT_FALSE(Hyp::Parse("lr0: 0.02\nbogus: 1\n", "x.yaml", &h).ok());
  EXPECT_EQ(h.lr0, 0.5);
}

TEST(Hyp, MissingFileIsAnError) {
  Hyp h;
  const ffr::Status s = Hyp::Load("/nonexistent/hyp.yaml", &h);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/hyp.yaml"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ffyolo
