// Pack under injected faults: each file-system call of a clean pack is failed
// in turn. The pack must say so naming the file; what it leaves must be refused
// by Dataset::Open or be the complete dataset; running it again must give the
// clean pack's dataset byte for byte. Then the same for the real yolo-pack
// killed (SIGKILL) at random moments.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "ffr/reader.h"
#include "ffyolo/dataset.h"
#include "ffyolo/pack.h"
#include "ffyolo/synthetic.h"
#include "testing/faulty_env.h"
#include "testing/small_disk.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::FaultyEnv;
using testing::ScratchDir;
using testing::SmallDisk;
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
  // A bad image in the first shard, skipped: a resumed pack must count it as the clean one does.
  fs::resize_file(so.output_dir + "/train2017/000000000003.jpg", 100);
  auto options = [&](const std::string& out, ffr::Env* env) {
    PackOptions o;
    o.source = so.output_dir;
    o.output = out;
    o.shards = 2;  // per split: a first shard, a last one, then the label index
    o.threads = 2;
    o.skip_bad = true;
    o.env = env;
    return o;
  };

  FaultyEnv counting;
  PackSummary sum;
  ASSERT_TRUE(Pack(options(dir / "clean.ffr", &counting), &sum).ok());
  ASSERT_EQ(sum.images, 7);
  ASSERT_EQ(sum.skipped, 1);
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
      // A shard finishes while the next one is written: either may fail first.
      EXPECT_TRUE(env.NamesAFailedPath(failed.message())) << failed.ToString();

      std::unique_ptr<Dataset> d;
      const Status open = Dataset::Open(out, &d);
      EXPECT_TRUE(open.ok() || open.IsNotFound()) << open.ToString();
      if (open.ok()) {  // complete but for the pack's own bookkeeping
        auto left = ReadTree(out);
        left.erase(".pack-state");
        ExpectSameTree(clean, left);
      }
      d.reset();  // a reader holds the dataset's LOCK: the pack below would wait for it

      FaultyEnv no_faults;
      const Status rerun = Pack(options(out, &no_faults), &sum);
      ASSERT_TRUE(rerun.ok()) << rerun.ToString();
      ExpectSameTree(clean, ReadTree(out));
      testing::RemoveTree(out);
    }
  }
}

// Found by the kill loop below: a pack killed while it wrote its state file
// (the first thing it writes) left .pack-state.tmp, and the same command run
// again refused the output as someone else's folder.
TEST(PackFaultTest, APackKilledWhileWritingItsStateFileStartsAfreshWhenRunAgain) {
  ScratchDir dir("state_tmp");
  SyntheticOptions so;
  so.output_dir = dir / "src";
  so.train_images = 3;
  so.val_images = 2;
  so.width = so.height = 32;
  so.num_threads = 1;
  SyntheticSummary ss;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  PackOptions o;
  o.source = so.output_dir;
  o.output = dir / "out.ffr";
  fs::create_directories(o.output);
  ASSERT_TRUE(testing::WriteStringToFile(o.output + "/LOCK", ""));
  ASSERT_TRUE(testing::WriteStringToFile(o.output + "/.pack-state.tmp", "finger"));
  PackSummary sum;
  const Status s = Pack(o, &sum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(fs::exists(o.output + "/.pack-state.tmp"));
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(o.output, &d).ok());
}

// Starts `argv` with stdout and stderr to `log`; its pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(out, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int WaitStatus(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// yolo-pack, the way users run it, killed with SIGKILL at 30 moments spread
// (seeded) over a clean pack's duration; each time the output opens as the
// clean pack byte for byte (but for dataset.yaml's `created`) or is refused,
// and the same command run again resumes to the clean pack (or, the pack
// finished, says so and leaves it). CI runs 10 kills (about 4 s);
// FFYOLO_KILL_LOOPS=30 runs the full loop (about 12 s).
TEST(PackFaultTest, YoloPackKilledAtRandomMomentsLeavesARefusedOrCompleteOutputThatResumes) {
  ScratchDir dir("killed");
  SyntheticOptions so;
  so.output_dir = dir / "src";
  so.train_images = 48;
  so.val_images = 16;
  so.width = so.height = 96;
  so.num_classes = 3;
  so.num_threads = 2;
  SyntheticSummary ss;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  auto command = [&](const std::string& out) {
    return std::vector<std::string>{YOLO_PACK, so.output_dir, "-o", out, "--shards", "6", "--workers", "1", "--check"};
  };
  const auto begin = std::chrono::steady_clock::now();
  const std::string log = dir / "log";
  ASSERT_EQ(WaitStatus(Spawn(command(dir / "clean.ffr"), log)), 0) << testing::ReadFileToString(log);
  const double clean_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const auto clean = ReadTree(dir / "clean.ffr");

  const char* loops_env = std::getenv("FFYOLO_KILL_LOOPS");
  const int loops = loops_env ? std::atoi(loops_env) : 10;
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> moment(0, 1.1 * clean_seconds);
  int refused = 0, complete = 0, finished = 0;
  const std::string out = dir / "out.ffr";
  for (int k = 0; k < loops; ++k) {
    const double delay = moment(rng);
    SCOPED_TRACE("kill " + std::to_string(k) + " after " + std::to_string(delay) + " s");
    const pid_t pid = Spawn(command(out), log);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    kill(pid, SIGKILL);
    const int status = WaitStatus(pid);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0);
      ++finished;
    }
    std::unique_ptr<Dataset> d;
    const Status open = Dataset::Open(out, &d);
    d.reset();  // a reader holds the dataset's LOCK: the rerun below would wait for it
    if (open.ok()) {
      ++complete;
      auto left = ReadTree(out);
      const bool unfinished = left.erase(".pack-state") > 0;  // killed between dataset.yaml and its removal
      ExpectSameTree(clean, left);
      // Run again, a finished pack is left alone; an unfinished one finishes.
      const int rerun = WaitStatus(Spawn(command(out), log));
      if (unfinished) {
        ASSERT_EQ(rerun, 0) << "the rerun failed: " << testing::ReadFileToString(log);
      } else {
        EXPECT_NE(testing::ReadFileToString(log).find("already holds a complete dataset"), std::string::npos);
      }
    } else {
      ++refused;
      EXPECT_TRUE(open.IsNotFound() || open.IsCorruption()) << open.ToString();
      ASSERT_EQ(WaitStatus(Spawn(command(out), log)), 0) << "the rerun failed: " << testing::ReadFileToString(log);
    }
    ExpectSameTree(clean, ReadTree(out));
    testing::RemoveTree(out);
  }
  std::printf("clean pack %.3f s; %d kills: %d left a refused output, %d a complete one (%d had finished)\n",
              clean_seconds, loops, refused, complete, finished);
  if (loops >= 10) {
    EXPECT_GT(refused, 0) << "no kill landed mid-pack";
  }
}

// What a pack that failed may leave: no dataset.yaml and nothing Dataset::Open
// takes; shards only whole (they are kept for the resume).
void ExpectNothingLooksComplete(const std::string& out) {
  std::unique_ptr<Dataset> d;
  const Status open = Dataset::Open(out, &d);
  EXPECT_TRUE(open.IsNotFound()) << open.ToString();
  EXPECT_FALSE(fs::exists(out + "/" + kManifestFile));
  if (!fs::exists(out)) return;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (e.path().extension() != ".ffr") continue;
    std::unique_ptr<ffr::Reader> r;
    const Status s = ffr::Reader::Open(e.path().string(), ffr::ReaderOptions(), &r);
    EXPECT_TRUE(s.ok()) << "a torn shard under its final name: " << s.ToString();
  }
}

// Packing onto a full disk: refused before it starts when the images alone do
// not fit, saying how much is needed; a disk that fills up mid-pack (another
// writer) fails naming the file and the space needed, leaves nothing that
// looks complete, and the same pack resumes once there is room.
TEST(PackFaultTest, FullDiskSaysHowMuchSpaceIsNeededAndLeavesNothingComplete) {
  ScratchDir dir("full_disk");
  SmallDisk disk(dir / "disk", 2 << 20);
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a 2 MB tmpfs here (" << disk.error() << "); needs root";
  SyntheticOptions so;
  so.output_dir = dir / "src";
  so.train_images = 40;
  so.val_images = 8;
  so.width = so.height = 480;
  so.num_classes = 3;
  so.num_threads = 2;
  SyntheticSummary ss;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  uint64_t image_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(so.output_dir))
    if (e.path().extension() == ".jpg") image_bytes += e.file_size();
  ASSERT_GT(image_bytes, 2u << 20) << "the source must not fit";
  PackOptions o;
  o.source = so.output_dir;
  o.output = dir / "disk/out.ffr";
  o.shards = 4;
  o.threads = 2;
  PackSummary sum;
  Status s = Pack(o, &sum);
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("not enough free space"), std::string::npos) << s.message();
  char needed[32];
  std::snprintf(needed, sizeof(needed), "needs at least %.1f MB", static_cast<double>(image_bytes) / 1e6);
  EXPECT_NE(s.message().find(needed), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(o.output), std::string::npos) << s.message();
  ExpectNothingLooksComplete(o.output);
  testing::RemoveTree(o.output);

  // Half the source fits; a filler written once the pack has begun takes the room.
  o.source = dir / "half";
  so.output_dir = o.source;
  so.train_images = 16;
  so.val_images = 4;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  const std::string filler = dir / "disk/filler";
  o.on_progress = [&](const PackOptions::Progress&) {
    if (fs::exists(filler)) return;
    std::ofstream f(filler, std::ios::binary);
    const std::string block(4096, 'x');
    while (f.write(block.data(), block.size())) {
    }
  };
  s = Pack(o, &sum);
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find(std::strerror(ENOSPC)), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(o.output + "/"), std::string::npos) << "names the file: " << s.message();
  EXPECT_NE(s.message().find("the pack needs at least "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(" images take "), std::string::npos) << "what the shard needed: " << s.message();
  EXPECT_NE(s.message().find("is free on the output's file system"), std::string::npos) << s.message();
  ExpectNothingLooksComplete(o.output);

  fs::remove(filler);
  o.on_progress = nullptr;
  s = Pack(o, &sum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(o.output, &d).ok());
}

}  // namespace
}  // namespace ffyolo
