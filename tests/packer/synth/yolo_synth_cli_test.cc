// The yolo-synth executable: flags reach the generator, the summary line, exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "testing/test_env.h"

namespace {

struct ProcessResult {
  int exit_code = -1;
  std::string output;
};

ProcessResult RunYoloSynth(const std::string& args) {
  ProcessResult run;
  const std::string command = std::string(YOLO_SYNTH_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe)) run.output += buffer;
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(YoloSynthCliTest, WritesDatasetAndRefusesToOverwrite) {
  ffyolo::testing::ScratchDir dir("cli");
  const std::string args = "-o " + dir.path() + " --train 3 --val 1 --size 64x48 --classes 20 --seed 3 --threads 2";
  const ProcessResult first = RunYoloSynth(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("4 images"), std::string::npos) << first.output;

  const auto coco = nlohmann::json::parse(ffyolo::testing::ReadFileToString(dir / "annotations/instances_train2017.json"));
  ASSERT_EQ(coco["images"].size(), 3u);
  EXPECT_EQ(coco["images"][0]["width"].get<int>(), 64);
  EXPECT_EQ(coco["images"][0]["height"].get<int>(), 48);
  EXPECT_EQ(coco["categories"].size(), 20u);

  const ProcessResult refused = RunYoloSynth(args);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("--force"), std::string::npos) << refused.output;
  EXPECT_EQ(refused.output.find("SyntheticOptions"), std::string::npos) << "an internal name: " << refused.output;
  const ProcessResult forced = RunYoloSynth(args + " --force --yolo");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "data.yaml"));
}

// --min-object / --max-object bound the shapes' sizes as fractions of the image's shorter side: a box's longer
// side is at most the largest size's diagonal (a rotated shape), and is smaller than the smallest size only where
// a later object covers part of it.
TEST(YoloSynthCliTest, ObjectSizeFlagsBoundTheBoxes) {
  ffyolo::testing::ScratchDir dir("cli_objects");
  const ProcessResult run = RunYoloSynth("-o " + dir.path() +
                                         " --train 40 --val 0 --size 96x64 --max-objects 3 --min-object 0.3"
                                         " --max-object 0.5 --seed 5 --threads 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto coco = nlohmann::json::parse(ffyolo::testing::ReadFileToString(dir / "annotations/instances_train2017.json"));
  std::vector<double> sides;
  for (const auto& a : coco["annotations"]) {
    sides.push_back(std::max(a["bbox"][2].get<double>(), a["bbox"][3].get<double>()));
    EXPECT_LE(sides.back(), std::sqrt(2.0) * 0.5 * 64 + 2) << a.dump();  // + the anti-aliased rim
  }
  ASSERT_GT(sides.size(), 40u);
  std::sort(sides.begin(), sides.end());
  EXPECT_GE(sides[sides.size() / 2], 0.3 * 64) << "the median box";
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + "/bad --max-object 1.5").exit_code, 0);
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + "/bad --min-object 0.6 --max-object 0.5").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir / "bad"));
}

TEST(YoloSynthCliTest, RejectsMalformedFlags) {
  ffyolo::testing::ScratchDir dir("cli_bad");
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + " --size 64by48").exit_code, 0);
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + " --subsampling 422").exit_code, 0);
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + " --classes 1000").exit_code, 0);
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + " --size 64x48 --min-size 32").exit_code, 0);
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + " --coco-sizes --size 64x48").exit_code, 0);
  EXPECT_NE(RunYoloSynth("-o " + dir.path() + " --coco-sizes --max-size 320").exit_code, 0);
  EXPECT_NE(RunYoloSynth("--train 3").exit_code, 0) << "-o is required";
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
