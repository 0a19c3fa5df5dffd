#include "ffyolo/config_path.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

// Test binaries run from the build tree, so shipped configs come from the source tree.
std::string Shipped(const std::string& file) { return testing::SourcePath("configs/" + file); }

TEST(ConfigPathTest, ShippedConfigsByNameWithOrWithoutYaml) {
  EXPECT_EQ(ResolveConfig("yolov5s", "models"), Shipped("models/yolov5s.yaml"));
  EXPECT_EQ(ResolveConfig("yolov5s.yaml", "models"), Shipped("models/yolov5s.yaml"));
  EXPECT_EQ(ResolveConfig("hyp.scratch-high", "hyps"), Shipped("hyps/hyp.scratch-high.yaml"));
  EXPECT_EQ(ResolveConfig("hyp.scratch-high.yaml", "hyps"), Shipped("hyps/hyp.scratch-high.yaml"));
}

TEST(ConfigPathTest, ExistingFilesAndPathsAreKept) {
  EXPECT_EQ(ResolveConfig(Shipped("hyps/hyp.scratch-low.yaml"), "models"), Shipped("hyps/hyp.scratch-low.yaml"));
  EXPECT_EQ(ResolveConfig("no/such/yolov5s", "models"), "no/such/yolov5s");  // a path is never a name
  EXPECT_EQ(ResolveConfig("yolov5s", "hyps"), "yolov5s");                    // names are looked up by kind
  EXPECT_EQ(ResolveConfig("no_such_model", "models"), "no_such_model");
}

}  // namespace
}  // namespace ffyolo
