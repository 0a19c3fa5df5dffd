// yolo-detect: the source listing, label format and letterbox geometry as
// detect.py v7.0 has them, and the tool end to end on a checkpoint trained here:
// its --save-txt files say exactly what the library detected.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <torch/torch.h>

#include "ffyolo/box_ops.h"
#include "ffyolo/detect_run.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/orientation.h"
#include "ffyolo/pack.h"
#include "ffyolo/synthetic.h"
#include "ffyolo/train.h"
#include "testing/test_env.h"
#include "tiny_images.h"
#ifdef FFYOLO_HAVE_IMGCODECS
#include <turbojpeg.h>

#include <opencv2/imgcodecs.hpp>
#endif

namespace ffyolo {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  const fs::path dir = testing::BinaryPath("test_scratch/" + name + "." + std::to_string(::getpid()));
  testing::RemoveTree(dir.string());
  fs::create_directories(dir);
  return dir;
}

void Touch(const fs::path& p) { std::ofstream(p) << "x"; }

std::vector<std::string> Lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(DetectSourceTest, DirectoriesListImagesSortedThenVideos) {
  const fs::path dir = Scratch("detect_source");
  for (const char* name : {"b.jpg", "a.PNG", "c.mp4", "notes.txt", ".hidden.jpg", "noext", "z.webp"})
    Touch(dir / name);
  fs::create_directories(dir / "sub.jpg");  // glob('*.*') lists it too (and reading it fails later)
  std::vector<std::string> files;
  ASSERT_TRUE(ListDetectSource(dir.string(), &files).ok());
  const std::string d = fs::canonical(dir).string() + "/";
  EXPECT_EQ(files, (std::vector<std::string>{d + "a.PNG", d + "b.jpg", d + "sub.jpg", d + "z.webp", d + "c.mp4"}));

  // A .txt names paths (whitespace-separated, sorted), each then listed as a source of its own.
  std::ofstream(dir / "list.txt") << d + "z.webp\n" + d + "b.jpg  " + d + "notes.txt\n";
  ASSERT_TRUE(ListDetectSource((dir / "list.txt").string(), &files).ok());
  EXPECT_EQ(files, (std::vector<std::string>{d + "b.jpg", d + "z.webp"}));

  ASSERT_TRUE(ListDetectSource((dir / "b.jpg").string(), &files).ok());
  EXPECT_EQ(files, std::vector<std::string>{d + "b.jpg"});
}

TEST(DetectSourceTest, MissingAndEmptySourcesAreReported) {
  const fs::path dir = Scratch("detect_source_bad");
  std::vector<std::string> files;
  ffr::Status s = ListDetectSource((dir / "nope").string(), &files);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("nope does not exist"), std::string::npos) << s.ToString();

  std::ofstream(dir / "list.txt") << (dir / "gone.jpg").string() << "\n";
  s = ListDetectSource((dir / "list.txt").string(), &files);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("gone.jpg does not exist (listed in "), std::string::npos) << s.ToString();

  Touch(dir / "readme.md");
  s = ListDetectSource(dir.string(), &files);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("No images or videos found in"), std::string::npos) << s.ToString();
}

// A loop of links or a name over PATH_MAX said "Not found:  does not exist" (the path empty); URLs,
// globs and webcams, which detect.py reads, said they did not exist.
TEST(DetectSourceTest, SourcesThatAreNoFileSaySo) {
  const fs::path dir = Scratch("detect_source_kinds");
  fs::create_symlink(dir / "loop", dir / "loop");
  std::vector<std::string> files;
  ffr::Status s = ListDetectSource((dir / "loop").string(), &files);
  EXPECT_NE(s.message().find((dir / "loop").string() + ": cannot resolve the path: Too many levels of symbolic links"),
            std::string::npos)
      << s.ToString();
  const std::string too_long = dir.string() + "/" + std::string(5000, 'a');
  s = ListDetectSource(too_long, &files);
  EXPECT_NE(s.message().find(too_long + ": cannot resolve the path: File name too long"), std::string::npos)
      << s.ToString();
  for (const auto& [source, says] : std::initializer_list<std::pair<std::string, std::string>>{
           {"https://ultralytics.com/images/zidane.jpg", "URL sources are not supported"},
           {"RTSP://camera/stream", "URL sources are not supported"},
           {(dir / "*.jpg").string(), "glob patterns are not supported"},
           {"0", "webcam sources are not supported"}}) {
    s = ListDetectSource(source, &files);
    EXPECT_TRUE(s.IsNotSupported()) << source << ": " << s.ToString();
    EXPECT_NE(s.message().find(source + ": " + says), std::string::npos) << s.ToString();
  }
}

// --save-txt on a/x.jpg and b/x.jpg (or x.jpg and x.png) wrote one labels/x.txt: one image's
// detections were lost. Refused before the model is read; sources saved apart pass on to it.
TEST(DetectSourceTest, TwoSourcesSavedUnderOneNameAreRefused) {
  const fs::path dir = Scratch("detect_same_name");
  for (const char* sub : {"a", "b"}) fs::create_directories(dir / sub);
  for (const char* name : {"a/x.jpg", "b/x.jpg", "a/y.jpg", "a/y.png"}) Touch(dir / name);
  const std::string d = fs::canonical(dir).string() + "/";
  DetectRunOptions o;
  o.weights = (dir / "nope.pt").string();
  o.save_dir = (dir / "out").string();
  DetectSummary summary;
  const auto run = [&](const std::string& list, bool save_txt, bool save_img) {
    std::ofstream(dir / "list.txt") << list;
    o.source = (dir / "list.txt").string();
    o.save_txt = save_txt;
    o.save_img = save_img;
    return RunDetect(o, nullptr, &summary);
  };
  ffr::Status s = run(d + "a/x.jpg\n" + d + "b/x.jpg\n", false, true);
  EXPECT_NE(s.message().find(d + "a/x.jpg and " + d + "b/x.jpg would both be saved as x.jpg"), std::string::npos)
      << s.ToString();
  s = run(d + "a/y.jpg\n" + d + "a/y.png\n", true, false);
  EXPECT_NE(s.message().find(d + "a/y.jpg and " + d + "a/y.png would both be saved as labels/y.txt"),
            std::string::npos)
      << s.ToString();
  s = run(d + "a/y.jpg\n" + d + "a/y.png\n", false, true);  // y.jpg and y.png: two images, no labels
  EXPECT_NE(s.message().find("nope.pt"), std::string::npos) << s.ToString();
}

TEST(DetectLabelLineTest, FormatsAsDetectPyInFloat32) {
  DetectBox b{10, 20, 110, 70, 0.5f, 1};
  EXPECT_EQ(DetectLabelLine(b, 200, 100, false), "1 0.3 0.45 0.5 0.5");
  EXPECT_EQ(DetectLabelLine(b, 200, 100, true), "1 0.3 0.45 0.5 0.5 0.5");
  // '%g': six significant digits of the float32 quotient (1 / 3 in float32 is 0.3333333432...).
  DetectBox third{0, 0, 1, 2, 0.87654321f, 12};
  EXPECT_EQ(DetectLabelLine(third, 3, 3, true), "12 0.166667 0.333333 0.333333 0.666667 0.876543");
  // Whole-image box on an odd size.
  DetectBox whole{0, 0, 641, 427, 0.25f, 0};
  EXPECT_EQ(DetectLabelLine(whole, 641, 427, false), "0 0.5 0.5 1 1");
}

// The letterbox and scale-back geometry against v7.0's own letterbox() and scale_boxes() (the reference
// environment's yolov5 package, made by scripts/reference-venv.sh; skipped when absent).
TEST(DetectGeometryTest, LetterboxAndScaleBoxesMatchUltralytics) {
  FFYOLO_REQUIRE_REFERENCE(python);
  const fs::path dir = Scratch("detect_geometry");
  std::ofstream(dir / "oracle.py") << R"(import random, sys
import numpy as np, torch
from yolov5.utils.augmentations import letterbox
from yolov5.utils.general import scale_boxes
random.seed(1)
for k in range(300):
    w, h = random.randint(1, 1500), random.randint(1, 1500)
    img, stride = random.choice([64, 96, 320, 640]), random.choice([32, 64])
    im, _, _ = letterbox(np.zeros((h, w, 3), np.uint8), img, stride=stride, auto=True)
    H, W = im.shape[:2]
    box = torch.tensor([[0.1 * W, 0.2 * H, 0.7 * W, 0.9 * H]], dtype=torch.float32)
    b = scale_boxes((H, W), box, (h, w)).round()[0].tolist()
    print(w, h, img, stride, H, W, *b)
)";
  const std::string out = (dir / "oracle.txt").string();
  ASSERT_EQ(std::system((python + " " + (dir / "oracle.py").string() + " > " + out).c_str()), 0);
  int cases = 0;
  for (const std::string& line : Lines(out)) {
    std::istringstream in(line);
    int w, h, img, stride, want_h, want_w;
    float box[4];
    in >> w >> h >> img >> stride >> want_h >> want_w >> box[0] >> box[1] >> box[2] >> box[3];
    ASSERT_TRUE(in) << line;
    const LetterboxPlan p = PlanLetterbox(w, h, img, img, /*scaleup=*/true, stride);
    const int got_h = p.top + p.new_h + p.bottom, got_w = p.left + p.new_w + p.right;
    ASSERT_EQ(got_h, want_h) << line;
    ASSERT_EQ(got_w, want_w) << line;
    // Python's products in double, then float32, as torch.tensor(..., dtype=float32) takes them.
    const at::Tensor in_box = torch::tensor({static_cast<float>(0.1 * got_w), static_cast<float>(0.2 * got_h),
                                             static_cast<float>(0.7 * got_w), static_cast<float>(0.9 * got_h)})
                                  .view({1, 4});
    const at::Tensor got = ScaleBoxes(got_h, got_w, in_box, h, w).round();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[0][i].item<float>(), box[i]) << line << " coordinate " << i;
    ++cases;
  }
  EXPECT_EQ(cases, 300);
}

// A YOLO label line, or a detection line with its confidence.
struct LabelBox {
  int cls = 0;
  double cx = 0, cy = 0, w = 0, h = 0, conf = -1;
};

std::vector<LabelBox> ReadLabels(const fs::path& path, bool with_conf) {
  std::vector<LabelBox> boxes;
  for (const std::string& line : Lines(path)) {
    std::istringstream in(line);
    double cls = -1;
    LabelBox b;
    in >> cls >> b.cx >> b.cy >> b.w >> b.h;
    if (with_conf) in >> b.conf;
    std::string rest;
    EXPECT_TRUE(in && !(in >> rest)) << path << ": '" << line << "' does not parse";
    EXPECT_EQ(cls, std::floor(cls)) << line;
    b.cls = static_cast<int>(cls);
    boxes.push_back(b);
  }
  return boxes;
}

class Collector : public DetectObserver {
 public:
  std::map<std::string, DetectedImage> images;
  void OnImage(const DetectedImage& image) override { images[image.path] = image; }
};

// The whole tool on a checkpoint trained here for one epoch (one test, so that ctest's per-test
// processes train once). One epoch teaches the model nothing (its confidences stay below 0.01), so
// --conf-thres is low: this checks what the tool writes and prints, not how well the model detects.
TEST(YoloDetectTest, SaveTxtAndPrintedLinesSayWhatItFound) {
  const fs::path root = Scratch("yolo_detect");
  SyntheticOptions so;
  so.output_dir = (root / "src").string();
  so.yolo_layout = true;
  so.train_images = 16;
  so.val_images = 16;
  so.num_classes = 2;
  so.min_size = 48;  // varied sizes: letterboxed shapes from 64 x 32 to 64 x 64
  so.max_size = 96;
  so.max_objects = 1;
  so.min_object_fraction = 0.4;
  so.max_object_fraction = 0.7;
  so.background_fraction = 0;
  so.seed = 3;
  SyntheticSummary ss;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  PackOptions po;
  po.source = so.output_dir;
  po.output = (root / "data.ffr").string();
  PackSummary ps;
  ASSERT_TRUE(Pack(po, &ps).ok());

  TrainOptions to;
  to.data = po.output;
  to.cfg = "yolov5n";
  to.img_size = 64;
  to.batch_size = 8;
  to.epochs = 1;
  to.workers = 2;
  to.threads = 2;
  to.device = "cpu";
  to.noval = true;
  to.project = (root / "runs").string();
  TrainSummary summary;
  const ffr::Status trained = Train(to, nullptr, &summary);
  ASSERT_TRUE(trained.ok()) << trained.ToString();
  const std::string weights = summary.save_dir + "/weights/last.pt";

  // Images it has not seen, in batches of up to 4 consecutive images of the same letterboxed shape.
  const fs::path images = root / "src/images/val2017";
  const std::string log = (root / "detect.log").string();
  const std::string command = std::string(YOLO_DETECT) + " --weights " + weights + " --source " + images.string() +
                              " --img 64 --device cpu --batch-size 4 --conf-thres 0.0001 --save-txt --save-conf --project " +
                              (root / "detect").string() + " > " + log + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << std::ifstream(log).rdbuf();
  const fs::path out = root / "detect/exp";
  const std::vector<std::string> printed = Lines(log);

  DetectRunOptions o;
  o.weights = weights;
  o.source = images.string();
  o.save_dir = (root / "library").string();
  fs::create_directories(o.save_dir);
  o.img_size = 64;
  o.device = "cpu";
  o.save_img = false;
  o.conf_thres = 0.0001;
  o.batch_size = 4;
  Collector collector;
  DetectSummary ds;
  ASSERT_TRUE(RunDetect(o, &collector, &ds).ok());
  ASSERT_EQ(collector.images.size(), 16u);
  int with_boxes = 0;
  for (const auto& [path, image] : collector.images) {
    const std::string stem = fs::path(path).stem().string();
    EXPECT_TRUE(fs::exists(out / (stem + ".jpg"))) << stem << ": no drawn copy";
    // The tool's printed line for it, as detect.py prints: "image i/16 PATH: HxW ...ms".
    EXPECT_EQ(std::max(image.input_h, image.input_w), 64);
    EXPECT_EQ(image.input_h % 32 + image.input_w % 32, 0);
    const std::string head = "image " + std::to_string(image.index) + "/16 " + path + ": " +
                             std::to_string(image.input_h) + "x" + std::to_string(image.input_w) + " ";
    EXPECT_NE(std::find_if(printed.begin(), printed.end(), [&](const std::string& l) { return l.rfind(head, 0) == 0; }),
              printed.end())
        << "no line starting '" << head << "'";
    // --save-txt --save-conf: the tool wrote, line for line, what the library detected.
    const fs::path txt = out / "labels" / (stem + ".txt");
    std::vector<std::string> want;
    for (auto it = image.boxes.rbegin(); it != image.boxes.rend(); ++it)
      want.push_back(DetectLabelLine(*it, image.width, image.height, true));
    EXPECT_EQ(fs::exists(txt) ? Lines(txt) : std::vector<std::string>{}, want) << txt;
    const std::vector<LabelBox> dets = fs::exists(txt) ? ReadLabels(txt, true) : std::vector<LabelBox>{};
    for (size_t k = 1; k < dets.size(); ++k) EXPECT_LE(dets[k - 1].conf, dets[k].conf) << txt << ": reversed(det)";

    with_boxes += !dets.empty();
    for (const LabelBox& d : dets) {
      EXPECT_TRUE(d.cls == 0 || d.cls == 1) << txt;
      EXPECT_GT(d.conf, 0.0001) << txt;
      for (double v : {d.cx, d.cy, d.w, d.h}) EXPECT_TRUE(v >= 0 && v <= 1) << txt << ": not normalized";
    }
  }
  EXPECT_GT(with_boxes, 0) << "nothing detected at all: the format checks above checked nothing";
  // An undecodable file among good ones: named on stderr, the others still drawn, exit status 1.
  const fs::path mixed = root / "mixed";
  fs::create_directories(mixed);
  const std::string good = fs::path(collector.images.begin()->first).filename().string();
  fs::copy_file(images / good, mixed / good);
  std::ofstream(mixed / "broken.jpg") << "\xff\xd8 not a JPEG";
  const std::string mixed_log = (root / "mixed.log").string();
  const std::string mixed_command = std::string(YOLO_DETECT) + " --weights " + weights + " --source " +
                                    mixed.string() + " --img 64 --device cpu --project " +
                                    (root / "detect").string() + " --name mixed > " + mixed_log + " 2>&1";
  const int status = std::system(mixed_command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << mixed_command;
  EXPECT_EQ(WEXITSTATUS(status), 1) << std::ifstream(mixed_log).rdbuf();
  const std::vector<std::string> mixed_lines = Lines(mixed_log);
  EXPECT_NE(std::find_if(mixed_lines.begin(), mixed_lines.end(),
                         [&](const std::string& l) {
                           return l.rfind("yolo-detect: skipped: ", 0) == 0 && l.find("broken.jpg") != std::string::npos;
                         }),
            mixed_lines.end());
  EXPECT_TRUE(fs::exists(root / "detect/mixed" / good));
  EXPECT_FALSE(fs::exists(root / "detect/mixed/broken.jpg"));

  EXPECT_EQ(printed.back(), std::to_string(std::distance(fs::directory_iterator(out / "labels"),
                                                         fs::directory_iterator())) +
                                " labels saved to " + out.string() + "/labels");

#ifdef FFYOLO_HAVE_IMGCODECS
  // A photo stored turned with an EXIF orientation that turns it back (issue #32) is detected as viewed, as
  // detect.py's cv2.imread reads it: the same size and boxes as its view saved upright, for each orientation.
  const cv::Mat upright = cv::imread(collector.images.begin()->first, cv::IMREAD_COLOR);
  ASSERT_FALSE(upright.empty());
  for (int orientation = 2; orientation <= 8; ++orientation) {
    SCOPED_TRACE("orientation " + std::to_string(orientation));
    const fs::path tagged_dir = root / ("tagged" + std::to_string(orientation));
    const fs::path upright_dir = root / ("upright" + std::to_string(orientation));
    fs::create_directories(tagged_dir);
    fs::create_directories(upright_dir);
    cv::Mat stored;
    OrientImage(upright, InverseOrientation(orientation), &stored);
    tjhandle tj = tjInitCompress();
    unsigned char* jpeg = nullptr;
    unsigned long jpeg_size = 0;
    ASSERT_EQ(tjCompress2(tj, stored.data, stored.cols, static_cast<int>(stored.step), stored.rows, TJPF_BGR, &jpeg,
                          &jpeg_size, TJSAMP_420, 95, 0),
              0);
    const std::string tagged = testing::WithExifOrientation(std::string(reinterpret_cast<char*>(jpeg), jpeg_size),
                                                            static_cast<uint8_t>(orientation));
    tjFree(jpeg);
    tjDestroy(tj);
    ASSERT_TRUE(testing::WriteStringToFile((tagged_dir / "photo.jpg").string(), tagged));
    ASSERT_TRUE(cv::imwrite((upright_dir / "photo.png").string(),
                            cv::imread((tagged_dir / "photo.jpg").string(), cv::IMREAD_COLOR)));
    DetectedImage seen[2];
    for (int k = 0; k < 2; ++k) {
      DetectRunOptions one = o;
      one.source = (k == 0 ? tagged_dir : upright_dir).string();
      Collector c;
      DetectSummary cs;
      ASSERT_TRUE(RunDetect(one, &c, &cs).ok());
      ASSERT_EQ(c.images.size(), 1u);
      seen[k] = c.images.begin()->second;
    }
    EXPECT_EQ(seen[0].width, upright.cols);
    EXPECT_EQ(seen[0].height, upright.rows);
    EXPECT_EQ(seen[0].input_w, seen[1].input_w);
    EXPECT_EQ(seen[0].input_h, seen[1].input_h);
    ASSERT_EQ(seen[0].boxes.size(), seen[1].boxes.size());
    ASSERT_FALSE(seen[0].boxes.empty()) << "nothing detected: the comparison would compare nothing";
    for (size_t b = 0; b < seen[0].boxes.size(); ++b)
      EXPECT_EQ(DetectLabelLine(seen[0].boxes[b], seen[0].width, seen[0].height, true),
                DetectLabelLine(seen[1].boxes[b], seen[1].width, seen[1].height, true));
  }
#endif
}


// Whether the tools train a model that detects: yolo-synth, yolo-pack, yolo-train and yolo-detect run as a user
// runs them, on one-class 64 x 64 synthetic images, and yolo-detect's --save-txt labels of held-out images are
// matched to their ground-truth labels. The hyperparameters (tests/tools/detect/hyp.recall.yaml) make it converge
// in a few hundred optimizer steps on a CPU; docs/detect.md has its measured recall and precision.
// One torch thread and one loader thread: the same run every time, and no thread of it waits on one that ctest -j's
// other tests keep off the CPU.
constexpr const char* kRecallSynthArgs =
    "--classes 1 --size 64x64 --train 1024 --val 128 --max-objects 2 --min-object 0.2 --max-object 0.4 --seed 1";
constexpr const char* kRecallTrainArgs =
    "--cfg yolov5n --img 64 --batch 16 --epochs 12 --workers 1 --threads 1 --seed 0 --noval --device cpu";
const std::string kRecallHyp = testing::SourcePath("tests/tools/detect/hyp.recall.yaml");

TEST(YoloDetectTest, TrainedModelFindsTheLabelledObjects) {
  const fs::path root = Scratch("yolo_detect_recall");
  const std::string bin = fs::path(YOLO_DETECT).parent_path().string() + "/";
  const auto run = [&](const std::string& tool, const std::string& args) {
    const std::string log = (root / (tool + ".log")).string();
    const std::string command = bin + tool + " " + args + " > " + log + " 2>&1";
    const int status = std::system(command.c_str());
    EXPECT_EQ(status, 0) << command << "\n" << std::ifstream(log).rdbuf();
    return status == 0;
  };
  ASSERT_TRUE(run("yolo-synth", "-o " + (root / "synth").string() + " --yolo " + kRecallSynthArgs));
  ASSERT_TRUE(run("yolo-pack", (root / "synth").string() + " -o " + (root / "synth.ffr").string()));
  ASSERT_TRUE(run("yolo-train", "--data " + (root / "synth.ffr").string() + " --hyp " + kRecallHyp +
                                    " --project " + (root / "train").string() + " " + kRecallTrainArgs));
  ASSERT_TRUE(run("yolo-detect", "--weights " + (root / "train/exp/weights/last.pt").string() + " --source " +
                                     (root / "synth/images/val2017").string() +
                                     " --img 64 --device cpu --threads 1 --save-txt --save-conf --nosave --project " +
                                     (root / "detect").string()));

  // Greedy matching, most confident detection first, each to the unmatched label of its class it overlaps most.
  int labels = 0, detections = 0, matched = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(root / "synth/labels/val2017")) {
    const std::vector<LabelBox> truth = ReadLabels(e.path(), false);
    const fs::path txt = root / "detect/exp/labels" / e.path().filename();
    std::vector<LabelBox> found = fs::exists(txt) ? ReadLabels(txt, true) : std::vector<LabelBox>{};
    std::sort(found.begin(), found.end(), [](const LabelBox& a, const LabelBox& b) { return a.conf > b.conf; });
    labels += truth.size();
    detections += found.size();
    if (truth.empty() || found.empty()) continue;
    const auto xyxy = [](const std::vector<LabelBox>& boxes) {
      std::vector<float> xywh;
      for (const LabelBox& b : boxes) xywh.insert(xywh.end(), {float(b.cx), float(b.cy), float(b.w), float(b.h)});
      return XywhToXyxy(torch::tensor(xywh).view({-1, 4}));
    };
    // Normalized coordinates of square images: the same IoU as in pixels.
    const at::Tensor iou = BoxIou(xyxy(found), xyxy(truth));
    std::vector<bool> taken(truth.size(), false);
    for (size_t d = 0; d < found.size(); ++d) {
      int best = -1;
      double best_iou = 0.5;
      for (size_t t = 0; t < truth.size(); ++t) {
        const double v = iou[d][t].item<double>();
        if (!taken[t] && found[d].cls == truth[t].cls && v >= best_iou) best = t, best_iou = v;
      }
      if (best >= 0) taken[best] = true, ++matched;
    }
  }
  const double recall = labels ? double(matched) / labels : 0, precision = detections ? double(matched) / detections : 0;
  std::printf("recall %.3f (%d of %d labelled objects), precision %.3f (%d detections) at IoU 0.5, conf 0.25\n",
              recall, matched, labels, precision, detections);
  ASSERT_GT(labels, 150);  // 183 in 128 images
  EXPECT_GE(recall, 0.9);
  EXPECT_GE(precision, 0.8);  // not recall bought with boxes everywhere

#ifdef FFYOLO_HAVE_IMGCODECS
  // EXIF-tagged photos (issue #32): held-out images stored turned by the inverse of a tag and tagged, detected
  // by yolo-detect and by YOLOv5 v7.0's detect.py (the reference environment's) with the same weights (exported
  // to Ultralytics' format, imported back): the same detections, to the printed digits.
  const std::string python = testing::ReferencePython();
  if (python.empty()) {
    std::printf("no reference environment (scripts/reference-venv.sh): tagged photos not compared with detect.py\n");
    return;
  }
  const fs::path tagged = root / "tagged";
  fs::create_directories(tagged);
  std::vector<fs::path> images;
  for (const fs::directory_entry& e : fs::directory_iterator(root / "synth/images/val2017")) images.push_back(e.path());
  std::sort(images.begin(), images.end());
  const int orientations[] = {2, 3, 4, 5, 6, 7, 8};
  for (size_t i = 0; i < 7 && i < images.size(); ++i) {
    cv::Mat stored;
    OrientImage(cv::imread(images[i].string(), cv::IMREAD_COLOR), InverseOrientation(orientations[i]), &stored);
    std::vector<uint8_t> jpeg;
    ASSERT_TRUE(cv::imencode(".jpg", stored, jpeg, {cv::IMWRITE_JPEG_QUALITY, 95}));
    ASSERT_TRUE(testing::WriteStringToFile(
        (tagged / images[i].filename()).replace_extension(".jpg").string(),
        testing::WithExifOrientation(std::string(jpeg.begin(), jpeg.end()), static_cast<uint8_t>(orientations[i]))));
  }
  const std::string weights = (root / "train/exp/weights/last.pt").string();
  const std::string exported = (root / "last.ultralytics.pt").string(), imported = (root / "last.imported.pt").string();
  const std::string convert = python + " " + testing::SourcePath("scripts/ultralytics_weights.py");
  ASSERT_EQ(std::system((convert + " export " + weights + " -o " + exported + " > " + (root / "export.log").string() +
                         " 2>&1 && " + convert + " import " + exported + " -o " + imported + " >> " +
                         (root / "export.log").string() + " 2>&1")
                            .c_str()),
            0)
      << std::ifstream(root / "export.log").rdbuf();
  ASSERT_TRUE(run("yolo-detect", "--weights " + imported + " --source " + tagged.string() +
                                     " --img 64 --device cpu --threads 1 --save-txt --save-conf --nosave --project " +
                                     (root / "ours").string()));
  const std::string reference_log = (root / "detect.py.log").string();
  ASSERT_EQ(std::system(("cd " + root.string() + " && TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 " + python +
                         " -m yolov5.detect --weights " + exported + " --source " + tagged.string() +
                         " --imgsz 64 --device cpu --save-txt --save-conf --nosave --project " +
                         (root / "reference").string() + " > " + reference_log + " 2>&1")
                            .c_str()),
            0)
      << std::ifstream(reference_log).rdbuf();
  int compared = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(tagged)) {
    const std::string name = e.path().stem().string() + ".txt";
    const fs::path ours = root / "ours/exp/labels" / name, reference = root / "reference/exp/labels" / name;
    ASSERT_EQ(fs::exists(ours), fs::exists(reference)) << name;
    if (!fs::exists(ours)) continue;
    std::vector<LabelBox> a = ReadLabels(ours, true), b = ReadLabels(reference, true);
    ASSERT_EQ(a.size(), b.size()) << name;
    const auto order = [](const LabelBox& x, const LabelBox& y) { return std::tie(x.cls, x.cx, x.cy) < std::tie(y.cls, y.cx, y.cy); };
    std::sort(a.begin(), a.end(), order);
    std::sort(b.begin(), b.end(), order);
    for (size_t k = 0; k < a.size(); ++k, ++compared) {
      EXPECT_EQ(a[k].cls, b[k].cls) << name;
      for (const auto& [x, y] : {std::pair{a[k].cx, b[k].cx}, {a[k].cy, b[k].cy}, {a[k].w, b[k].w}, {a[k].h, b[k].h}})
        EXPECT_NEAR(x, y, 2e-5) << name << " line " << k;
      EXPECT_NEAR(a[k].conf, b[k].conf, 1e-4) << name << " line " << k;
    }
  }
  EXPECT_GT(compared, 3) << "too few detections to compare";
#endif
}

}  // namespace
}  // namespace ffyolo
