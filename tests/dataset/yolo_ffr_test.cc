// The yolo-ffr executable: exit statuses, the "yolo-ffr: " error prefix, and
// that each subcommand prints what its library function gives; yolo-pack
// --align, whose output yolo-ffr reads.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dataset/packed_coco128.h"
#include "dataset/tiny_images.h"
#include "ffyolo/manifest.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::kCocoSplit;
using testing::ReadFileToString;
using testing::ScratchDir;
using testing::SharedPath;

struct RunResult {
  int status = -1;
  std::string out, err;
  size_t lines() const {
    size_t n = 0;
    for (char c : out) n += c == '\n';
    return n;
  }
};

class YoloFfrTest : public testing::PackedCoco128Test {
 protected:
  void SetUp() override {
    PackedCoco128Test::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    work_.reset(new ScratchDir("work"));
  }

  // Runs yolo-ffr with `args` (shell words), capturing stdout and stderr.
  RunResult Run(const std::string& args) { return RunTool(YOLO_FFR, args); }
  RunResult RunTool(const std::string& program, const std::string& args) {
    const std::string err_path = *work_ / "stderr";
    const std::string command = program + " " + args + " 2>" + err_path;
    RunResult r;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return r;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) r.out.append(buf, n);
    const int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = ReadFileToString(err_path);
    return r;
  }

  // A YOLO-txt tree of three 48x32 JPEGs, the first tagged with EXIF orientation 6 (viewed 32x48), each with one
  // box off centre; the tree's path.
  std::string WriteExifTree() {
    const std::string src = *work_ / "exif";
    fs::create_directories(src + "/images/train");
    fs::create_directories(src + "/labels/train");
    for (int i = 0; i < 3; ++i) {
      const std::string jpeg = testing::MakeJpeg(48, 32, 3);
      EXPECT_TRUE(testing::WriteStringToFile(src + "/images/train/" + std::to_string(i) + ".jpg",
                                             i == 0 ? testing::WithExifOrientation(jpeg, 6) : jpeg));
      EXPECT_TRUE(testing::WriteStringToFile(src + "/labels/train/" + std::to_string(i) + ".txt",
                                             "0 0.25 0.75 0.2 0.4\n"));
    }
    EXPECT_TRUE(testing::WriteStringToFile(src + "/data.yaml", "names: [thing]\n"));
    return src;
  }

  std::unique_ptr<ScratchDir> work_;
};

TEST_F(YoloFfrTest, InfoJson) {
  const RunResult r = Run("info --json " + packed());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["splits"][0]["samples"], 128);
  EXPECT_EQ(json["splits"][0]["boxes"], 939);
}

TEST_F(YoloFfrTest, VerifyExitStatus) {
  const RunResult clean = Run("verify --workers 2 " + packed());
  EXPECT_EQ(clean.status, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("verified 128 of 128 samples"), std::string::npos) << clean.out;
  EXPECT_NE(clean.out.find(": OK"), std::string::npos) << clean.out;

  const std::string copy = *work_ / "coco128.ffr";
  testing::CopyTree(packed(), copy);
  const std::string shard = copy + "/" + kCocoSplit + "/PART_00001.ffr";
  const ffr::ShardHeader header = testing::ReadShardHeader(shard);
  testing::FlipByte(shard, header.offsets[2] + header.sample_size(2) / 2);
  const RunResult damaged = Run("verify " + copy);
  EXPECT_EQ(damaged.status, 1) << damaged.out << damaged.err;
  EXPECT_NE(damaged.out.find("PART_00001.ffr sample 2 "), std::string::npos) << damaged.out;
  EXPECT_NE(damaged.out.find("1 problems"), std::string::npos) << damaged.out;

  fs::remove(copy + "/" + kManifestFile);
  const RunResult incomplete = Run("verify " + copy);
  EXPECT_EQ(incomplete.status, 1);
  EXPECT_EQ(incomplete.err.rfind("yolo-ffr: ", 0), 0u) << incomplete.err;
  EXPECT_NE(incomplete.err.find(kManifestFile), std::string::npos) << incomplete.err;
}

TEST_F(YoloFfrTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(Run("").status, 2);
  EXPECT_EQ(Run("frobnicate " + packed()).status, 2);
  EXPECT_EQ(Run("verify --no-such-flag " + packed()).status, 2);
  EXPECT_EQ(Run("verify --no-images --decode " + packed()).status, 2);
  EXPECT_EQ(Run("cat " + packed()).status, 2);
  EXPECT_EQ(Run("cat " + packed() + " 3 --by-id 9").status, 2);
  EXPECT_EQ(Run("extract " + packed() + " 3").status, 2);
  EXPECT_EQ(Run("--help").status, 0);
}

TEST_F(YoloFfrTest, LsPrintsOneLinePerSample) {
  const RunResult all = Run("ls " + packed());
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(all.lines(), 128u);
  const RunResult some = Run("ls " + packed() + " --split " + kCocoSplit + " --limit 5");
  ASSERT_EQ(some.status, 0) << some.err;
  EXPECT_EQ(some.lines(), 5u);
  EXPECT_EQ(all.out.rfind(some.out, 0), 0u);
  const RunResult wrong = Run("ls " + packed() + " --split val2017");
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.err.find("val2017"), std::string::npos) << wrong.err;
}

TEST_F(YoloFfrTest, CatAndExtract) {
  const RunResult by_id = Run("cat " + packed() + " --by-id 9");
  ASSERT_EQ(by_id.status, 0) << by_id.err;
  EXPECT_NE(by_id.out.find("000000000009.jpg"), std::string::npos) << by_id.out;
  const RunResult by_index = Run("cat " + packed() + " 0");
  EXPECT_EQ(by_index.out, by_id.out);  // image 9 comes first
  const RunResult out_of_range = Run("cat " + packed() + " 500");
  EXPECT_EQ(out_of_range.status, 1);
  EXPECT_EQ(out_of_range.err.rfind("yolo-ffr: ", 0), 0u) << out_of_range.err;

  const std::string dir = *work_ / "extracted";
  const RunResult extract = Run("extract " + packed() + " 0 5 -o " + dir);
  ASSERT_EQ(extract.status, 0) << extract.err;
  EXPECT_EQ(extract.lines(), 2u);
  EXPECT_EQ(ReadFileToString(dir + "/000000000009.jpg"),
            ReadFileToString(SharedPath("data/coco128/images/train2017/000000000009.jpg")));
  EXPECT_TRUE(fs::exists(dir + "/000000000009.txt"));
  EXPECT_TRUE(fs::exists(dir + "/000000000009.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 6);
}

// yolo-pack --align: every yolo-ffr command reads the aligned dataset as the
// plain one (packed() has the same source and options but the alignment).
TEST_F(YoloFfrTest, AlignedPackReadsAsThePlainOne) {
  const std::string source = SharedPath("data/coco128");
  const std::string aligned = *work_ / "aligned.ffr";
  const RunResult pack =
      RunTool(YOLO_PACK, source + " -o " + aligned + " --layout coco --shards 3 --workers 2 --align 4096");
  ASSERT_EQ(pack.status, 0) << pack.err;
  EXPECT_NE(ReadFileToString(aligned + "/" + kManifestFile).find("align: 4096"), std::string::npos);
  EXPECT_NE(Run("info " + aligned).out.find("samples aligned to 4096 bytes"), std::string::npos);
  EXPECT_EQ(Run("info " + packed()).out.find("aligned"), std::string::npos);
  const RunResult verify = Run("verify --workers 2 " + aligned);
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("verified 128 of 128 samples"), std::string::npos) << verify.out;
  for (const char* command : {"cat", "ls"}) {
    const std::string index = std::string(command) == "cat" ? " 0" : "";
    const RunResult plain_out = Run(std::string(command) + " " + packed() + index);
    const RunResult aligned_out = Run(std::string(command) + " " + aligned + index);
    ASSERT_EQ(aligned_out.status, 0) << aligned_out.err;
    EXPECT_EQ(aligned_out.out, plain_out.out) << command;
  }
  const std::string dir = *work_ / "extracted";
  ASSERT_EQ(Run("extract " + aligned + " 0 -o " + dir).status, 0);
  EXPECT_EQ(ReadFileToString(dir + "/000000000009.jpg"),
            ReadFileToString(source + "/images/train2017/000000000009.jpg"));

  const RunResult bad = RunTool(YOLO_PACK, source + " -o " + std::string(*work_ / "bad.ffr") + " --align 1000");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--align"), std::string::npos) << bad.err;
  EXPECT_NE(RunTool(YOLO_PACK, "--help").out.find("O_DIRECT"), std::string::npos);
}

// yolo-ffr batches: one line per batch with its CRC-32s, the same for any thread count, --limit honoured,
// and validation's letterboxed batches with --val.
TEST_F(YoloFfrTest, BatchesPrintsEachBatchsDigestWhateverTheThreads) {
  const std::string common = "batches " + packed() + " --img 128 --batch 16 --seed 3 ";
  const RunResult one = Run(common + "--workers 1");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.lines(), 8u);
  EXPECT_EQ(one.out.rfind("batch 0: 16 images 128x128, ", 0), 0u) << one.out;
  EXPECT_NE(one.out.find("images crc32 "), std::string::npos);
  EXPECT_EQ(Run(common + "--workers 3").out, one.out);
  EXPECT_NE(Run(common + "--workers 2 --epoch 1").out, one.out);
  EXPECT_EQ(Run(common + "--limit 2").lines(), 2u);
  const RunResult val = Run(common + "--val --limit 1");
  ASSERT_EQ(val.status, 0) << val.err;
  EXPECT_EQ(val.out.rfind("batch 0: 16 images ", 0), 0u) << val.out;
  EXPECT_EQ(Run(common + "--cache gpu").status, 2);
  EXPECT_EQ(Run("batches " + packed() + " --split val2017").status, 1);
}

// A JPEG with an EXIF orientation other than 1: yolo-pack packs it, says how many and how they train (as
// viewed by default, as stored with --exif ignore), and yolo-ffr info says so for the split.
TEST_F(YoloFfrTest, PackWarnsOfExifOrientedImagesAndInfoCountsThem) {
  const std::string src = WriteExifTree();
  for (const bool ignore : {false, true}) {
    const std::string out = *work_ / (ignore ? "exif-ignored.ffr" : "exif.ffr");
    const RunResult pack = RunTool(YOLO_PACK, src + " -o " + out + (ignore ? " --exif ignore" : ""));
    ASSERT_EQ(pack.status, 0) << pack.err;
    EXPECT_NE(pack.err.find(std::string("yolo-pack: 1 image carries an EXIF orientation other than 1 (photos stored "
                                        "sideways or mirrored, as phones store them): ") +
                            (ignore ? "trained and shown as stored (--exif ignore)"
                                    : "trained and shown as viewed, turned as OpenCV and YOLOv5 read them")),
              std::string::npos)
        << pack.err;
    const RunResult info = Run("info " + out);
    ASSERT_EQ(info.status, 0) << info.err;
    EXPECT_NE(info.out.find(std::string("1 image with an EXIF orientation other than 1: ") +
                            (ignore ? "trained and shown as stored" : "trained and shown as viewed")),
              std::string::npos)
        << info.out;
    const RunResult verify = Run("verify " + out);
    EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  }
  EXPECT_NE(RunTool(YOLO_PACK, src + " -o " + (*work_ / "bad.ffr") + " --exif sideways").status, 0);
}

// cat and extract report the 90° photo in the frame its boxes are in, and say which: by default as viewed (as
// cv2.imread shows it, 32x48: the box's centre 0.25 of 32 pixels across), with --exif ignore as stored (48x32).
TEST_F(YoloFfrTest, CatAndExtractReportTheFrameTheBoxesAreIn) {
  const std::string src = WriteExifTree();
  for (const bool ignore : {false, true}) {
    SCOPED_TRACE(ignore ? "--exif ignore" : "--exif auto");
    const std::string out = *work_ / (ignore ? "frame-stored.ffr" : "frame-viewed.ffr");
    ASSERT_EQ(RunTool(YOLO_PACK, src + " -o " + out + (ignore ? " --exif ignore" : "")).status, 0);
    const uint32_t width = ignore ? 48 : 32, height = ignore ? 32 : 48;
    const RunResult cat = Run("cat " + out + " 0");
    ASSERT_EQ(cat.status, 0) << cat.err;
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    EXPECT_NE(cat.out.find("0.jpg, " + size + " jpeg " +
                           (ignore ? "as stored (EXIF orientation 6, not applied in this split: cv2.imread shows it "
                                     "turned)"
                                   : "as viewed (EXIF orientation 6, stored 48x32)")),
              std::string::npos)
        << cat.out;
    // The box's row: cx cy w h, then the same in the frame's pixels.
    char pixels[64];
    std::snprintf(pixels, sizeof(pixels), "%8.1f %8.1f %8.1f %8.1f", 0.25 * width, 0.75 * height, 0.2 * width,
                  0.4 * height);
    EXPECT_NE(cat.out.find(pixels), std::string::npos) << cat.out;
    const RunResult plain = Run("cat " + out + " 1");
    EXPECT_NE(plain.out.find("1.jpg, 48x32 jpeg, "), std::string::npos) << plain.out;

    const std::string dir = *work_ / (ignore ? "extract-stored" : "extract-viewed");
    ASSERT_EQ(Run("extract " + out + " 0 -o " + dir).status, 0);
    const auto json = nlohmann::json::parse(ReadFileToString(dir + "/0.json"));
    EXPECT_EQ(json["width"], width);
    EXPECT_EQ(json["height"], height);
    EXPECT_EQ(json["frame"], ignore ? "stored" : "viewed");
    EXPECT_EQ(json["exif_orientation"], 6);
    EXPECT_EQ(json["stored_width"], 48);
    EXPECT_EQ(json["stored_height"], 32);
  }
}

}  // namespace
}  // namespace ffyolo
