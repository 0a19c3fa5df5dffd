// The yolo-synth executable: flags reach the generator, the summary line, exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
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
  const ProcessResult forced = RunYoloSynth(args + " --force --yolo");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "data.yaml"));
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
