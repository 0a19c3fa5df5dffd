// The Trainer's stages driven one by one: an epoch moves the position and
// writes what an epoch end writes, a stop inside an epoch or at its end saves
// a last.pt that a new Trainer resumes to the same weights as a run that never
// stopped, and a finished run validates best.pt.
#include "ffyolo/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "ffyolo/checkpoint.h"
#include "ffyolo/model.h"
#include "ffyolo/results.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"
#include "tiny_training.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::LossRecorder;
using testing::TinyTrainOptions;

// Records the order of the stage callbacks.
class StageRecorder : public LossRecorder {
 public:
  std::vector<std::string> events;
  std::vector<TrainEpochEnd> epoch_ends;
  std::string best_weights;

  void OnTrainStart(const TrainStart& s) override {
    events.push_back("start " + std::to_string(s.start_epoch) + "/" + std::to_string(s.first_batch));
  }
  void OnTrainEpochStart(int64_t epoch, int64_t, int64_t, int64_t first) override {
    events.push_back("epoch " + std::to_string(epoch) + " from " + std::to_string(first));
  }
  void OnTrainEpochEnd(const TrainEpochEnd& e) override {
    events.push_back("batches done " + std::to_string(e.epoch));
    epoch_ends.push_back(e);
  }
  void OnFitEpochEnd(const FitEpochEnd& e) override {
    events.push_back("fit " + std::to_string(e.result.epoch) + (e.validated ? " validated" : ""));
  }
  void OnTrainEnd(const TrainEnd& end) override {
    events.push_back("end");
    best_weights = end.best_weights;
  }
};

void ExpectSameWeights(YoloModel& a, YoloModel& b, const char* what) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) {
    const torch::Tensor q = pb[p.key()];
    EXPECT_TRUE(torch::allclose(p.value(), q, 1e-5, 1e-6)) << what << " " << p.key() << " differs by "
                                                            << (p.value() - q).abs().max().item<double>();
  }
}

TEST(TrainerTest, EachStageMovesThePositionAndReports) {
  testing::ScratchDir dir("stages");
  StageRecorder recorder;
  std::unique_ptr<Trainer> t;
  ffr::Status s = Trainer::Create(TinyTrainOptions(dir / "runs", 2), &recorder, &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(t->position().epoch, 0);
  EXPECT_EQ(t->position().next_batch, 0);
  EXPECT_FALSE(t->done());

  ASSERT_TRUE(t->RunEpoch().ok());
  EXPECT_EQ(t->position().epoch, 0);  // until EndEpoch
  EXPECT_EQ(t->position().next_batch, 4);
  EXPECT_EQ(recorder.items.size(), 4u);
  EXPECT_GT(t->position().ema_updates, 0);

  ASSERT_TRUE(t->EndEpoch().ok());
  EXPECT_EQ(t->position().epoch, 1);
  EXPECT_EQ(t->position().next_batch, 0);
  EXPECT_EQ(t->summary().epochs_run, 1);
  const std::string run = t->summary().save_dir;
  std::vector<EpochResult> rows;
  ASSERT_TRUE(ReadResultsCsv(run + "/results.csv", &rows).ok());
  EXPECT_EQ(rows.size(), 1u);
  CheckpointInfo last;
  ASSERT_TRUE(ReadCheckpointInfo(run + "/weights/last.pt", &last).ok());
  EXPECT_EQ(last.epoch, 0);
  EXPECT_EQ(last.next_batch, 0);
  EXPECT_EQ(last.ema_updates, t->position().ema_updates);

  ASSERT_TRUE(t->RunEpoch().ok());
  ASSERT_TRUE(t->EndEpoch().ok());
  EXPECT_TRUE(t->done());
  EXPECT_TRUE(t->RunEpoch().IsInvalidArgument());
  ASSERT_TRUE(t->Finish().ok());
  EXPECT_EQ(recorder.best_weights, run + "/weights/best.pt");
  const std::vector<std::string> expected = {"start 0/0",      "epoch 0 from 0", "batches done 0",
                                             "fit 0",          "epoch 1 from 0", "batches done 1",
                                             "fit 1 validated", "end"};  // --noval validates the final epoch
  EXPECT_EQ(recorder.events, expected);
  // Each epoch says how long its batches took and how much of it training waited for the loader: at least
  // the first batch's decoding, since the loader starts with the epoch.
  ASSERT_EQ(recorder.epoch_ends.size(), 2u);
  for (const TrainEpochEnd& e : recorder.epoch_ends) {
    EXPECT_EQ(e.batches, 4) << e.epoch;
    EXPECT_GT(e.data_wait_seconds, 0) << e.epoch;
    EXPECT_LT(e.data_wait_seconds, e.seconds) << e.epoch;
    EXPECT_GT(e.data_wait_share(), 0) << e.epoch;
  }
}

// Every file of the run goes through TrainOptions::env: when the disk fails at the second epoch's end, the run
// stops with the file named, and the first epoch's results.csv and last.pt stay whole.
TEST(TrainerTest, AFailingDiskAtAnEpochEndKeepsThePreviousEpochsFiles) {
  testing::ScratchDir dir("disk_fault");
  testing::FaultyEnv env;
  TrainOptions o = TinyTrainOptions(dir / "runs", 3);
  o.env = &env;
  std::unique_ptr<Trainer> t;
  ffr::Status s = Trainer::Create(o, nullptr, &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(env.calls(testing::WriteOp::kRename), 2);  // hyp.yaml, opt.yaml
  ASSERT_TRUE(t->RunEpoch().ok());
  ASSERT_TRUE(t->EndEpoch().ok());
  ASSERT_TRUE(t->RunEpoch().ok());
  env.FailFrom(testing::WriteOp::kRename, env.calls(testing::WriteOp::kRename));  // every rename from now on
  s = t->EndEpoch();
  ASSERT_FALSE(s.ok());
  ASSERT_FALSE(env.failed_path().empty());
  EXPECT_NE(s.ToString().find(env.failed_path()), std::string::npos) << s.ToString();
  const std::string run = t->summary().save_dir;
  std::vector<EpochResult> rows;
  ASSERT_TRUE(ReadResultsCsv(run + "/results.csv", &rows).ok());
  EXPECT_EQ(rows.size(), 1u);
  CheckpointInfo last;
  ASSERT_TRUE(ReadCheckpointInfo(run + "/weights/last.pt", &last).ok());
  EXPECT_EQ(last.epoch, 0);
}

// With each --optimizer (its state is in last.pt) and with --multi-scale (a batch's size is a function of the
// seed and the iteration).
struct ResumeCase {
  const char* name;
  const char* optimizer;
  bool multi_scale;
};

class StopInsideAnEpochTest : public ::testing::TestWithParam<ResumeCase> {
 protected:
  TrainOptions Options(const std::string& project) const {
    TrainOptions o = TinyTrainOptions(project, 2);
    o.optimizer = GetParam().optimizer;
    o.multi_scale = GetParam().multi_scale;
    return o;
  }
};

TEST_P(StopInsideAnEpochTest, ResumesToTheSameWeights) {
  testing::ScratchDir dir(std::string("stage_resume_") + GetParam().name);
  LossRecorder whole;
  std::unique_ptr<Trainer> reference;
  ASSERT_TRUE(Trainer::Create(Options(dir / "a"), &whole, &reference).ok());
  ASSERT_TRUE(reference->RunEpoch().ok());

  LossRecorder stopper;
  stopper.on_batch = [](int64_t, int64_t batch) {
    if (batch == 1) RequestTrainingStop();
  };
  std::unique_ptr<Trainer> stopped;
  ASSERT_TRUE(Trainer::Create(Options(dir / "b"), &stopper, &stopped).ok());
  ffr::Status s = stopped->RunEpoch();
  ClearTrainingStop();
  ASSERT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_EQ(stopped->position().next_batch, 2);  // right after the optimizer step of batch 1
  const std::string last = stopped->summary().save_dir + "/weights/last.pt";
  CheckpointInfo info;
  ASSERT_TRUE(ReadCheckpointInfo(last, &info).ok());
  EXPECT_EQ(info.epoch, -1);
  EXPECT_EQ(info.next_batch, 2);

  TrainOptions resume;
  resume.resume = last;
  LossRecorder rest;
  std::unique_ptr<Trainer> resumed;
  s = Trainer::Create(resume, &rest, &resumed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(resumed->options().epochs, 2);  // the checkpoint's options
  EXPECT_EQ(resumed->options().optimizer, GetParam().optimizer);
  EXPECT_EQ(resumed->options().multi_scale, GetParam().multi_scale);
  EXPECT_EQ(resumed->position().epoch, 0);
  EXPECT_EQ(resumed->position().next_batch, 2);
  EXPECT_EQ(resumed->position().last_opt_step, stopped->position().last_opt_step);
  ASSERT_TRUE(resumed->RunEpoch().ok());
  EXPECT_EQ(rest.items.size(), 2u);  // batches 2 and 3 only
  // The epoch's mean loss (results.csv's train columns) counts the batches before the stop too.
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(rest.means.back()[k], whole.means.back()[k], 1e-5 * std::abs(whole.means.back()[k])) << k;
  EXPECT_EQ(resumed->position().ema_updates, reference->position().ema_updates);
  ExpectSameWeights(resumed->model(), reference->model(), "model");
  ExpectSameWeights(resumed->ema(), reference->ema(), "EMA");
}

INSTANTIATE_TEST_SUITE_P(TrainerTest, StopInsideAnEpochTest,
                         ::testing::Values(ResumeCase{"SGD", "SGD", false}, ResumeCase{"AdamW", "AdamW", false},
                                           ResumeCase{"AdamMultiScale", "Adam", true}),
                         [](const ::testing::TestParamInfo<ResumeCase>& p) { return std::string(p.param.name); });

TEST(TrainerTest, AStopAtTheEndOfAnEpochResumesAtTheNext) {
  testing::ScratchDir dir("stage_epoch_stop");
  LossRecorder stopper;
  stopper.on_batch = [](int64_t, int64_t batch) {
    if (batch == 3) RequestTrainingStop();  // the epoch's last batch: honoured after its end
  };
  std::unique_ptr<Trainer> t;
  ASSERT_TRUE(Trainer::Create(TinyTrainOptions(dir / "runs", 3), &stopper, &t).ok());
  ffr::Status s = t->RunEpoch();
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = t->EndEpoch();
  ClearTrainingStop();
  ASSERT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_NE(s.message().find("--resume"), std::string::npos) << s.message();

  const std::string run = t->summary().save_dir;
  TrainOptions resume;
  resume.resume = run + "/weights/last.pt";
  std::unique_ptr<Trainer> resumed;
  ASSERT_TRUE(Trainer::Create(resume, nullptr, &resumed).ok());
  EXPECT_EQ(resumed->position().epoch, 1);
  EXPECT_EQ(resumed->position().next_batch, 0);
  EXPECT_EQ(resumed->summary().results.size(), 1u);  // results.csv's rows so far
  resumed.reset();

  // Given from inside the run, as "weights/last.pt": the run is still where it writes
  // (it was "", so "/weights/last.pt" and "/results.csv").
  const fs::path cwd = fs::current_path();
  fs::current_path(run);
  resume.resume = "weights/last.pt";
  const ffr::Status relative = Trainer::Create(resume, nullptr, &resumed);
  fs::current_path(cwd);
  ASSERT_TRUE(relative.ok()) << relative.ToString();
  EXPECT_EQ(fs::path(resumed->summary().save_dir), fs::path(run));
  resumed.reset();

  // A row past the checkpoint (results.csv is written just before last.pt, so a
  // kill between the two leaves one) is dropped, not repeated when that epoch runs again.
  std::vector<EpochResult> rows;
  ASSERT_TRUE(ReadResultsCsv(run + "/results.csv", &rows).ok());
  rows.push_back(rows.back());
  rows.back().epoch = 1;
  ASSERT_TRUE(WriteResultsCsv(run + "/results.csv", rows).ok());
  resume.resume = run + "/weights/last.pt";
  ASSERT_TRUE(Trainer::Create(resume, nullptr, &resumed).ok());
  ASSERT_EQ(resumed->summary().results.size(), 1u);
  EXPECT_EQ(resumed->summary().results[0].epoch, 0);
  resumed.reset();

  // A damaged results.csv is refused, naming it, rather than silently emptied.
  ASSERT_TRUE(testing::WriteStringToFile(run + "/results.csv", ResultsCsvHeader() + "\n   x,1,2\n"));
  const ffr::Status damaged = Trainer::Create(resume, nullptr, &resumed);
  ASSERT_TRUE(damaged.IsCorruption()) << damaged.ToString();
  EXPECT_NE(damaged.message().find("results.csv:2"), std::string::npos) << damaged.message();
}

// A run stopped inside an epoch, resumed after its dataset was repacked smaller: the refusal names the
// dataset and says it was packed again (it said "batch 3 is outside the epoch's 1 batches").
TEST(TrainerTest, AResumeOnADatasetThatShrankNamesIt) {
  testing::ScratchDir dir("stage_shrunk");
  const std::string data = dir / "data.ffr";
  fs::copy(testing::TinyDataset(), data, fs::copy_options::recursive);
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.data = data;
  LossRecorder stopper;
  stopper.on_batch = [](int64_t, int64_t batch) {
    if (batch == 2) RequestTrainingStop();
  };
  std::unique_ptr<Trainer> t;
  ASSERT_TRUE(Trainer::Create(o, &stopper, &t).ok());
  const ffr::Status stop = t->RunEpoch();
  ClearTrainingStop();
  ASSERT_TRUE(stop.IsAborted()) << stop.ToString();
  const std::string last = t->summary().save_dir + "/weights/last.pt";
  t.reset();

  testing::RemoveTree(data);  // repacked from 8 training images: 1 batch an epoch
  SyntheticOptions so;
  so.output_dir = dir / "small";
  so.train_images = 8;
  so.val_images = 8;
  so.num_classes = 3;
  ASSERT_NO_FATAL_FAILURE(testing::PackSynthetic(so, data));

  TrainOptions resume;
  resume.resume = last;
  std::unique_ptr<Trainer> resumed;
  const ffr::Status s = Trainer::Create(resume, nullptr, &resumed);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(data + " was packed again since"), std::string::npos) << s.message();
}

TEST(TrainerTest, AFinishedRunIsNotResumed) {
  testing::ScratchDir dir("stage_finished");
  std::unique_ptr<Trainer> t;
  ASSERT_TRUE(Trainer::Create(TinyTrainOptions(dir / "runs", 1), nullptr, &t).ok());
  ASSERT_TRUE(t->RunEpoch().ok());
  ASSERT_TRUE(t->EndEpoch().ok());
  ASSERT_TRUE(t->done());
  TrainOptions resume;
  resume.resume = t->summary().save_dir + "/weights/last.pt";
  std::unique_ptr<Trainer> resumed;
  const ffr::Status s = Trainer::Create(resume, nullptr, &resumed);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  // The path came out empty ("Invalid argument: : training ... (--weights )").
  EXPECT_NE(s.message().find(resume.resume + ": training to 1 epochs is finished, nothing to resume (to train on "
                                             "from it: --weights " + resume.resume + ")"),
            std::string::npos)
      << s.message();
}

// --resume resolved the run's relative `data:` against the current folder (another synth.ffr there
// was trained on, exit 0) and ignored --data. The run records its dataset's absolute path and
// identity: a resume takes --data for a copy of that dataset and refuses any other. Once the dataset
// moved, a resume said "no such dataset directory" without the way out (--data).
TEST(TrainerTest, AResumeIsOnTheRunsOwnDataset) {
  testing::ScratchDir dir("resume_dataset");
  const std::string own = dir / "own.ffr", copy = dir / "copy.ffr", other = dir / "other.ffr";
  fs::copy(testing::TinyDataset(), own, fs::copy_options::recursive);
  fs::copy(testing::TinyDataset(), copy, fs::copy_options::recursive);
  fs::copy(testing::TinyDataset(), other, fs::copy_options::recursive);
  std::string manifest = testing::ReadFileToString(other + "/dataset.yaml");
  manifest.replace(manifest.find("created: "), 9, "created: 1999-");  // packed again, say
  ASSERT_TRUE(testing::WriteStringToFile(other + "/dataset.yaml", manifest));

  std::unique_ptr<Trainer> t;
  TrainOptions o = TinyTrainOptions(dir / "runs", 2);
  o.data = own;
  ASSERT_TRUE(Trainer::Create(o, nullptr, &t).ok());
  ASSERT_TRUE(t->RunEpoch().ok());
  ASSERT_TRUE(t->EndEpoch().ok());
  ASSERT_FALSE(t->done());
  TrainOptions resume;
  resume.resume = t->summary().save_dir + "/weights/last.pt";
  t.reset();

  resume.data = other;
  std::unique_ptr<Trainer> resumed;
  ffr::Status s = Trainer::Create(resume, nullptr, &resumed);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(other + " is another dataset"), std::string::npos) << s.message();
  resume.data = copy;
  s = Trainer::Create(resume, nullptr, &resumed);
  EXPECT_TRUE(s.ok()) << s.ToString();
  resumed.reset();
  resume.data.clear();
  s = Trainer::Create(resume, nullptr, &resumed);
  EXPECT_TRUE(s.ok()) << s.ToString();
  resumed.reset();
  // A split flag with --resume was dropped without a word; the run's own is taken, another refused.
  resume.train_split = "train2017";
  s = Trainer::Create(resume, nullptr, &resumed);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("--train-split train2017 with --resume: the run " + resume.resume +
                             " trains on the dataset's default (its opt.yaml)"),
            std::string::npos)
      << s.message();
  resume.train_split.clear();
  const std::string moved = dir / "moved.ffr";
  fs::rename(own, moved);
  s = Trainer::Create(resume, nullptr, &resumed);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find(resume.resume + ": the run's dataset is not there (" + own +
                             ": no such dataset directory); if it moved, pass its new place with --data"),
            std::string::npos)
      << s.message();
  resume.data = moved;
  s = Trainer::Create(resume, nullptr, &resumed);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// A corrupt image in the validation split ended the run after epoch 0 with no last.pt: the epoch's
// training was lost. last.pt now resumes at the end of the epoch, which validates it again.
TEST(TrainerTest, AFailedValidationKeepsTheEpochsTraining) {
  testing::ScratchDir dir("failed_validation");
  const std::string data = dir / "data.ffr";
  fs::copy(testing::TinyDataset(), data, fs::copy_options::recursive);
  const std::string shard = data + "/val2017/PART_00000.ffr";
  const std::string good = testing::ReadFileToString(shard);
  std::string bad = good;
  bad.back() ^= 0x5a;  // the last sample's bytes: its CRC no longer matches
  ASSERT_TRUE(testing::WriteStringToFile(shard, bad));
  TrainOptions o = TinyTrainOptions(dir / "runs", 2);
  o.data = data;
  o.noval = false;
  std::unique_ptr<Trainer> t;
  ASSERT_TRUE(Trainer::Create(o, nullptr, &t).ok());
  ASSERT_TRUE(t->RunEpoch().ok());
  const ffr::Status failed = t->EndEpoch();
  EXPECT_TRUE(failed.IsCorruption()) << failed.ToString();
  const std::string last = t->summary().save_dir + "/weights/last.pt";
  t.reset();
  CheckpointInfo info;
  ASSERT_TRUE(ReadCheckpointInfo(last, &info).ok());
  EXPECT_EQ(info.epoch, -1);
  EXPECT_GT(info.next_batch, 0);

  ASSERT_TRUE(testing::WriteStringToFile(shard, good));
  TrainOptions resume;
  resume.resume = last;
  ASSERT_TRUE(Trainer::Create(resume, nullptr, &t).ok());
  ASSERT_TRUE(t->RunEpoch().ok());
  const ffr::Status validated = t->EndEpoch();
  ASSERT_TRUE(validated.ok()) << validated.ToString();
  ASSERT_EQ(t->summary().results.size(), 1u);
  EXPECT_EQ(t->summary().results[0].epoch, 0);
  EXPECT_GT(t->summary().results[0].val_box, 0) << "epoch 0 was validated";
}

// SIGTERM or Ctrl-C during the setup (a pixel cache build, the model) was kept silently until after
// the first step: the setup stops at its next stage, saying so, and nothing is trained.
TEST(TrainerTest, AStopDuringTheSetupEndsItSayingSo) {
  testing::ScratchDir dir("stop_in_setup");
  const TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  RequestTrainingStop();
  std::unique_ptr<Trainer> t;
  const ffr::Status s = Trainer::Create(o, nullptr, &t);
  ClearTrainingStop();
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_NE(s.message().find("stopped before the run directory was made, during the setup: nothing was trained"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(t, nullptr);
}

// v7.0 reads --patience 0 as "never stop early" (`patience or inf`); it stopped after the first epoch.
TEST(TrainerTest, PatienceZeroNeverStopsEarly) {
  testing::ScratchDir dir("stage_patience");
  TrainOptions o = TinyTrainOptions(dir / "runs", 2);
  o.patience = 0;
  std::unique_ptr<Trainer> t;
  ASSERT_TRUE(Trainer::Create(o, nullptr, &t).ok());
  ASSERT_TRUE(t->RunEpoch().ok());
  ASSERT_TRUE(t->EndEpoch().ok());
  EXPECT_FALSE(t->done());
}

// Reports the set-up progress and the console lines.
class CacheRecorder : public LossRecorder {
 public:
  std::map<std::string, int64_t> progress;  // task -> last done
  std::vector<std::string> lines;
  void OnSetUpProgress(const std::string& task, int64_t done, int64_t total) override {
    EXPECT_LE(done, total);
    progress[task] = done;
  }
  void OnMessage(TrainMessage, const std::string& text) override { lines.push_back(text); }
};

// v7.0's DetectionModel says so when the dataset's class count replaces the YAML's.
TEST(TrainerTest, TheModelYamlsNcOverriddenByTheDatasetsIsSaid) {
  testing::ScratchDir dir("stage_nc");
  CacheRecorder recorder;
  std::unique_ptr<Trainer> t;
  ASSERT_TRUE(Trainer::Create(TinyTrainOptions(dir / "runs", 1), &recorder, &t).ok());
  const auto said = std::find(recorder.lines.begin(), recorder.lines.end(), "Overriding model.yaml nc=80 with nc=3");
  EXPECT_NE(said, recorder.lines.end());
}

TEST(TrainerTest, CacheRamBuildsTheTrainAndValCachesOnceAndTrainsFromThem) {
  testing::ScratchDir dir("stage_cache");
  const std::string data = dir / "data.ffr";
  std::filesystem::copy(testing::TinyDataset(), data, std::filesystem::copy_options::recursive);
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.data = data;
  o.cache = "ram";
  o.noval = false;
  CacheRecorder first;
  TrainSummary summary;
  ffr::Status s = Train(o, &first, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(first.progress["train cache"], 32);
  EXPECT_EQ(first.progress["val cache"], 8);
  EXPECT_TRUE(std::filesystem::exists(data + "/cache/train2017-128/cache.yaml"));
  EXPECT_TRUE(std::filesystem::exists(data + "/cache/val2017-128-val/cache.yaml"));
  ASSERT_FALSE(first.items.empty());
  for (const auto& items : first.items)
    for (double v : items) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NE(testing::ReadFileToString(summary.save_dir + "/opt.yaml").find("cache: ram"), std::string::npos);

  CacheRecorder second;  // the caches are current: nothing is built again
  s = Train(o, &second, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(second.progress.empty());
  int reused = 0;
  for (const std::string& line : second.lines) reused += line.find("(built before)") != std::string::npos;
  EXPECT_EQ(reused, 2);
}

TEST(TrainerTest, BadOptionsAreRefusedBeforeAnyWork) {
  testing::ScratchDir dir("stage_bad");
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.batch_size = 0;
  std::unique_ptr<Trainer> t;
  EXPECT_TRUE(Trainer::Create(o, nullptr, &t).IsInvalidArgument());
  o = TinyTrainOptions(dir / "runs", 1);
  o.cache = "gpu";
  EXPECT_TRUE(Trainer::Create(o, nullptr, &t).IsInvalidArgument());
  o = TinyTrainOptions(dir / "runs", 1);
  o.device = "tpu";
  EXPECT_FALSE(Trainer::Create(o, nullptr, &t).ok());
  o = TinyTrainOptions(dir / "runs", 1);
  o.optimizer = "RMSProp";  // smart_optimizer has it; train.py's --optimizer does not offer it
  EXPECT_TRUE(Trainer::Create(o, nullptr, &t).IsInvalidArgument());
  EXPECT_EQ(t, nullptr);
}

// A split the dataset lacks or a --weights file that is not one are refused before the run directory
// exists: they left an expN holding only hyp.yaml and opt.yaml.
TEST(TrainerTest, ABadSplitOrWeightsFileLeavesNoRunDirectory) {
  testing::ScratchDir dir("stage_bad_input");
  ASSERT_TRUE(testing::WriteStringToFile(dir / "text.pt", "not a checkpoint"));
  struct Case {
    const char* what;
    void (*set)(TrainOptions*, const std::string& dir);
    const char* message;
  };
  const Case cases[] = {
      {"--val-split", [](TrainOptions* o, const std::string&) { o->val_split = "val2019"; },
       "no split 'val2019' (splits: train2017, val2017)"},
      {"--train-split", [](TrainOptions* o, const std::string&) { o->train_split = "train2019"; },
       "no split 'train2019'"},
      {"--weights missing", [](TrainOptions* o, const std::string& d) { o->weights = d + "/missing.pt"; },
       "missing.pt: no such checkpoint"},
      {"--weights not a checkpoint", [](TrainOptions* o, const std::string& d) { o->weights = d + "/text.pt"; },
       "text.pt"},
      // These two came after the run folder was made (issue #45, item 15's check).
      {"--cfg missing", [](TrainOptions* o, const std::string& d) { o->cfg = d + "/missing.yaml"; },
       "missing.yaml: no such file"},
      {"--freeze every layer", [](TrainOptions* o, const std::string&) { o->freeze = {100}; },
       "--freeze 100 freezes every layer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TrainOptions o = TinyTrainOptions(dir / "runs", 1);
    c.set(&o, dir.path());
    std::unique_ptr<Trainer> t;
    const ffr::Status s = Trainer::Create(o, nullptr, &t);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.ToString();
    EXPECT_FALSE(std::filesystem::exists(dir / "runs")) << s.ToString();
  }
}

// train.py validates best.pt at IoU 0.65 on COCO (a val path ending in coco/val2017.txt), else 0.60.
TEST(TrainerTest, TheFinalValidationIouIsTrainPysForTheDataset) {
  Manifest m;
  m.source = "/datasets/coco";
  EXPECT_EQ(FinalValidationIouThreshold(m, "val2017"), 0.65);
  EXPECT_EQ(FinalValidationIouThreshold(m, "train2017"), 0.60);
  m.source = "/datasets/coco/";
  EXPECT_EQ(FinalValidationIouThreshold(m, "val2017"), 0.65);
  m.source = "/datasets/coco128";  // Ultralytics' coco128 validates on its train2017 images: 0.60
  EXPECT_EQ(FinalValidationIouThreshold(m, "val2017"), 0.60);
  EXPECT_EQ(FinalValidationIouThreshold(m, "train2017"), 0.60);
}

}  // namespace
}  // namespace ffyolo
