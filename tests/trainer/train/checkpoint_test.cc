// Checkpoints round-trip model, EMA and optimizer state; the EMA follows its formula.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <filesystem>

#include "ffyolo/checkpoint.h"
#include "ffyolo/ema.h"
#include "ffyolo/model.h"
#include "fuzz/checkpoint_input.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

const char kTinyYaml[] = R"(nc: 3
depth_multiple: 0.33
width_multiple: 0.125
anchors:
  - [10,13, 16,30, 33,23]
  - [30,61, 62,45, 59,119]
  - [116,90, 156,198, 373,326]
backbone:
  [[-1, 1, Conv, [64, 6, 2, 2]],
   [-1, 1, Conv, [128, 3, 2]],
   [-1, 3, C3, [128]],
   [-1, 1, Conv, [256, 3, 2]],
   [-1, 6, C3, [256]],
   [-1, 1, Conv, [512, 3, 2]],
   [-1, 9, C3, [512]],
   [-1, 1, Conv, [1024, 3, 2]],
   [-1, 3, C3, [1024]],
   [-1, 1, SPPF, [1024, 5]],
  ]
head:
  [[-1, 1, Conv, [512, 1, 1]],
   [-1, 1, nn.Upsample, [None, 2, 'nearest']],
   [[-1, 6], 1, Concat, [1]],
   [-1, 3, C3, [512, False]],
   [-1, 1, Conv, [256, 1, 1]],
   [-1, 1, nn.Upsample, [None, 2, 'nearest']],
   [[-1, 4], 1, Concat, [1]],
   [-1, 3, C3, [256, False]],
   [-1, 1, Conv, [256, 3, 2]],
   [[-1, 14], 1, Concat, [1]],
   [-1, 3, C3, [512, False]],
   [-1, 1, Conv, [512, 3, 2]],
   [[-1, 10], 1, Concat, [1]],
   [-1, 3, C3, [1024, False]],
   [[17, 20, 23], 1, Detect, [nc, anchors]],
  ]
)";

std::shared_ptr<YoloModel> Tiny() {
  std::shared_ptr<YoloModel> m;
  ffr::Status s = BuildModelFromString(kTinyYaml, "tiny.yaml", 3, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

void ExpectSameState(const torch::nn::Module& a, const torch::nn::Module& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i].value(), pb[i].value())) << pa[i].key();
  const auto ba = a.named_buffers(), bb = b.named_buffers();
  for (size_t i = 0; i < ba.size(); ++i) EXPECT_TRUE(torch::equal(ba[i].value(), bb[i].value())) << ba[i].key();
}

// One SGD step on random data so that momentum buffers exist.
void Step(YoloModel* model, torch::optim::SGD* opt) {
  model->train();
  auto out = model->forward(torch::rand({2, 3, 64, 64}));
  torch::Tensor loss = torch::zeros({});
  for (auto& r : out.raw) loss = loss + r.sigmoid().mean();
  opt->zero_grad();
  loss.backward();
  opt->step();
}

TEST(CheckpointTest, RoundTripRestoresEverything) {
  torch::manual_seed(1);
  testing::ScratchDir dir("ckpt");
  auto model = Tiny();
  auto ema_model = Tiny();
  ModelEma ema(ema_model, *model);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9).nesterov(true));
  Step(model.get(), &opt);
  ema.Update(*model);
  CheckpointInfo info;
  info.epoch = 4;
  info.next_batch = 7;
  info.best_fitness = 0.25;
  info.ema_updates = ema.updates();
  info.model_yaml = kTinyYaml;
  info.nc = 3;
  info.names = {"circle", "red square", "tri"};  // yolo-detect's labels
  info.opt_yaml = "epochs: 10\n";
  info.hyp_yaml = "lr0: 0.01\n";
  const std::string path = dir / "last.pt";
  ASSERT_TRUE(SaveCheckpoint(path, info, *model, &ema.model(), &opt).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  CheckpointInfo back;
  const ffr::Status read = ReadCheckpointInfo(path, &back);
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(back.epoch, 4);
  EXPECT_EQ(back.next_batch, 7);
  EXPECT_DOUBLE_EQ(back.best_fitness, 0.25);
  EXPECT_EQ(back.ema_updates, 1);
  EXPECT_EQ(back.opt_yaml, "epochs: 10\n");
  EXPECT_EQ(back.names, info.names);

  auto model2 = Tiny();
  auto ema2 = Tiny();
  torch::optim::SGD opt2(model2->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9).nesterov(true));
  ffr::Status s = LoadCheckpointState(path, model2.get(), ema2.get(), &opt2);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectSameState(*model, *model2);
  ExpectSameState(ema.model(), *ema2);
  // Same momentum: one more identical step keeps them identical.
  torch::manual_seed(9);
  Step(model.get(), &opt);
  torch::manual_seed(9);
  Step(model2.get(), &opt2);
  ExpectSameState(*model, *model2);

  std::shared_ptr<YoloModel> rebuilt;
  ASSERT_TRUE(LoadCheckpointModel(path, /*prefer_ema=*/true, &rebuilt, &back).ok());
  ExpectSameState(ema.model(), *rebuilt);
}

// Flipped bytes anywhere in a checkpoint's tensors, its metadata or its zip
// structure, and a truncated file: refused, naming the file, by every reader.
TEST(CheckpointTest, DamagedBytesAreRefusedNotLoaded) {
  testing::ScratchDir dir("damaged");
  auto model = Tiny();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01));
  CheckpointInfo info;
  info.model_yaml = kTinyYaml;
  info.nc = 3;
  info.opt_yaml = "epochs: 3\n";
  ASSERT_TRUE(SaveCheckpoint(dir / "good.pt", info, *model, model.get(), &opt).ok());
  const std::string good = testing::ReadFileToString(dir / "good.pt");
  ASSERT_TRUE(ReadCheckpointInfo(dir / "good.pt", &info).ok());
  const size_t tensors = good.find("archive/data/0");  // the first tensor's local header
  const size_t metadata = good.find("epochs: 3");      // inside a compressed or stored record
  ASSERT_NE(tensors, std::string::npos);
  struct Damage {
    const char* what;
    std::string bytes;
  };
  std::vector<Damage> damages;
  std::string flipped = good;
  for (size_t i = 0; i < 64; ++i) flipped[good.size() / 2 + i] ^= 0xff;  // the issue's 64 bytes, mid-file
  damages.push_back({"64 bytes mid-file", flipped});
  flipped = good;
  flipped[tensors + 200] ^= 0x01;  // one bit of a tensor
  damages.push_back({"one bit of a tensor", flipped});
  if (metadata != std::string::npos) {
    flipped = good;
    flipped[metadata] ^= 0x01;
    damages.push_back({"one bit of the options", flipped});
  }
  damages.push_back({"truncated", good.substr(0, good.size() - 100)});
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    const std::string path = dir / "bad.pt";
    ASSERT_TRUE(testing::WriteStringToFile(path, d.bytes));
    ffr::Status s = ReadCheckpointInfo(path, &info);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find("bad.pt"), std::string::npos) << s.ToString();
    std::shared_ptr<YoloModel> loaded;
    EXPECT_TRUE(LoadCheckpointModel(path, true, &loaded, &info).IsCorruption());
    EXPECT_TRUE(LoadCheckpointState(path, model.get(), nullptr, &opt).IsCorruption());
    int64_t transferred = 0, total = 0;
    EXPECT_TRUE(TransferWeights(path, false, model.get(), &transferred, &total).IsCorruption());
  }
}

// Writes to `path` the checkpoint checkpoint_fuzz makes of its corpus input `name`: the input's
// entries zipped with correct CRCs.
void WriteFuzzInputCheckpoint(const std::string& name, const std::string& path) {
  const std::string input =
      testing::ReadFileToString(testing::SourcePath("tests/fuzz/corpus/checkpoint_fuzz/" + name));
  ASSERT_FALSE(input.empty()) << name;
  ASSERT_TRUE(testing::WriteStringToFile(
      path, checkpoint_input::Zip(checkpoint_input::Entries(reinterpret_cast<const uint8_t*>(input.data()), input.size()))));
}

// Found by checkpoint_fuzz: a checkpoint whose bytes match their CRCs but whose
// TorchScript code does not compile made LibTorch throw torch::jit::ErrorReport,
// which no reader caught (std::terminate). Every reader now refuses it, naming
// the file and LibTorch's first line.
TEST(CheckpointTest, ContentLibTorchRejectsBehindGoodCrcsIsRefused) {
  testing::ScratchDir dir("bad_code");
  // The entries of a checkpoint of tests/fuzz/checkpoint_model.yaml with one annotation of a
  // TorchScript file changed from str to ssr.
  const std::string path = dir / "bad.pt";
  ASSERT_NO_FATAL_FAILURE(WriteFuzzInputCheckpoint("regression_code_type_ssr", path));
  CheckpointInfo info;
  ffr::Status s = ReadCheckpointInfo(path, &info);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // Refused before LibTorch's TorchScript compiler sees it (torchscript_check.h).
  EXPECT_EQ(s.message().rfind(path + ": '", 0), 0u) << s.ToString();
  EXPECT_NE(s.message().find("is TorchScript code an ffyolo checkpoint does not hold"), std::string::npos)
      << s.ToString();
  std::shared_ptr<YoloModel> loaded;
  EXPECT_TRUE(LoadCheckpointModel(path, true, &loaded, &info).IsCorruption());
  auto model = Tiny();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01));
  EXPECT_TRUE(LoadCheckpointState(path, model.get(), model.get(), &opt).IsCorruption());
  int64_t transferred = 0, total = 0;
  EXPECT_TRUE(TransferWeights(path, false, model.get(), &transferred, &total).IsCorruption());
}

// Found by checkpoint_fuzz in CI's 30-s run: TorchScript code behind correct CRCs
// on which LibTorch 1.13's compiler dies of SIGSEGV (ScriptTypeParser::parseClassConstant).
TEST(CheckpointTest, CodeThatCrashesLibTorchsCompilerNeverReachesIt) {
  testing::ScratchDir dir("crash_code");
  const std::string path = dir / "bad.pt";
  ASSERT_NO_FATAL_FAILURE(WriteFuzzInputCheckpoint("regression_code_class_constant_segv", path));
  CheckpointInfo info;
  const ffr::Status s = ReadCheckpointInfo(path, &info);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("is TorchScript code an ffyolo checkpoint does not hold"), std::string::npos)
      << s.ToString();
}

// Found by checkpoint_fuzz in CI's 30-s run: data.pkl's first LONG_BINPUT numbered 0x650004aa, for
// which LibTorch's unpickler allocates 27 GB of memo. pickle_check.h refuses it first.
TEST(CheckpointTest, AMemoIndexThatWouldAllocateGigabytesNeverReachesLibTorch) {
  testing::ScratchDir dir("memo_index");
  const std::string path = dir / "bad.pt";
  ASSERT_NO_FATAL_FAILURE(WriteFuzzInputCheckpoint("regression_memo_index_oom", path));
  CheckpointInfo info;
  const ffr::Status s = ReadCheckpointInfo(path, &info);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.ToString();
  EXPECT_NE(s.message().find("'archive/data.pkl', byte 8030: memo entry 1694500010 made after 256"), std::string::npos)
      << s.ToString();
}

// last.pt rewritten in a loop by a process killed (SIGKILL) at 30 moments
// (seeded, spread over four saves' time as measured here, counted from when
// the child starts saving, so that a loaded machine moves them all alike):
// each time, what is left loads whole, as one of the versions written.
TEST(CheckpointTest, AKilledSaveLeavesTheLastWholeCheckpoint) {
  testing::ScratchDir dir("killed_save");
  const std::string path = dir / "last.pt";
  auto model = Tiny();
  CheckpointInfo info;
  info.model_yaml = kTinyYaml;
  info.nc = 3;
  info.epoch = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(SaveCheckpoint(path, info, *model, model.get(), nullptr).ok());
  const int64_t save_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  int64_t latest = 0;  // the newest version seen: the children did save
  std::mt19937 rng(14);
  for (int k = 0; k < 30; ++k) {
    const int64_t delay_us = static_cast<int64_t>(rng() % static_cast<uint64_t>(4 * save_us + 1));
    int started[2];
    ASSERT_EQ(pipe(started), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(started[0]);
      if (write(started[1], "s", 1) != 1) _exit(1);
      for (int64_t epoch = 1;; ++epoch) {
        CheckpointInfo next = info;
        next.epoch = epoch;
        if (!SaveCheckpoint(path, next, *model, model.get(), nullptr).ok()) _exit(1);
      }
    }
    close(started[1]);
    char byte = 0;
    ASSERT_EQ(read(started[0], &byte, 1), 1);
    close(started[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the saving process ended by itself";
    CheckpointInfo left;
    const ffr::Status s = ReadCheckpointInfo(path, &left);
    EXPECT_TRUE(s.ok()) << "killed after " << delay_us << " us: " << s.ToString();
    EXPECT_GE(left.epoch, 0);
    latest = std::max(latest, left.epoch);
    std::shared_ptr<YoloModel> loaded;
    EXPECT_TRUE(LoadCheckpointModel(path, true, &loaded, &left).ok());
  }
  EXPECT_GT(latest, 0);
}

TEST(CheckpointTest, BadFilesAreReported) {
  testing::ScratchDir dir("bad");
  CheckpointInfo info;
  EXPECT_TRUE(ReadCheckpointInfo(dir / "missing.pt", &info).IsNotFound());
  ASSERT_TRUE(testing::WriteStringToFile(dir / "junk.pt", "not a checkpoint"));
  ffr::Status s = ReadCheckpointInfo(dir / "junk.pt", &info);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("junk.pt"), std::string::npos);
  // Stripped weights (no optimizer) cannot be resumed.
  auto model = Tiny();
  info.model_yaml = kTinyYaml;
  info.nc = 3;
  ASSERT_TRUE(SaveCheckpoint(dir / "w.pt", info, *model, nullptr, nullptr).ok());
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01));
  s = LoadCheckpointState(dir / "w.pt", model.get(), nullptr, &opt);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("optimizer"), std::string::npos);
  int64_t transferred = 0, total = 0;
  ASSERT_TRUE(TransferWeights(dir / "w.pt", false, model.get(), &transferred, &total).ok());
  EXPECT_EQ(transferred, total);
  EXPECT_GT(total, 300);
}

TEST(EmaTest, FollowsTheDecayFormula) {
  torch::manual_seed(2);
  auto model = Tiny();
  ModelEma ema(Tiny(), *model);
  EXPECT_NEAR(ema.Decay(1), 0.9999 * (1 - std::exp(-1.0 / 2000)), 1e-15);
  EXPECT_NEAR(ema.Decay(2000), 0.9999 * (1 - std::exp(-1.0)), 1e-15);
  const torch::Tensor before = ema.model().named_parameters()["model.0.conv.weight"].clone();
  {
    torch::NoGradGuard g;
    for (auto& p : model->parameters()) p.add_(1.0);
    for (auto& b : model->named_buffers())
      if (b.key().find("num_batches_tracked") != std::string::npos) b.value().fill_(42);
  }
  ema.Update(*model);
  const double d = ema.Decay(1);
  const torch::Tensor expected = before * d + model->named_parameters()["model.0.conv.weight"] * (1 - d);
  EXPECT_TRUE(torch::allclose(ema.model().named_parameters()["model.0.conv.weight"], expected, 1e-6, 1e-7));
  // Integer buffers are not averaged.
  for (auto& b : ema.model().named_buffers())
    if (b.key().find("num_batches_tracked") != std::string::npos) {
      EXPECT_NE(b.value().item<int64_t>(), 42);
    }
}

}  // namespace
}  // namespace ffyolo
