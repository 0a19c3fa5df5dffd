// The options table drives all three of its readers: yolo-train's --help
// lists every flag row where the table puts it, every saved row round-trips
// through opt.yaml in train.py's key order, and a resume treats each row as
// its OnResume says.
#include "ffyolo/train_option_table.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <type_traits>

namespace ffyolo {
namespace {

// Another value than `value`, of its type.
template <class T>
T Other(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return !value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value + "x";
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    T other = value;
    other.push_back(3);
    return other;
  } else {
    return value + 1;
  }
}

TEST(TrainOptionTableTest, OptYamlKeepsTrainPysOrder) {
  std::string keys;
  const std::string yaml = TrainOptions().ToYaml();
  for (size_t line = 0; line < yaml.size(); line = yaml.find('\n', line) + 1)
    if (yaml[line] != ' ') keys += yaml.substr(line, yaml.find(':', line) - line) + " ";
  EXPECT_EQ(keys,
            "data cfg hyp weights imgsz batch_size epochs workers device project name exist_ok seed cos_lr optimizer "
            "multi_scale label_smoothing patience save_period noval nosave train_split val_split rect image_weights "
            "single_cls quad threads sync_bn noautoanchor cache freeze dataset_path dataset_crc world_size ");
}

TEST(TrainOptionTableTest, RowsAreFlagsOrKeysEachOnce) {
  std::set<std::string> flags, keys;
  std::set<int> slots;
  int saved = 0;
  VisitTrainOptions([&](const TrainOptionSpec& spec, auto) {
    EXPECT_TRUE(*spec.flags || spec.key) << spec.help;
    if (*spec.flags) {
      EXPECT_TRUE(flags.insert(spec.flags).second) << spec.flags;
    }
    if (!spec.key) {
      EXPECT_EQ(spec.on_resume, OnResume::kLaunch) << spec.flags << ": a resume would restore it from nowhere";
      return;
    }
    ++saved;
    EXPECT_TRUE(keys.insert(spec.key).second) << spec.key;
    EXPECT_TRUE(slots.insert(spec.yaml_slot).second) << spec.key << " shares slot " << spec.yaml_slot;
  });
  ASSERT_FALSE(slots.empty());
  EXPECT_EQ(*slots.begin(), 0);  // dense: ToYaml stops at the first slot no row takes
  EXPECT_EQ(*slots.rbegin(), saved - 1);
}

TEST(TrainOptionTableTest, EverySavedRowRoundTripsThroughOptYaml) {
  TrainOptions changed;
  VisitTrainOptions([&](const TrainOptionSpec&, auto field) { changed.*field = Other(changed.*field); });
  TrainOptions back;
  ASSERT_TRUE(TrainOptions::FromYaml(changed.ToYaml(), &back).ok());
  VisitTrainOptions([&](const TrainOptionSpec& spec, auto field) {
    if (spec.key) {
      EXPECT_EQ(back.*field, changed.*field) << spec.key;
    } else {
      EXPECT_EQ(back.*field, TrainOptions().*field) << spec.flags << " is not saved";
    }
  });
}

TEST(TrainOptionTableTest, ResumeTreatsEachRowAsItsEntrySays) {
  const TrainOptions saved;
  int refused = 0;
  VisitTrainOptions([&](const TrainOptionSpec& spec, auto field) {
    TrainOptions given;
    given.resume = "runs/train/exp/weights/last.pt";
    given.*field = Other(saved.*field);
    TrainOptions resumed;
    const ffr::Status s = ResumedOptions(given, saved, &resumed);
    const std::string name = spec.key ? spec.key : spec.flags;
    if (spec.on_resume == OnResume::kRefusedIfOther) {
      ++refused;
      EXPECT_TRUE(s.IsInvalidArgument()) << name;
      EXPECT_NE(s.message().find(std::string(spec.flags) + " x with --resume: the run " + given.resume +
                                 " trains on the dataset's default"),
                std::string::npos)
          << s.message();
      return;
    }
    ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
    const bool given_kept = spec.on_resume == OnResume::kGivenWins || spec.on_resume == OnResume::kLaunch;
    EXPECT_EQ(resumed.*field, given_kept ? given.*field : saved.*field) << name;
    EXPECT_EQ(resumed.resume, given.resume);
  });
  EXPECT_EQ(refused, 2);  // the splits
}

// What the rows say, written out: a change of the table fails here.
TEST(TrainOptionTableTest, ResumeRefusesTheSplitsKeepsDataAndTheLaunchDropsTheRest) {
  TrainOptions saved;
  saved.epochs = 300;
  saved.train_split = "train2017";
  saved.dataset_path = "/data/coco.ffr";
  TrainOptions given;
  given.resume = "last.pt";
  given.epochs = 5;              // dropped: the run trains to its own epochs
  given.data = "copy/coco.ffr";  // a copy of its dataset
  given.bind_numa = true;        // where this launch's ranks run
  given.dist_timeout_s = 60;     // no row: this process's own
  given.train_split = "train2017";
  TrainOptions resumed;
  ASSERT_TRUE(ResumedOptions(given, saved, &resumed).ok());
  EXPECT_EQ(resumed.epochs, 300);
  EXPECT_EQ(resumed.data, "copy/coco.ffr");
  EXPECT_EQ(resumed.dataset_path, "/data/coco.ffr");
  EXPECT_TRUE(resumed.bind_numa);
  EXPECT_EQ(resumed.dist_timeout_s, 60);
  given.val_split = "val2017";
  const ffr::Status s = ResumedOptions(given, saved, &resumed);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--val-split val2017 with --resume"), std::string::npos) << s.message();
}

// Each variant of the step is on by default with CUDA and off on the CPU; on and off are what they say;
// anything else is refused by name.
TEST(StepVariantTest, AutoIsOnForCudaOnly) {
  bool on = true;
  ASSERT_TRUE(StepVariantOn("--cuda-graph", "auto", false, &on).ok());
  EXPECT_FALSE(on);
  ASSERT_TRUE(StepVariantOn("--cuda-graph", "auto", true, &on).ok());
  EXPECT_TRUE(on);
  ASSERT_TRUE(StepVariantOn("--cuda-graph", "on", false, &on).ok());
  EXPECT_TRUE(on);
  ASSERT_TRUE(StepVariantOn("--cuda-graph", "off", true, &on).ok());
  EXPECT_FALSE(on);
  const ffr::Status s = StepVariantOn("--channels-last", "nhwc", true, &on);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--channels-last nhwc: expected auto, on or off"), std::string::npos) << s.message();
  const TrainOptions defaults;
  for (const std::string& setting :
       {defaults.channels_last, defaults.sync_free_loss, defaults.cuda_graph, defaults.fused_bn_silu})
    EXPECT_EQ(setting, "auto");
}

StepVariants Resolved(const StepVariantSettings& settings, bool cuda, const std::string& refusal, std::string* note,
                      ffr::Status* status) {
  StepVariants v;
  *status = ResolveStepVariants(settings, cuda, refusal, &v, note);
  return v;
}

// By default CUDA trains with every variant and the CPU with none, saying nothing; a run that cannot capture
// its step trains eagerly when the graph was left to auto, saying why, and is refused when it was asked for.
TEST(StepVariantTest, TheGraphTakesTheSyncFreeLossAndGivesWayWhenLeftToAuto) {
  std::string note;
  ffr::Status s;
  StepVariants v = Resolved({}, true, "", &note, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(v.channels_last && v.sync_free_loss && v.cuda_graph && v.fused_bn_silu);
  EXPECT_EQ(note, "");
  v = Resolved({}, false, "", &note, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(v.channels_last || v.sync_free_loss || v.cuda_graph || v.fused_bn_silu);
  EXPECT_EQ(note, "");

  StepVariantSettings settings;
  settings.sync_free_loss = "off";
  settings.cuda_graph = "on";
  v = Resolved(settings, true, "", &note, &s);  // the graph needs the sync-free loss
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--cuda-graph: a CUDA graph needs the sync-free loss"), std::string::npos) << s.message();
  settings.cuda_graph = "auto";
  v = Resolved(settings, true, "", &note, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(v.cuda_graph || v.sync_free_loss);
  EXPECT_NE(note.find("not as a CUDA graph: a CUDA graph needs the sync-free loss"), std::string::npos) << note;

  settings = {};
  settings.sync_free_loss = "auto";
  settings.cuda_graph = "on";
  settings.channels_last = "off";
  v = Resolved(settings, true, "", &note, &s);  // asked for, it brings the sync-free loss along
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(v.cuda_graph && v.sync_free_loss);
  EXPECT_FALSE(v.channels_last);
  v = Resolved(settings, true, "not with --quad", &note, &s);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--cuda-graph: not with --quad"), std::string::npos) << s.message();
  v = Resolved(settings, false, "", &note, &s);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--cuda-graph: a CUDA graph needs a CUDA device"), std::string::npos) << s.message();
  settings.cuda_graph = "auto";
  v = Resolved(settings, true, "not with --quad", &note, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(v.cuda_graph);
  EXPECT_TRUE(v.sync_free_loss && v.fused_bn_silu);  // the others stay as they were
  EXPECT_EQ(note, "the step runs eagerly, not as a CUDA graph: not with --quad");
}

#ifdef YOLO_TRAIN
// yolo-train registers its flags from the table: each row's names and help, in the table's order,
// the kParallel rows after the launcher's own flags.
TEST(TrainOptionTableTest, YoloTrainHelpListsEveryFlagRowInOrder) {
  FILE* pipe = popen(YOLO_TRAIN " --help 2>&1", "r");
  ASSERT_NE(pipe, nullptr);
  std::string help;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe)) help += buffer;
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << help;
  size_t last = 0;
  const size_t launcher = help.find("--master-port");
  ASSERT_NE(launcher, std::string::npos) << help;
  VisitTrainOptions([&](const TrainOptionSpec& spec, auto) {
    if (!*spec.flags) return;
    const size_t at = help.find("\n  " + std::string(spec.flags) + " ");
    ASSERT_NE(at, std::string::npos) << spec.flags << " not in\n" << help;
    EXPECT_GT(at, last) << spec.flags << " out of the table's order";
    EXPECT_EQ(at > launcher, spec.group == FlagGroup::kParallel) << spec.flags;
    EXPECT_NE(help.find(spec.help, at), std::string::npos) << spec.flags;
    for (const std::string& choice : spec.choices)
      EXPECT_NE(help.find(choice, at), std::string::npos) << spec.flags << " " << choice;
    last = at;
  });
}
#endif

}  // namespace
}  // namespace ffyolo
