// yolo-detect: YOLOv5 v7.0's detect.py on image files: the boxes drawn into
// copies of the images and, with --save-txt, YOLO label files, in runs/detect/expN/.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "ffr/env.h"
#include "ffyolo/cli.h"
#include "ffyolo/detect_run.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/train.h"

namespace {

int Fail(const ffr::Status& s) {
  std::fprintf(stderr, "yolo-detect: %s\n", s.ToString().c_str());
  return 1;
}

// detect.py's per-image line: "image 1/2 /path/a.jpg: 384x640 2 persons, 1 bus, 12.3ms".
class Printer : public ffyolo::DetectObserver {
 public:
  explicit Printer(const std::vector<std::string>* names) : names_(names) {}

  void OnWarning(const std::string& message) override { std::fprintf(stderr, "WARNING: %s\n", message.c_str()); }

  void OnImage(const ffyolo::DetectedImage& image) override {
    std::map<int, int> per_class;  // det[:, 5].unique(): ascending classes
    for (const ffyolo::DetectBox& b : image.boxes) ++per_class[b.cls];
    std::string counts;
    for (const auto& [cls, n] : per_class)
      counts += std::to_string(n) + " " + (*names_)[cls] + (n > 1 ? "s" : "") + ", ";
    std::printf("image %lld/%lld %s: %dx%d %s%.1fms\n", static_cast<long long>(image.index),
                static_cast<long long>(image.count), image.path.c_str(), image.input_h, image.input_w,
                image.boxes.empty() ? "(no detections), " : counts.c_str(), image.inference_ms);
    std::fflush(stdout);
  }

  void OnImageError(const ffr::Status& error) override {
    std::fprintf(stderr, "yolo-detect: skipped: %s\n", error.ToString().c_str());
  }

 private:
  const std::vector<std::string>* names_;
};

int Main(int argc, char** argv) {
  CLI::App app{"Run YOLOv5 inference on images: boxes drawn into runs/detect/expN/, labels with --save-txt"};
  ffyolo::DetectRunOptions o;
  std::string project = "runs/detect", name = "exp";
  bool exist_ok = false, nosave = false;
  app.add_option("--weights", o.weights, "model path: an ffyolo checkpoint (best.pt / last.pt) or imported Ultralytics "
                                         "weights (scripts/ultralytics_weights.py)")
      ->required();
  app.add_option("--source", o.source, "file/dir/list.txt of images")->required();
  app.add_option("--img,--imgsz,--img-size", o.img_size, "inference size (pixels)");
  app.add_option("--conf-thres", o.conf_thres, "confidence threshold")->check(ffyolo::kUnitInterval);
  app.add_option("--iou-thres", o.iou_thres, "NMS IoU threshold")->check(ffyolo::kUnitInterval);
  app.add_option("--max-det", o.max_det, "maximum detections per image")->check(ffyolo::kPositive);
  app.add_option("--device", o.device, "cuda device, i.e. 0 or cpu (default: GPU 0 if any, else cpu)");
  app.add_option("--batch,--batch-size", o.batch_size,
                 "images per forward pass (consecutive images of the same input shape; boxes as with 1)")
      ->check(ffyolo::kPositive);
  app.add_option("--threads", o.threads, "Torch threads (0: all usable CPUs)");
  app.add_flag("--save-txt", o.save_txt, "save results to *.txt");
  app.add_flag("--save-conf", o.save_conf, "save confidences in --save-txt labels");
  app.add_flag("--nosave", nosave, "do not save images");
  app.add_option("--classes", o.classes, "filter by class: --classes 0, or --classes 0 2 3");
  app.add_flag("--agnostic-nms", o.agnostic_nms, "class-agnostic NMS");
  app.add_option("--project", project, "save results to project/name");
  app.add_option("--name", name, "save results to project/name");
  app.add_flag("--exist-ok", exist_ok, "existing project/name ok, do not increment");
  app.add_option("--line-thickness", o.line_thickness, "bounding box thickness (pixels)")->check(ffyolo::kPositive);
  app.add_flag("--hide-labels", o.hide_labels, "hide labels");
  app.add_flag("--hide-conf", o.hide_conf, "hide confidences");
  app.add_flag("--half", o.half, "use FP16 half-precision inference (CUDA)");
  CLI11_PARSE(app, argc, argv);

  // detect.py saves no images for a .txt list of sources, only labels.
  o.save_img = !nosave && !(o.source.size() >= 4 && o.source.compare(o.source.size() - 4, 4, ".txt") == 0);
  // RunDetect makes and holds it once the sources are checked, before the model is read: an unwritable
  // one fails before any work, as with detect.py, and a refused run leaves nothing there.
  o.save_dir = ffyolo::IncrementPath(project + "/" + name, exist_ok);

  ffyolo::DetectSummary summary;
  Printer printer(&summary.names);
  if (ffr::Status s = ffyolo::RunDetect(o, &printer, &summary); !s.ok()) return Fail(s);
  const double seen = static_cast<double>(std::max<int64_t>(summary.images, 1));
  std::printf("Speed: %.1fms pre-process, %.1fms inference, %.1fms NMS per image at shape (1, 3, %d, %d)\n",
              summary.preprocess_ms / seen, summary.inference_ms / seen, summary.nms_ms / seen, summary.img_size,
              summary.img_size);
  if (o.save_txt || o.save_img) {
    std::string labels;
    if (o.save_txt) {
      int64_t n = 0;
      std::error_code ec;
      for (std::filesystem::directory_iterator it(o.save_dir + "/labels", ec), end; !ec && it != end; it.increment(ec))
        n += it->path().extension() == ".txt";
      labels = "\n" + std::to_string(n) + " labels saved to " + o.save_dir + "/labels";
    }
    std::printf("Results saved to %s%s\n", o.save_dir.c_str(), labels.c_str());
  }
  if (summary.failed > 0) {
    std::fprintf(stderr, "yolo-detect: %lld of %lld files could not be read (see above)\n",
                 static_cast<long long>(summary.failed), static_cast<long long>(summary.failed + summary.images));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-detect", [&] { return Main(argc, argv); });
}
