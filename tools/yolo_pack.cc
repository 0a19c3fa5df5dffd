// yolo-pack SRC -o OUT.ffr: packs a COCO tree (official JSON or Ultralytics YOLO txt) into ffr shards.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "ffr/shard_writer.h"
#include "ffyolo/cli.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/pack.h"
#include "ffyolo/progress.h"

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"Pack a COCO dataset (official JSON or Ultralytics YOLO layout) into FFRecord shards"};
  ffyolo::PackOptions opt;
  std::string layout = "auto", shard_size = "256M";
  app.add_option("source", opt.source, "Source root (annotations/instances_<split>.json, or images/ + labels/)")
      ->required();
  app.add_option("-o,--output", opt.output, "Output dataset directory, e.g. coco.ffr")->required();
  app.add_option("--layout", layout, "Source layout")->check(CLI::IsMember({"auto", "coco", "yolo"}));
  app.add_option("--data", opt.scan.data_yaml, "Ultralytics data YAML with class names (YOLO layout)");
  app.add_option("--splits", opt.scan.splits, "Only these splits (default: all)")->delimiter(',');
  CLI::Option* shard_size_opt = app.add_option("--shard-size", shard_size, "Target shard size (e.g. 256M, 1G)");
  app.add_option("--shards", opt.shards, "Number of shards per split (instead of --shard-size)")
      ->check(ffyolo::kNonNegative)
      ->excludes(shard_size_opt);
  app.add_option("--workers", opt.threads, "Reader/validator threads (default: all usable CPUs)")
      ->check(ffyolo::kNonNegative);
  app.add_flag("--check", opt.full_decode, "Decode every JPEG and PNG fully (slower, catches corrupt data)");
  app.add_flag("--skip-bad", opt.skip_bad, "Report and skip bad images instead of stopping at the first");
  CLI::Option* max_size = app.add_option("--max-size", opt.max_size,
                                         "Re-encode JPEGs whose longest side exceeds this many pixels")
                              ->check(ffyolo::kNonNegative);
  app.add_option("--quality", opt.quality, "JPEG quality for --max-size")
      ->check(ffyolo::NumberIn(1, 100, "must be from 1 to 100"))
      ->needs(max_size);
  app.add_option("--align", opt.align,
                 "Start every sample at a multiple of this many bytes: 0 (default) packs them back to back, "
                 "FFRecord's own layout; else a power of two from 512 to 1048576. Use 4096 for datasets read with "
                 "O_DIRECT (the reader's direct_io), so that a read fetches only the sample's own blocks: it saves "
                 "up to 4 KiB per read, which matters most for small samples (a 16 KiB one otherwise costs a 20 KiB "
                 "read), for about 2 KiB of zero padding per sample. The shards stay readable by FFRecord");
  std::string exif = "auto";
  app.add_option("--exif", exif,
                 "Photos with an EXIF orientation: auto (the default) trains and shows them as viewed, turned as "
                 "OpenCV and YOLOv5 read them, their labels drawn on that view (a COCO JSON's sizes must say so); "
                 "apply does the same for labels drawn on the stored pixels, turning them too; ignore trains the "
                 "stored pixels with the labels as given")
      ->check(CLI::IsMember({"auto", "apply", "ignore"}));
  app.add_flag("-f,--force", opt.force, "Replace the dataset or unfinished pack in the output directory");
  CLI11_PARSE(app, argc, argv);
  opt.exif = exif == "apply" ? ffyolo::ExifPolicy::kApply
             : exif == "ignore" ? ffyolo::ExifPolicy::kIgnore
                                : ffyolo::ExifPolicy::kAuto;

  if (std::string why; !ffyolo::ParseByteSize(shard_size, &opt.shard_bytes, &why)) {
    std::fprintf(stderr, "yolo-pack: bad --shard-size: %s\n", why.c_str());
    return 2;
  }
  if (const ffr::Status s = ffr::CheckSampleAlignment(opt.align); !s.ok()) {
    std::fprintf(stderr, "yolo-pack: bad --align: %s\n", s.message().c_str());
    return 2;
  }
  opt.scan.layout = layout == "coco"   ? ffyolo::SourceLayout::kCocoJson
                    : layout == "yolo" ? ffyolo::SourceLayout::kYoloTxt
                                       : ffyolo::SourceLayout::kAuto;
  std::unique_ptr<ffyolo::ProgressBar> bar;
  std::string bar_split;
  opt.on_progress = [&](const ffyolo::PackOptions::Progress& p) {
    if (!bar || bar_split != p.split) {
      if (bar) bar->Finish();
      ffyolo::ProgressBar::Options o;
      o.label = "pack " + p.split;
      o.total = p.total;
      o.unit = "img";
      bar.reset(new ffyolo::ProgressBar(o));
      bar_split = p.split;
    }
    char mb[32];
    std::snprintf(mb, sizeof(mb), "%.1f MB", p.bytes / 1e6);
    bar->Update(p.done, mb);
  };
  opt.on_message = [&](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); };

  ffyolo::PackSummary summary;
  ffr::Status s = ffyolo::Pack(opt, &summary);
  if (bar) bar->Finish();
  if (!s.ok()) {
    std::fprintf(stderr, "yolo-pack: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const ffyolo::SplitInfo& split : summary.manifest.splits)
    std::printf("%-12s %7lld images %8lld boxes (%lld crowd) %6lld background %5lld skipped %6zu shards %9.1f MB\n",
                split.name.c_str(), static_cast<long long>(split.samples), static_cast<long long>(split.boxes),
                static_cast<long long>(split.crowd_boxes), static_cast<long long>(split.background),
                static_cast<long long>(split.skipped), split.shards.size(), split.bytes / 1e6);
  std::fputs(ffyolo::FormatRecordedSplits(summary.manifest).c_str(), stdout);
  std::printf("packed %lld images, %lld boxes, %lld background, %lld skipped, %lld warnings, %.1f MB in %.1f s "
              "(%.1f MB/s)%s -> %s\n",
              static_cast<long long>(summary.images), static_cast<long long>(summary.boxes),
              static_cast<long long>(summary.background), static_cast<long long>(summary.skipped),
              static_cast<long long>(summary.warnings), summary.bytes / 1e6, summary.seconds,
              summary.seconds > 0 ? summary.bytes / 1e6 / summary.seconds : 0.0,
              summary.resumed_shards > 0
                  ? (", resumed " + std::to_string(summary.resumed_shards) + " finished shards").c_str()
                  : "",
              opt.output.c_str());
  if (summary.exif_oriented > 0)
    std::fprintf(stderr, "yolo-pack: %lld %s an EXIF orientation other than 1 (photos stored sideways or mirrored, "
                 "as phones store them): %s\n",
                 static_cast<long long>(summary.exif_oriented),
                 summary.exif_oriented == 1 ? "image carries" : "images carry",
                 opt.exif != ffyolo::ExifPolicy::kIgnore
                     ? "trained and shown as viewed, turned as OpenCV and YOLOv5 read them"
                     : "trained and shown as stored (--exif ignore)");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-pack", [&] { return Main(argc, argv); });
}
