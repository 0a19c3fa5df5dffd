// Pack under injected faults: each file-system call of a clean pack is failed
// in turn. The pack must say so naming the file; what it leaves must be refused
// by Dataset::Open or be the complete dataset; running it again must give the
// clean pack's dataset byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "ffyolo/dataset.h"
#include "ffyolo/pack.h"
#include "ffyolo/synthetic.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::FaultyEnv;
using testing::ScratchDir;
using testing::WriteOp;

// Relative path -> contents of every file under `root`. The manifest's
// creation time is blanked: it is the one thing two packs of a source differ in.
std::map<std::string, std::string> ReadTree(const std::string& root) {
  std::map<std::string, std::string> tree;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), root).string();
    std::string text = testing::ReadFileToString(e.path().string());
    if (rel == kManifestFile) {
      const size_t created = text.find("created: ");
      if (created != std::string::npos) text.erase(created, text.find('\n', created) - created);
    }
    tree[rel] = text;
  }
  return tree;
}

std::vector<std::string> Names(const std::map<std::string, std::string>& tree) {
  std::vector<std::string> names;
  for (const auto& [name, text] : tree) names.push_back(name);
  return names;
}

void ExpectSameTree(const std::map<std::string, std::string>& want, const std::map<std::string, std::string>& got) {
  ASSERT_EQ(Names(want), Names(got));
  for (const auto& [name, text] : want) EXPECT_TRUE(got.at(name) == text) << name << " differs";
}

TEST(PackFaultTest, EveryFailedWriteLeavesARefusedOrCompleteOutputThatResumes) {
  ScratchDir dir("faults");
  SyntheticOptions so;
  so.output_dir = dir / "src";
  so.train_images = 5;
  so.val_images = 3;
  so.width = so.height = 32;
  so.num_classes = 2;
  so.num_threads = 1;
  SyntheticSummary ss;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  auto options = [&](const std::string& out, ffr::Env* env) {
    PackOptions o;
    o.source = so.output_dir;
    o.output = out;
    o.shards = 2;  // per split: a first shard, a last one, then the label index
    o.threads = 2;
    o.env = env;
    return o;
  };

  FaultyEnv counting;
  PackSummary sum;
  ASSERT_TRUE(Pack(options(dir / "clean.ffr", &counting), &sum).ok());
  ASSERT_EQ(sum.images, 8);
  const auto clean = ReadTree(dir / "clean.ffr");

  for (int o = 0; o < testing::kNumWriteOps; ++o) {
    const WriteOp op = static_cast<WriteOp>(o);
    EXPECT_GT(counting.calls(op), 0) << WriteOpName(op) << " is never called, so never tested";
    for (int64_t k = 0; k < counting.calls(op); ++k) {
      const std::string name = std::string(WriteOpName(op)) + "_" + std::to_string(k);
      SCOPED_TRACE("failing " + name);
      const std::string out = dir / (name + ".ffr");
      FaultyEnv env;
      env.FailFrom(op, k);
      const Status failed = Pack(options(out, &env), &sum);
      ASSERT_FALSE(failed.ok());
      ASSERT_FALSE(env.failed_path().empty());
      EXPECT_NE(failed.message().find(env.failed_path()), std::string::npos) << failed.ToString();

      std::unique_ptr<Dataset> d;
      const Status open = Dataset::Open(out, &d);
      EXPECT_TRUE(open.ok() || open.IsNotFound()) << open.ToString();
      if (open.ok()) {  // complete but for the pack's own bookkeeping
        auto left = ReadTree(out);
        left.erase(".pack-state");
        ExpectSameTree(clean, left);
      }

      FaultyEnv no_faults;
      const Status rerun = Pack(options(out, &no_faults), &sum);
      ASSERT_TRUE(rerun.ok()) << rerun.ToString();
      ExpectSameTree(clean, ReadTree(out));
      fs::remove_all(out);
    }
  }
}

}  // namespace
}  // namespace ffyolo
