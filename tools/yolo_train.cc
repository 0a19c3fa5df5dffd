// yolo-train: YOLOv5 training on a packed dataset (Ultralytics' train.py flags).
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>

#include "ffyolo/train.h"

namespace {

// Exit status of a run stopped by a signal with its state saved (sysexits' EX_TEMPFAIL).
constexpr int kExitStopped = 75;

void OnStopSignal(int sig) {
  ffyolo::RequestTrainingStop();
  if (sig == SIGINT) std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends it at once
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train YOLOv5 on a packed ffyolo dataset"};
  ffyolo::TrainOptions o;
  bool summary = false;
  int64_t nc = 80;
  std::string resume;
  bool resume_latest = false;
  app.add_option("--data", o.data, "Packed dataset (NAME.ffr)");
  app.add_option("--cfg", o.cfg, "Model YAML or shipped model name (yolov5n/s/m/l/x)");
  app.add_option("--hyp", o.hyp, "Hyperparameter YAML (default: configs/hyps/hyp.scratch-low.yaml)");
  app.add_option("--weights", o.weights, "Initial weights (an ffyolo checkpoint)");
  app.add_option("--img,--imgsz,--img-size", o.img_size, "Train and val image size (pixels)");
  app.add_option("--batch,--batch-size", o.batch_size, "Total batch size");
  app.add_option("--epochs", o.epochs, "Epochs");
  app.add_option("--workers", o.workers, "Loader threads");
  app.add_option("--device", o.device, "cpu or a CUDA device index (0)");
  app.add_option("--project", o.project, "Save to project/name");
  app.add_option("--name", o.name, "Save to project/name");
  app.add_flag("--exist-ok", o.exist_ok, "Reuse project/name instead of incrementing");
  app.add_option("--seed", o.seed, "Global training seed");
  app.add_flag("--cos-lr", o.cos_lr, "Cosine LR schedule");
  app.add_option("--label-smoothing", o.label_smoothing, "Label smoothing epsilon");
  app.add_option("--patience", o.patience, "EarlyStopping patience (epochs without improvement)");
  app.add_option("--save-period", o.save_period, "Save a checkpoint every x epochs (disabled if < 1)");
  app.add_flag("--noval", o.noval, "Only validate the final epoch");
  app.add_flag("--nosave", o.nosave, "Only save the final checkpoint");
  app.add_option("--train-split", o.train_split, "Training split (default: train*)");
  app.add_option("--val-split", o.val_split, "Validation split (default: val*, else the training split)");
  app.add_option("--threads", o.threads, "Torch threads (default: all usable CPUs)");
  CLI::Option* resume_opt =
      app.add_option("--resume", resume, "Resume from this last.pt (no value: the most recent run)")
          ->expected(0, 1);
  app.add_flag("--summary", summary, "Print the model summary for --cfg and --nc, then exit");
  app.add_option("--nc", nc, "Classes for --summary");
  CLI11_PARSE(app, argc, argv);
  resume_latest = resume_opt->count() > 0 && resume.empty();

  if (summary) {
    std::string text;
    ffr::Status s = ffyolo::ModelSummaryText(o.cfg, nc, o.img_size, &text);
    if (!s.ok()) {
      std::fprintf(stderr, "yolo-train: %s\n", s.ToString().c_str());
      return 1;
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (resume_latest) {
    ffr::Status s = ffyolo::FindLastCheckpoint(o.project, &resume);
    if (!s.ok()) {
      std::fprintf(stderr, "yolo-train: --resume: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  o.resume = resume;
  if (o.data.empty() && o.resume.empty()) {
    std::fprintf(stderr, "yolo-train: --data is required (or --resume)\n");
    return 2;
  }
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) std::signal(sig, OnStopSignal);
  ffyolo::TrainSummary result;
  ffr::Status s = ffyolo::Train(o, &result);
  if (s.IsAborted()) {
    std::fprintf(stderr, "yolo-train: %s\n", s.message().c_str());
    return kExitStopped;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "yolo-train: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
