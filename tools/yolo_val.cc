// yolo-val: the Ultralytics table and the 12 COCO stats on a packed split, for
// a checkpoint (--weights) or for any detector's COCO results (--predictions);
// the numbers also go to runs/val/expN/stats.json at full precision.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "ffr/env.h"
#include "ffyolo/cli.h"
#include "ffyolo/coco_json.h"
#include "ffyolo/dataset.h"
#include "ffyolo/dataset_eval.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/model_config.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/output/run_directory.h"
#include "ffyolo/train.h"
#include "ffyolo/val_run.h"

namespace {

int Fail(const ffr::Status& s) {
  std::fprintf(stderr, "yolo-val: %s\n", s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  CLI::App app{"Validate YOLOv5 weights, or score COCO-format detections, on a packed dataset"};
  ffyolo::ValRunOptions o;
  std::string predictions, project = "runs/val", name = "exp";
  bool verbose = false, exist_ok = false;
  app.add_option("--data", o.data, "Packed dataset (NAME.ffr)")->required();
  CLI::Option* weights = app.add_option("--weights", o.weights, "model path: an ffyolo checkpoint (best.pt / last.pt) or imported Ultralytics "
                                        "weights (scripts/ultralytics_weights.py)");
  app.add_option("--predictions", predictions, "COCO results JSON to score instead of running a model")
      ->excludes(weights);
  app.add_option("--split", o.split,
                 "Split, or several joined by + or , (default: the data YAML's val:, else val*, else the only split)");
  app.add_option("--img,--imgsz,--img-size", o.img_size, "Inference size (pixels)");
  app.add_option("--batch,--batch-size", o.batch_size, "Batch size");
  app.add_option("--conf-thres", o.conf_thres, "Confidence threshold")->check(ffyolo::kUnitInterval);
  app.add_option("--iou-thres", o.iou_thres, "NMS IoU threshold")->check(ffyolo::kUnitInterval);
  app.add_option("--max-det", o.max_det, "Maximum detections per image")->check(ffyolo::kPositive);
  app.add_flag("--single-cls", o.single_cls, "treat as single-class dataset");
  app.add_option("--device", o.device, "cuda device, i.e. 0 or cpu (default: GPU 0 if any, else cpu)");
  app.add_option("--workers", o.workers, "Loader threads");
  app.add_option("--threads", o.threads, "Torch threads");
  app.add_option("--project", project, "Save to project/name");
  app.add_option("--name", name, "Save to project/name");
  app.add_flag("--exist-ok", exist_ok, "Reuse project/name");
  app.add_flag("--verbose", verbose, "Per-class rows");
  CLI11_PARSE(app, argc, argv);
  if (o.weights.empty() && predictions.empty()) {
    std::fprintf(stderr, "yolo-val: give --weights or --predictions\n");
    return 2;
  }

  std::string warning;
  if (ffr::Status s = ffyolo::CheckImgSize(o.img_size, ffyolo::kMaxStride, &o.img_size, &warning); !s.ok())
    return Fail(s);
  if (!warning.empty()) std::fprintf(stderr, "yolo-val: warning: %s\n", warning.c_str());

  // The output directory first, as val.py does: an unwritable one fails before any work, not after.
  const std::string dir = ffyolo::IncrementPath(project + "/" + name, exist_ok);
  if (ffr::Status s = ffyolo::CheckRunApartFromDataset(dir, o.data); !s.ok()) return Fail(s);
  for (const char* output : {"predictions.json", "stats.json"})
    if (!predictions.empty() && ffyolo::PlaceWithin(dir + "/" + output, predictions))
      return Fail(ffr::Status::InvalidArgument("--predictions " + predictions + " is the " + output + " this run " +
                                               "writes; choose another --project/--name"));
  std::unique_ptr<ffr::FileLock> run_lock;
  if (ffr::Status s = ffyolo::HoldRunDirectory(ffr::Env::Default(), dir, &run_lock); !s.ok()) return Fail(s);
  const auto save_stats = [&](const ffyolo::DatasetEvalResult& result) {
    const ffr::Status s = ffr::WriteFileAtomically(ffr::Env::Default(), dir + "/stats.json", ffyolo::EvalStatsJson(result));
    if (s.ok()) std::printf("Stats saved to %s/stats.json\n", dir.c_str());
    return s;
  };

  if (!predictions.empty()) {
    std::unique_ptr<ffyolo::Dataset> dataset;
    ffr::Status s = ffyolo::Dataset::Open(o.data, &dataset);
    std::string split = o.split;
    if (s.ok()) s = dataset->ResolveSplit(/*training=*/false, &split);
    if (s.ok()) s = dataset->CheckOwnImageIds(split, "--predictions give each detection its image's own id");
    ffyolo::LabelIndex index;
    if (s.ok()) s = dataset->LoadLabelIndex(split, &index);
    std::vector<ffyolo::CocoDetection> dets;
    if (s.ok()) s = ffyolo::LoadCocoDetections(predictions, &dets);
    if (!s.ok()) return Fail(s);
    ffyolo::DatasetEvaluator evaluator(dataset->manifest(), index, o.single_cls);
    if (!(s = evaluator.AddCocoResults(dets, predictions)).ok()) return Fail(s);
    const ffyolo::DatasetEvalResult result = evaluator.Finish();
    const std::vector<std::string>& names = dataset->manifest().names;
    std::printf("%s",
                ffyolo::FormatEvalReport(result, o.single_cls ? ffyolo::SingleClassNames(names) : names, verbose).c_str());
    s = save_stats(result);
    return s.ok() ? 0 : Fail(s);
  }

  ffyolo::ValidationOutput out;
  std::vector<std::string> names;
  ffr::Status s = ffyolo::ValidateWeights(o, &out, &names);
  if (!s.ok()) return Fail(s);
  std::printf("%s", ffyolo::FormatEvalReport(out.result, names, verbose || names.size() < 50).c_str());
  s = ffr::WriteFileAtomically(ffr::Env::Default(), dir + "/predictions.json", out.predictions_json);
  if (s.ok()) s = save_stats(out.result);
  if (!s.ok()) return Fail(s);
  std::printf("Speed: %.1f s for %lld images. Predictions saved to %s/predictions.json\n", out.seconds,
              static_cast<long long>(out.result.images), dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-val", [&] { return Main(argc, argv); });
}
