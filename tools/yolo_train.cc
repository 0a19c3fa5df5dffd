// yolo-train: YOLOv5 training on a packed dataset (Ultralytics' train.py flags).
// With --nproc N it is also the launcher of N local data-parallel workers
// (itself, with torchrun's environment); started by torchrun or srun it is one
// worker (docs/distributed.md).
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "ffyolo/cli.h"
#include "ffyolo/dataset_eval.h"
#include "ffyolo/device.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/launch_policy.h"
#include "ffyolo/progress.h"
#include "ffyolo/train.h"
#include "ffyolo/train_option_table.h"
#include "ffyolo/val_metrics.h"

namespace {

// Exit status of a run stopped by a signal with its state saved (sysexits' EX_TEMPFAIL).
constexpr int kExitStopped = 75;

// From this share of an epoch spent waiting for the loader, the epoch's end says so: the loader, not the
// step, is then what sets the pace (a run that keeps up waits well under 1 %).
constexpr double kDataWaitWorthSaying = 0.05;

void OnStopSignal(int sig) {
  ffyolo::RequestTrainingStop();
  if (sig == SIGINT) std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends it at once
}

// train.py's console: the setup lines, a progress bar per epoch with the
// running losses, the validation table, the final report. Rank 0 draws; every
// rank prints its own warnings.
class ConsoleObserver : public ffyolo::TrainObserver {
 public:
  explicit ConsoleObserver(bool main_rank) : main_rank_(main_rank) {}

  void OnMessage(ffyolo::TrainMessage kind, const std::string& text) override {
    if (kind == ffyolo::TrainMessage::kWarning)
      std::fprintf(stderr, "warning: %s\n", text.c_str());
    else
      std::printf("%s\n", text.c_str());
  }
  void OnSetUpProgress(const std::string& task, int64_t done, int64_t total) override {
    if (!setup_bar_) {
      if (task == finished_task_) return;  // a repeated final report
      ffyolo::ProgressBar::Options po;
      po.label = task;
      po.total = total;
      po.unit = "image";
      setup_bar_ = std::make_unique<ffyolo::ProgressBar>(po);
    }
    setup_bar_->Update(done);
    if (done < total) return;
    setup_bar_.reset();  // finishes the line
    finished_task_ = task;
  }
  void OnTrainStart(const ffyolo::TrainStart& s) override {
    names_ = s.names;
    workers_ = s.workers;
    cache_ = s.cache;
    if (!main_rank_) return;
    std::printf("Image sizes %d train, %d val\nUsing %d dataloader workers, %d torch threads\nLogging results to %s\n"
                "Starting training for %lld epochs...\n",
                s.img_size, s.img_size, s.workers, s.threads, s.save_dir.c_str(), static_cast<long long>(s.epochs));
  }
  void OnTrainEpochStart(int64_t epoch, int64_t epochs, int64_t batches, int64_t) override {
    if (!main_rank_) return;
    std::printf("\n%11s%11s%11s%11s%11s%11s%11s\n", "Epoch", "GPU_mem", "box_loss", "obj_loss", "cls_loss",
                "Instances", "Size");
    ffyolo::ProgressBar::Options po;
    char label[64];
    std::snprintf(label, sizeof(label), "%11s", (std::to_string(epoch) + "/" + std::to_string(epochs - 1)).c_str());
    po.label = label;
    po.total = batches;
    bar_ = std::make_unique<ffyolo::ProgressBar>(po);
  }
  void OnTrainBatchEnd(const ffyolo::TrainBatchEnd& b) override {
    if (!bar_) return;
    char mem[32], post[128];
    std::snprintf(mem, sizeof(mem), "%.3gG", b.gpu_mem_gb);  // "0G" on the CPU, as train.py
    std::snprintf(post, sizeof(post), "%10s%11.4g%11.4g%11.4g%11lld%11d", mem,
                  b.mean_items[0], b.mean_items[1], b.mean_items[2], static_cast<long long>(b.instances), b.size);
    bar_->Update(b.batch + 1, post);
  }
  void OnTrainEpochEnd(const ffyolo::TrainEpochEnd& e) override {
    if (!bar_) return;
    bar_->Finish();
    bar_.reset();
    if (e.data_wait_share() < kDataWaitWorthSaying) return;
    std::printf("%11s  training waited for the loader %.0f%% of the epoch's %.1f s (%d worker%s): %s would feed it "
                "faster\n",
                "", 100 * e.data_wait_share(), e.seconds, workers_, workers_ == 1 ? "" : "s",
                cache_.empty() ? "more --workers or --cache ram" : "more --workers");
  }
  void OnFitEpochEnd(const ffyolo::FitEpochEnd& e) override {
    if (e.validated) std::printf("%s", ffyolo::FormatValMetricsTable(e.metrics, names_, false).c_str());
  }
  void OnTrainEnd(const ffyolo::TrainEnd& end) override {
    if (!end.best_weights.empty())
      std::printf("\nValidating %s...\n%s", end.best_weights.c_str(),
                  ffyolo::FormatEvalReport(end.final, names_, names_.size() < 50).c_str());
    std::printf("Results saved to %s\n", end.save_dir.c_str());
  }

 private:
  bool main_rank_;
  std::vector<std::string> names_;
  int workers_ = 0;
  std::string cache_;
  std::unique_ptr<ffyolo::ProgressBar> bar_;
  std::unique_ptr<ffyolo::ProgressBar> setup_bar_;
  std::string finished_task_;
};

int Fail(const std::string& what, const ffr::Status& s) {
  std::fprintf(stderr, "yolo-train: %s%s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

// The options table's flags of `group` (train_option_table.h), in its order, into `o`.
void AddTrainFlags(CLI::App* app, ffyolo::TrainOptions* o, ffyolo::FlagGroup group) {
  ffyolo::VisitTrainOptions([&](const ffyolo::TrainOptionSpec& spec, auto field) {
    if (!*spec.flags || spec.group != group) return;
    auto& value = o->*field;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) {
      app->add_flag(spec.flags, value, spec.help);
    } else {
      CLI::Option* flag = app->add_option(spec.flags, value, spec.help);
      if (spec.implicit) flag->expected(0, 1)->default_str(spec.implicit);
      if (!spec.choices.empty()) flag->check(CLI::IsMember(spec.choices));
      if (spec.check == ffyolo::FlagCheck::kNonNegative) flag->check(ffyolo::kNonNegative);
      if (spec.check == ffyolo::FlagCheck::kUnitInterval) flag->check(ffyolo::kUnitInterval);
    }
  });
}

int Main(int argc, char** argv) {
  CLI::App app{"Train YOLOv5 on a packed ffyolo dataset"};
  ffyolo::TrainOptions o;
  bool summary = false;
  int64_t nc = 80;
  std::string resume;
  bool resume_latest = false;
  AddTrainFlags(&app, &o, ffyolo::FlagGroup::kRun);
  ffyolo::LaunchFlags launch;
  CLI::Option* nproc_opt = app.add_option("--nproc,--nproc-per-node", launch.nproc,
                                          "Data-parallel workers to start on this machine (default: one per "
                                          "--device GPU)");
  app.add_option("--nnodes", launch.nnodes, "Machines in the job (each runs yolo-train --nproc N)");
  app.add_option("--node-rank", launch.node_rank, "This machine's index in the job (0 hosts the rendezvous)");
  app.add_option("--master-addr", launch.master_addr, "Host of node 0 (default: 127.0.0.1 on one node)");
  app.add_option("--master-port", launch.master_port, "Rendezvous port on node 0 (default: a free port on one node, "
                 "else 29500)");
  AddTrainFlags(&app, &o, ffyolo::FlagGroup::kParallel);
  CLI::Option* resume_opt =
      app.add_option("--resume", resume, "Resume from this last.pt (no value: the most recent run)")
          ->expected(0, 1);
  app.add_flag("--summary", summary, "Print the model summary for --cfg and --nc, then exit");
  app.add_option("--nc", nc, "Classes for --summary");
  CLI11_PARSE(app, argc, argv);
  resume_latest = resume_opt->count() > 0 && resume.empty();

  if (summary) {
    std::string text;
    ffr::Status s = ffyolo::ModelSummaryText(o.cfg.empty() ? ffyolo::kDefaultModelCfg : o.cfg, nc, o.img_size, &text);
    if (!s.ok()) return Fail("", s);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (resume_latest) {
    ffr::Status s = ffyolo::FindLastCheckpoint(o.project, &resume);
    if (!s.ok()) return Fail("--resume: ", s);
  }
  o.resume = resume;
  if (o.data.empty() && o.resume.empty()) {
    std::fprintf(stderr, "yolo-train: --data is required (or --resume)\n");
    return 2;
  }

  ffyolo::DeviceSpec device;
  if (ffr::Status s = ffyolo::ParseDeviceSpec(o.device, &device); !s.ok()) return Fail("", s);
  ffyolo::LaunchPolicy policy;
  policy.flags = launch;
  policy.nproc_given = nproc_opt->count() > 0;
  policy.cuda_devices = device.cuda;
  policy.cuda = !device.cpu && (!device.Automatic() || ffyolo::CudaDeviceCount() > 0);
  policy.bind_numa = o.bind_numa;
  policy.args.assign(argv, argv + argc);
  policy.on_message = [](const std::string& message) {
    std::printf("%s\n", message.c_str());
    std::fflush(stdout);  // before the workers' lines
  };
  policy.on_launcher_message = [](const std::string& message) {
    std::fprintf(stderr, "ffyolo launcher: %s\n", message.c_str());
  };
  ffyolo::LaunchRole role;
  int launched_status = 0;
  if (ffr::Status s = ffyolo::ApplyLaunchPolicy(policy, ffyolo::CurrentEnvironment(), &role, &o.dist, &launched_status);
      !s.ok())
    return Fail("", s);
  if (role == ffyolo::LaunchRole::kLauncher) return launched_status;
  o.distributed = role == ffyolo::LaunchRole::kWorker;
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) std::signal(sig, OnStopSignal);
  ConsoleObserver console(!o.distributed || o.dist.rank == 0);
  ffyolo::TrainSummary result;
  ffr::Status s = ffyolo::Train(o, &console, &result);
  if (s.IsAborted()) {
    std::fprintf(stderr, "yolo-train: %s\n", s.message().c_str());
    return kExitStopped;
  }
  if (!s.ok()) return Fail("", s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-train", [&] { return Main(argc, argv); });
}
