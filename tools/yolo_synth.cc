// yolo-synth: writes a deterministic synthetic dataset (coloured shapes with exact boxes)
// in the COCO layout, or with --yolo in the Ultralytics layout plus the COCO JSON.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "ffyolo/cli.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/synthetic.h"
#include "ffyolo/synthetic_classes.h"

namespace {

int Main(int argc, char** argv) {
  ffyolo::SyntheticOptions options;
  std::string size;
  std::string subsampling = "420";

  CLI::App app{"Writes a synthetic COCO-format dataset: OUT/annotations/instances_<split>.json and\n"
               "OUT/<split>/*.jpg; with --yolo the images go to OUT/images/<split>/ instead, with\n"
               "OUT/labels/<split>/*.txt and OUT/data.yaml. Same options give byte-identical files."};
  app.add_option("-o,--output", options.output_dir, "Output directory: new, empty, or (with --force) one yolo-synth wrote")->required();
  app.add_option("--train", options.train_images, "Images in the train split")->check(ffyolo::kPositive);
  app.add_option("--val", options.val_images, "Images in the val split (0: none)")->check(ffyolo::kNonNegative);
  app.add_option("--classes", options.num_classes,
                 "Number of classes (shape x colour), at most " + std::to_string(ffyolo::MaxSyntheticClasses()))
      ->check(CLI::Range(1, ffyolo::MaxSyntheticClasses()));
  CLI::Option* min_size = app.add_option("--min-size", options.min_size, "Smallest image side (random sizes)");
  CLI::Option* max_size = app.add_option("--max-size", options.max_size, "Largest image side (random sizes)");
  CLI::Option* fixed_size =
      app.add_option("--size", size, "Fixed image size WxH, e.g. 640x480")->excludes(min_size)->excludes(max_size);
  app.add_flag("--coco-sizes", options.coco_sizes,
               "Sizes drawn from COCO train2017's (coco128's 128 sizes: 640x480 most often)")
      ->excludes(fixed_size)
      ->excludes(min_size)
      ->excludes(max_size);
  app.add_option("--max-objects", options.max_objects, "Most objects asked for per image");
  app.add_option("--min-object", options.min_object_fraction,
                 "Smallest object side, a fraction of the image's shorter side (8 pixels at least)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--max-object", options.max_object_fraction,
                 "Largest object side, a fraction of the image's shorter side")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", options.seed, "Random seed");
  app.add_option("--quality", options.jpeg_quality, "JPEG quality")->check(CLI::Range(1, 100));
  app.add_option("--subsampling", subsampling, "JPEG chroma subsampling")
      ->check(CLI::IsMember({"420", "444", "gray"}));
  app.add_flag("--yolo", options.yolo_layout, "Ultralytics layout: images/, labels/, data.yaml (JSON kept)");
  app.add_flag("--force", options.force, "Replace what an earlier yolo-synth wrote in the output directory (the user's other files stay)");
  app.add_option("--threads", options.num_threads, "Worker threads (0: all cores)")->check(ffyolo::kNonNegative);
  CLI11_PARSE(app, argc, argv);

  if (!size.empty()) {
    char x = 0, rest = 0;
    // 0x0 would mean "random sizes" to the generator: not what --size asks for.
    if (std::sscanf(size.c_str(), "%d%c%d%c", &options.width, &x, &options.height, &rest) != 3 || x != 'x' ||
        options.width <= 0 || options.height <= 0) {
      std::fprintf(stderr, "yolo-synth: --size must look like 640x480 (both sides at least 1), got '%s'\n",
                   size.c_str());
      return 2;
    }
  }
  options.subsampling = subsampling == "444"    ? ffyolo::JpegSubsampling::k444
                        : subsampling == "gray" ? ffyolo::JpegSubsampling::kGray
                                                : ffyolo::JpegSubsampling::k420;

  ffyolo::SyntheticSummary summary;
  const ffr::Status status = ffyolo::GenerateSyntheticCoco(options, &summary);
  if (!status.ok()) {
    std::fprintf(stderr, "yolo-synth: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("yolo-synth: %lld images (%lld background), %lld objects, %d classes, %lld bytes in %s\n",
              static_cast<long long>(summary.images), static_cast<long long>(summary.background_images),
              static_cast<long long>(summary.objects), options.num_classes, static_cast<long long>(summary.bytes),
              options.output_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-synth", [&] { return Main(argc, argv); });
}
