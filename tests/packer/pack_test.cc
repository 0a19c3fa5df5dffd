// Pack end to end: coco128 from both source layouts, aligned samples, bad input, crash safety, resume.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "ffr/format.h"
#include "ffr/reader.h"
#include "ffyolo/dataset.h"
#include "ffyolo/exif.h"
#include "ffyolo/inspect.h"
#include "ffyolo/pack.h"
#include "dataset/packed_coco128.h"
#include "dataset/tiny_images.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::MakeJpeg;
using testing::WithExifOrientation;
using testing::WithXmpFirst;
using testing::ReadFileToString;
using testing::ScratchDir;
using testing::WriteStringToFile;

PackOptions Options(const std::string& src, const std::string& out) {
  PackOptions o;
  o.source = src;
  o.output = out;
  o.threads = 2;
  return o;
}

// A tiny official-COCO tree: images/<split>/ plus annotations/instances_<split>.json.
// Each entry of `images` is {file name, width, height, bytes}.
struct TinyImage {
  std::string file;
  int w, h;
  std::string bytes;
  std::string annotations;  // JSON objects without "image_id"/"id", comma-separated
};

void WriteCocoTree(const std::string& root, const std::string& split, const std::vector<TinyImage>& images) {
  fs::create_directories(root + "/annotations");
  fs::create_directories(root + "/images/" + split);
  std::string imgs, anns;
  int ann_id = 1;
  for (size_t i = 0; i < images.size(); ++i) {
    const TinyImage& im = images[i];
    if (!im.bytes.empty()) {
      ASSERT_TRUE(WriteStringToFile(root + "/images/" + split + "/" + im.file, im.bytes));
    }
    imgs += std::string(imgs.empty() ? "" : ",") + "{\"id\":" + std::to_string(i + 1) + ",\"file_name\":\"" +
            im.file + "\",\"width\":" + std::to_string(im.w) + ",\"height\":" + std::to_string(im.h) + "}";
    if (!im.annotations.empty())
      anns += std::string(anns.empty() ? "" : ",") + "{\"id\":" + std::to_string(ann_id++) +
              ",\"image_id\":" + std::to_string(i + 1) + "," + im.annotations + "}";
  }
  const std::string json = "{\"images\":[" + imgs + "],\"annotations\":[" + anns +
                           "],\"categories\":[{\"id\":3,\"name\":\"car\"},{\"id\":1,\"name\":\"person\"}]}";
  ASSERT_TRUE(WriteStringToFile(root + "/annotations/instances_" + split + ".json", json));
}

const char kBox[] = "\"category_id\":1,\"bbox\":[4,4,20,10],\"area\":200,\"iscrowd\":0";

// Three images to spread over shards: two with a box, one background.
std::vector<TinyImage> ThreeImages() {
  return {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox},
          {"b.jpg", 32, 24, MakeJpeg(32, 24, 4), kBox},
          {"c.jpg", 32, 24, MakeJpeg(32, 24, 1), ""}};
}

LabelIndex LoadIndex(const std::string& dataset, const std::string& split) {
  std::unique_ptr<Dataset> d;
  Status s = Dataset::Open(dataset, &d);
  EXPECT_TRUE(s.ok()) << s.ToString();
  LabelIndex idx;
  if (d) {
    EXPECT_TRUE(d->LoadLabelIndex(split, &idx).ok());
  }
  return idx;
}

TEST(PackCoco128Test, JsonAndYoloSourcesGiveTheSameBoxes) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ScratchDir dir("coco128");
  PackOptions json = Options(coco128, dir / "json.ffr");
  json.scan.layout = SourceLayout::kCocoJson;
  json.shards = 3;
  PackSummary js;
  Status s = Pack(json, &js);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(js.images, 128);
  EXPECT_EQ(js.boxes, 939);
  EXPECT_EQ(js.background, 2);
  ASSERT_EQ(js.manifest.splits.size(), 1u);
  EXPECT_EQ(js.manifest.splits[0].crowd_boxes, 10);
  EXPECT_EQ(js.manifest.splits[0].shards.size(), 3u);
  EXPECT_EQ(js.manifest.names.size(), 80u);
  EXPECT_EQ(js.manifest.category_ids[11], 13);  // stop sign: ids skip 12

  PackOptions yolo = Options(coco128, dir / "yolo.ffr");
  yolo.scan.layout = SourceLayout::kYoloTxt;
  PackSummary ys;
  s = Pack(yolo, &ys);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ys.images, 128);
  EXPECT_EQ(ys.boxes, 929);
  EXPECT_EQ(ys.manifest.category_ids, js.manifest.category_ids);

  const LabelIndex a = LoadIndex(dir / "json.ffr", "train2017");
  const LabelIndex b = LoadIndex(dir / "yolo.ffr", "train2017");
  ASSERT_EQ(a.size(), 128u);
  ASSERT_EQ(b.size(), 128u);
  std::map<int64_t, size_t> by_id;
  for (size_t i = 0; i < b.size(); ++i) by_id[b.image_id(i)] = i;
  int compared = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(by_id.count(a.image_id(i))) << a.file_name(i);
    const size_t j = by_id[a.image_id(i)];
    EXPECT_EQ(a.width(i), b.width(j));
    EXPECT_EQ(a.height(i), b.height(j));
    std::vector<Box> crowdless;
    for (size_t k = 0; k < a.box_count(i); ++k)
      if (!a.boxes(i)[k].iscrowd) crowdless.push_back(a.boxes(i)[k]);
    ASSERT_EQ(crowdless.size(), b.box_count(j)) << a.file_name(i);
    for (const Box& x : crowdless) {
      bool found = false;
      for (size_t k = 0; k < b.box_count(j) && !found; ++k) {
        const Box& y = b.boxes(j)[k];
        found = x.class_index == y.class_index && std::abs(x.cx - y.cx) < 2e-6 && std::abs(x.cy - y.cy) < 2e-6 &&
                std::abs(x.w - y.w) < 2e-6 && std::abs(x.h - y.h) < 2e-6;
      }
      EXPECT_TRUE(found) << a.file_name(i) << " class " << x.class_index;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 929);
}

TEST(PackCoco128Test, RecordsHoldTheOriginalBytesUntouched) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ScratchDir dir("bytes");
  PackSummary sum;
  ASSERT_TRUE(Pack(Options(coco128, dir / "c.ffr"), &sum).ok());
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(dir / "c.ffr", &d).ok());
  std::unique_ptr<ffr::Reader> r;
  ASSERT_TRUE(d->OpenReader("train2017", ffr::ReaderOptions(), &r).ok());
  ffr::ReadBuffer buf;
  for (int64_t i : {0, 37, 127}) {
    ffr::Sample s;
    ASSERT_TRUE(r->Read(i, &buf, &s).ok());
    RecordView v;
    ASSERT_TRUE(RecordView::Parse(s.data, s.size, r->Describe(i), &v).ok());
    const std::string original =
        ReadFileToString(coco128 + "/images/train2017/" + std::string(v.file_name()));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(v.image_data()), v.image_size()), original);
  }
}

TEST(PackCoco128Test, MaxSizeReencodesLargeImages) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ScratchDir dir("maxsize");
  PackOptions o = Options(coco128, dir / "small.ffr");
  o.max_size = 320;
  o.quality = 85;
  PackSummary sum;
  ASSERT_TRUE(Pack(o, &sum).ok());
  const LabelIndex small = LoadIndex(dir / "small.ffr", "train2017");
  ASSERT_EQ(small.size(), 128u);
  for (size_t i = 0; i < small.size(); ++i) EXPECT_LE(std::max(small.width(i), small.height(i)), 320u);
  EXPECT_LT(sum.bytes, 22000000u / 2);

  // The COCO ground truth evaluation scores against shrinks with its image:
  // each EvalBox with a size is its training box, in the stored image's pixels.
  ASSERT_TRUE(small.has_eval_boxes());
  int compared = 0;
  for (size_t i = 0; i < small.size(); ++i) {
    std::vector<EvalBox> sized;
    for (size_t k = 0; k < small.eval_box_count(i); ++k)
      if (small.eval_boxes(i)[k].w > 0 && small.eval_boxes(i)[k].h > 0) sized.push_back(small.eval_boxes(i)[k]);
    ASSERT_EQ(sized.size(), small.box_count(i)) << small.file_name(i);
    const double w = small.width(i), h = small.height(i);
    for (size_t k = 0; k < sized.size(); ++k, ++compared) {
      const Box& box = small.boxes(i)[k];
      EXPECT_NEAR(sized[k].x + sized[k].w / 2, box.cx * w, 0.02 * w) << small.file_name(i) << " box " << k;
      EXPECT_NEAR(sized[k].h, box.h * h, 0.02 * h) << small.file_name(i) << " box " << k;
      EXPECT_NEAR(sized[k].area, box.area, 1e-3 * box.area + 1e-3) << small.file_name(i) << " box " << k;
    }
  }
  EXPECT_EQ(compared, 939);
}

// --align 4096: the very records of a plain pack, each sample starting at a
// multiple of 4096, and a dataset that yolo-ffr verify passes.
TEST(PackCoco128Test, AlignedPackHoldsTheSameRecords) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ScratchDir dir("aligned");
  PackOptions plain = Options(coco128, dir / "plain.ffr");
  plain.shards = 3;
  PackOptions aligned = plain;
  aligned.output = dir / "aligned.ffr";
  aligned.align = 4096;
  PackSummary plain_sum, aligned_sum;
  ASSERT_TRUE(Pack(plain, &plain_sum).ok());
  const Status s = Pack(aligned, &aligned_sum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(plain_sum.manifest.options.at("align"), "0");
  EXPECT_EQ(aligned_sum.manifest.options.at("align"), "4096");
  EXPECT_GT(aligned_sum.bytes, plain_sum.bytes);
  for (const ShardInfo& shard : aligned_sum.manifest.splits[0].shards) {
    const std::string data = ReadFileToString(aligned.output + "/train2017/" + shard.file);
    ffr::ShardHeader h;
    ASSERT_TRUE(ffr::ParseShardHeader(shard.file, reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                                      data.size(), true, &h)
                    .ok());
    EXPECT_EQ(data.size(), shard.bytes);
    for (int64_t i = 0; i < h.count(); ++i) EXPECT_EQ(h.offsets[i] % 4096, 0u) << shard.file << " sample " << i;
  }
  // The label index does not see the padding.
  EXPECT_EQ(ReadFileToString(aligned.output + "/train2017/labels.idx.zst"),
            ReadFileToString(plain.output + "/train2017/labels.idx.zst"));

  std::unique_ptr<Dataset> a, b;
  ASSERT_TRUE(Dataset::Open(plain.output, &a).ok());
  ASSERT_TRUE(Dataset::Open(aligned.output, &b).ok());
  std::unique_ptr<ffr::Reader> ra, rb;
  ASSERT_TRUE(a->OpenReader("train2017", ffr::ReaderOptions(), &ra).ok());
  ASSERT_TRUE(b->OpenReader("train2017", ffr::ReaderOptions(), &rb).ok());
  ASSERT_EQ(ra->size(), 128);
  ASSERT_EQ(rb->size(), 128);
  ffr::ReadBuffer buf_a, buf_b;
  for (int64_t i = 0; i < 128; ++i) {
    ffr::Sample sa, sb;
    ASSERT_TRUE(ra->Read(i, &buf_a, &sa).ok());
    ASSERT_TRUE(rb->Read(i, &buf_b, &sb).ok());
    RecordView va, vb;
    ASSERT_TRUE(RecordView::Parse(sa.data, sa.size, ra->Describe(i), &va).ok());
    const Status parsed = RecordView::Parse(sb.data, sb.size, rb->Describe(i), &vb);
    ASSERT_TRUE(parsed.ok()) << parsed.ToString();
    EXPECT_EQ(vb.file_name(), va.file_name());
    EXPECT_EQ(vb.image_id(), va.image_id());
    EXPECT_EQ(vb.width(), va.width());
    EXPECT_EQ(vb.height(), va.height());
    EXPECT_EQ(vb.encoding(), va.encoding());
    EXPECT_EQ(vb.boxes(), va.boxes());
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(vb.image_data()), vb.image_size()),
              std::string_view(reinterpret_cast<const char*>(va.image_data()), va.image_size()))
        << va.file_name();
  }

  VerifyOptions verify;
  verify.workers = 2;
  VerifyReport report;
  ASSERT_TRUE(VerifyDataset(aligned.output, verify, &report).ok());
  for (const VerifyProblem& p : report.problems) ADD_FAILURE() << p.message;
  EXPECT_EQ(report.samples, 128);
  EXPECT_EQ(report.images, 128);
}

// Each record keeps the EXIF orientation its JPEG carries, and so does its image when --max-size
// re-encodes it (the encoder writes no EXIF: the block goes back in); the split counts those other than 1. By default the label index gives the viewed size (the record
// the stored one) and the manifest says the orientation is applied; with --exif ignore, stored sizes and
// not applied. The COCO JSON's size must be the frame the flag says its boxes are in.
TEST(PackTest, RecordsKeepTheExifOrientationAndTheSplitCountsIt) {
  ScratchDir dir("exif");
  std::vector<TinyImage> images = ThreeImages();
  images[0].bytes = WithExifOrientation(MakeJpeg(64, 24, 3), 6);  // a portrait photo stored sideways
  images[1].bytes = WithExifOrientation(images[1].bytes, 1);
  images[2].bytes = WithExifOrientation(images[2].bytes, 3);
  images[0].w = 24;  // the JSON's size: as viewed
  images[0].h = 64;
  WriteCocoTree(dir / "viewed", "val2017", images);
  images[0].w = 64;  // as stored
  images[0].h = 24;
  WriteCocoTree(dir / "stored", "val2017", images);
  for (const ExifPolicy policy : {ExifPolicy::kAuto, ExifPolicy::kApply, ExifPolicy::kIgnore})
    for (int max_size : {0, 32}) {
      const char* name = policy == ExifPolicy::kAuto ? "auto" : policy == ExifPolicy::kApply ? "apply" : "ignore";
      SCOPED_TRACE(std::string(name) + ", max_size " + std::to_string(max_size));
      const bool apply = policy != ExifPolicy::kIgnore;
      const std::string out = dir / ("out-" + std::string(name) + std::to_string(max_size) + ".ffr");
      // auto: the JSON gives the viewed size; apply and ignore: the stored one.
      PackOptions o = Options(dir / (policy == ExifPolicy::kAuto ? "viewed" : "stored"), out);
      o.max_size = max_size;
      o.exif = policy;
      PackSummary sum;
      const Status s = Pack(o, &sum);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(sum.exif_oriented, 2);
      ASSERT_EQ(sum.manifest.splits.size(), 1u);
      EXPECT_EQ(sum.manifest.splits[0].exif_oriented, 2);
      std::unique_ptr<Dataset> d;
      ASSERT_TRUE(Dataset::Open(o.output, &d).ok());
      EXPECT_EQ(d->manifest().splits[0].exif_oriented, 2);  // through dataset.yaml
      EXPECT_EQ(d->manifest().splits[0].exif_applied, apply);
      std::unique_ptr<ffr::Reader> r;
      ASSERT_TRUE(d->OpenReader("val2017", ffr::ReaderOptions(), &r).ok());
      ffr::ReadBuffer buf;
      const std::vector<uint8_t> expected = {6, 1, 3};
      for (int64_t i = 0; i < 3; ++i) {
        ffr::Sample sample;
        ASSERT_TRUE(r->Read(i, &buf, &sample).ok());
        RecordView v;
        ASSERT_TRUE(RecordView::Parse(sample.data, sample.size, r->Describe(i), &v).ok());
        EXPECT_EQ(v.exif_orientation(), expected[i]) << v.file_name();
        EXPECT_EQ(JpegExifOrientation(v.image_data(), v.image_size()), expected[i]) << v.file_name();
        if (i == 0) {
          EXPECT_EQ(v.width(), max_size ? 32u : 64u);  // the record: as stored
        }
      }
      const LabelIndex index = LoadIndex(o.output, "val2017");
      const uint32_t w = max_size ? 32u : 64u, h = max_size ? 12u : 24u;
      EXPECT_EQ(index.width(0), apply ? h : w);
      EXPECT_EQ(index.height(0), apply ? w : h);
      // verify checks the record's orientation against the image's own EXIF, where the image still has it.
      VerifyReport clean;
      ASSERT_TRUE(VerifyDataset(o.output, VerifyOptions(), &clean).ok());
      EXPECT_TRUE(clean.ok()) << (clean.problems.empty() ? "" : clean.problems[0].message);
    }
  // --exif apply turns the stored-frame boxes with the pixels: the record's and the label index's COCO boxes
  // of the 90° photo are the ignored pack's, turned (centre (x, y) to (1 - y, x), sides swapped).
  {
    const LabelIndex turned = LoadIndex(dir / "out-apply0.ffr", "val2017");
    const LabelIndex as_given = LoadIndex(dir / "out-ignore0.ffr", "val2017");
    ASSERT_EQ(turned.box_count(0), 1u);
    ASSERT_EQ(as_given.box_count(0), 1u);
    const Box t = turned.boxes(0)[0], g = as_given.boxes(0)[0];
    EXPECT_FLOAT_EQ(t.cx, 1 - g.cy);
    EXPECT_FLOAT_EQ(t.cy, g.cx);
    EXPECT_FLOAT_EQ(t.w, g.h);
    EXPECT_FLOAT_EQ(t.h, g.w);
    ASSERT_TRUE(turned.has_eval_boxes() && as_given.has_eval_boxes());
    const EvalBox te = turned.eval_boxes(0)[0], ge = as_given.eval_boxes(0)[0];
    EXPECT_DOUBLE_EQ(te.x, 24 - (ge.y + ge.h));  // in the viewed 24 x 64 frame
    EXPECT_DOUBLE_EQ(te.y, ge.x);
    EXPECT_DOUBLE_EQ(te.w, ge.h);
    EXPECT_DOUBLE_EQ(te.h, ge.w);
    EXPECT_EQ(turned.boxes(1)[0], as_given.boxes(1)[0]);  // orientation 1: as given
  }
  // A JSON in the other frame than the flag says is refused, naming the way out.
  for (const ExifPolicy policy : {ExifPolicy::kAuto, ExifPolicy::kApply, ExifPolicy::kIgnore}) {
    PackOptions o = Options(dir / (policy == ExifPolicy::kAuto ? "stored" : "viewed"),
                            dir / ("refused" + std::to_string(static_cast<int>(policy)) + ".ffr"));
    o.exif = policy;
    PackSummary refused;
    const Status s = Pack(o, &refused);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find(policy == ExifPolicy::kAuto
                                   ? "a.jpg: the image is 24x64 as viewed with its EXIF orientation 6 but the "
                                     "annotations give its stored size, 64x24: they were drawn on the stored pixels. "
                                     "Pack with --exif apply to turn these boxes with the pixels, with --exif ignore"
                                   : "a.jpg: the image is 64x24 as stored and 24x64 as viewed with its EXIF "
                                     "orientation 6"),
              std::string::npos)
        << s.message();
  }
  const std::string shard = (dir / "out-auto0.ffr/val2017/PART_00000.ffr");
  // A record whose orientation byte was changed: 2 mirrors, and 5 also swaps the viewed sides, so the label
  // index's (viewed) size no longer fits the record's.
  ASSERT_NO_FATAL_FAILURE(testing::EditSample(shard, 2, [](std::string* record) { (*record)[7] = 2; }));
  VerifyReport report;
  ASSERT_TRUE(VerifyDataset(dir / "out-auto0.ffr", VerifyOptions(), &report).ok());
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].message.find("the image's EXIF orientation is 3 but the record says 2"),
            std::string::npos)
      << report.problems[0].message;
  ASSERT_NO_FATAL_FAILURE(testing::EditSample(shard, 2, [](std::string* record) { (*record)[7] = 5; }));
  VerifyReport swapped;
  ASSERT_TRUE(VerifyDataset(dir / "out-auto0.ffr", VerifyOptions(), &swapped).ok());
  ASSERT_EQ(swapped.problems.size(), 2u);
  EXPECT_NE(swapped.problems[0].message.find("the record and the label index disagree (record vs index): size"),
            std::string::npos)
      << swapped.problems[0].message;
}

// A photo whose EXIF block (orientation 6) follows an XMP segment: cv::imread reads the first APP1 segment alone
// and shows it as stored (tests/dataset/exif_test.cc checks that against cv::imdecode), so a COCO JSON giving
// the size cv2 shows packs by default, unturned, and one giving the turned size is refused.
TEST(PackTest, AnExifBlockOpenCvDoesNotReadDoesNotTurnTheImage) {
  ScratchDir dir("xmp_first");
  const std::string photo = WithXmpFirst(WithExifOrientation(MakeJpeg(64, 24, 3), 6));
  WriteCocoTree(dir / "as_cv2_shows", "val", {{"a.jpg", 64, 24, photo, kBox}});
  PackSummary sum;
  const Status s = Pack(Options(dir / "as_cv2_shows", dir / "out.ffr"), &sum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sum.exif_oriented, 0);
  const LabelIndex index = LoadIndex(dir / "out.ffr", "val");
  EXPECT_EQ(index.width(0), 64u);
  EXPECT_EQ(index.height(0), 24u);
  WriteCocoTree(dir / "turned", "val", {{"a.jpg", 24, 64, photo, kBox}});
  PackSummary refused;
  EXPECT_FALSE(Pack(Options(dir / "turned", dir / "refused.ffr"), &refused).ok());
}

TEST(PackTest, InvalidAlignIsRefused) {
  ScratchDir dir("bad_align");
  WriteCocoTree(dir / "src", "val", {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox}});
  PackOptions o = Options(dir / "src", dir / "out.ffr");
  o.align = 1000;
  PackSummary sum;
  const Status s = Pack(o, &sum);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("--align"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "out.ffr"));
}

TEST(PackTest, MissingImageFailsFastNamingTheFile) {
  ScratchDir dir("missing");
  WriteCocoTree(dir / "src", "val", {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox}, {"gone.jpg", 32, 24, "", ""}});
  PackSummary sum;
  Status s = Pack(Options(dir / "src", dir / "out.ffr"), &sum);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gone.jpg"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.message();
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(dir / "out.ffr", &d).IsNotFound());  // nothing that looks complete
}

TEST(PackTest, SkipBadReportsEachSkipAndCounts) {
  ScratchDir dir("skip");
  std::string truncated = MakeJpeg(64, 48, 3);
  truncated.resize(truncated.size() / 2);
  WriteCocoTree(dir / "src", "val",
                {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox},
                 {"gone.jpg", 32, 24, "", ""},
                 {"cut.jpg", 64, 48, truncated, ""},
                 {"wrongsize.jpg", 50, 50, MakeJpeg(32, 24, 3), ""},
                 {"bg.jpg", 16, 16, MakeJpeg(16, 16, 1), ""}});
  PackOptions o = Options(dir / "src", dir / "out.ffr");
  o.skip_bad = true;
  std::vector<std::string> messages;
  o.on_message = [&](const std::string& m) { messages.push_back(m); };
  PackSummary sum;
  Status s = Pack(o, &sum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sum.images, 2);
  EXPECT_EQ(sum.skipped, 3);
  EXPECT_EQ(sum.background, 1);
  EXPECT_EQ(sum.manifest.splits[0].skipped, 3);
  std::string all;
  for (const auto& m : messages) all += m + "\n";
  for (const char* name : {"gone.jpg", "cut.jpg", "wrongsize.jpg"})
    EXPECT_NE(all.find(name), std::string::npos) << name << " not reported in:\n" << all;
  EXPECT_NE(all.find("truncated"), std::string::npos) << all;
  const LabelIndex idx = LoadIndex(dir / "out.ffr", "val");
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx.file_name(0), "a.jpg");
  EXPECT_EQ(idx.box_count(0), 1u);
  EXPECT_EQ(idx.boxes(0)[0].class_index, 0);  // category 1 sorts first
  EXPECT_FLOAT_EQ(idx.boxes(0)[0].cx, 14.0f / 32);
  EXPECT_FLOAT_EQ(idx.boxes(0)[0].area, 200.0f);
  // The skipped images' header entries are a gap in the shard, which reads and checks as any other.
  VerifyReport report;
  ASSERT_TRUE(VerifyDataset(dir / "out.ffr", VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.ok()) << report.problems[0].message;
  EXPECT_EQ(report.samples, 2);
}

// The label index's EvalBoxes are the source's, moved into it in place: a
// skipped image takes its own with it, and the images after it keep theirs.
TEST(PackTest, SkippedImageTakesItsEvalBoxesWithIt) {
  ScratchDir dir("skip_eval");
  WriteCocoTree(dir / "src", "val",
                {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), R"("category_id":1,"bbox":[1,2,3,4],"area":12,"iscrowd":0)"},
                 {"gone.jpg", 32, 24, "", R"("category_id":3,"bbox":[5,6,7,8],"area":56,"iscrowd":0)"},
                 {"c.jpg", 32, 24, MakeJpeg(32, 24, 1), R"("category_id":3,"bbox":[9,10,11,12],"area":132,"iscrowd":1)"}});
  PackOptions o = Options(dir / "src", dir / "out.ffr");
  o.skip_bad = true;
  PackSummary sum;
  ASSERT_TRUE(Pack(o, &sum).ok());
  const LabelIndex idx = LoadIndex(dir / "out.ffr", "val");
  ASSERT_EQ(idx.size(), 2u);
  ASSERT_TRUE(idx.has_eval_boxes());
  ASSERT_EQ(idx.eval_box_count(0), 1u);
  ASSERT_EQ(idx.eval_box_count(1), 1u);
  // Categories sorted by id: 1 (person) is class 0, 3 (car) class 1.
  EXPECT_EQ(idx.eval_boxes(0)[0], (EvalBox{0, false, 1, 2, 3, 4, 12}));
  EXPECT_EQ(idx.eval_boxes(1)[0], (EvalBox{1, true, 9, 10, 11, 12, 132}));
}

// A split without images packs into nothing anyone can train or validate on:
// refused before any output is written, naming the split and its listing.
TEST(PackTest, EmptyCocoSplitIsRefused) {
  ScratchDir dir("empty_coco");
  WriteCocoTree(dir / "src", "train", {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox}});
  WriteCocoTree(dir / "src", "val", {});
  PackSummary sum;
  const Status s = Pack(Options(dir / "src", dir / "out.ffr"), &sum);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("split 'val' has no images"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(dir / "src/annotations/instances_val.json"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "out.ffr"));
}

TEST(PackTest, EmptyYoloSplitIsRefused) {
  ScratchDir dir("empty_yolo");
  for (const char* sub : {"images/train2017", "labels/train2017", "images/val2017", "labels/val2017"})
    fs::create_directories(dir / (std::string("src/") + sub));
  ASSERT_TRUE(WriteStringToFile(dir / "src/data.yaml", "names: [a]\n"));
  ASSERT_TRUE(WriteStringToFile(dir / "src/images/train2017/notes.txt", "not an image"));
  ASSERT_TRUE(WriteStringToFile(dir / "src/images/val2017/a.jpg", MakeJpeg(32, 24, 3)));
  ASSERT_TRUE(WriteStringToFile(dir / "src/labels/val2017/a.txt", "0 0.5 0.5 0.2 0.2\n"));
  PackSummary sum;
  const Status s = Pack(Options(dir / "src", dir / "out.ffr"), &sum);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("split 'train2017' has no images"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(dir / "src/images/train2017"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "out.ffr"));

  PackOptions val_only = Options(dir / "src", dir / "out.ffr");
  val_only.scan.splits = {"val2017"};
  EXPECT_TRUE(Pack(val_only, &sum).ok());
  EXPECT_EQ(sum.images, 1);
}

TEST(PackTest, SplitWhoseImagesAreAllSkippedIsRefused) {
  ScratchDir dir("all_skipped");
  WriteCocoTree(dir / "src", "val", {{"gone.jpg", 32, 24, "", kBox}});
  PackOptions o = Options(dir / "src", dir / "out.ffr");
  o.skip_bad = true;
  PackSummary sum;
  const Status s = Pack(o, &sum);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("split 'val': all 1 images"), std::string::npos) << s.message();
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(dir / "out.ffr", &d).IsNotFound());  // nothing that looks complete
}

// A zero target size used to plan an empty first shard and then one image per shard.
TEST(PackTest, ShardsAreNeverEmpty) {
  ScratchDir dir("shard_size");
  WriteCocoTree(dir / "src", "val", ThreeImages());
  PackOptions zero = Options(dir / "src", dir / "zero.ffr");
  zero.shard_bytes = 0;
  PackSummary sum;
  const Status s = Pack(zero, &sum);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("shard size"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "zero.ffr"));

  for (const uint64_t bytes : {uint64_t{1}, uint64_t{256} << 20, UINT64_MAX}) {
    SCOPED_TRACE(bytes);
    PackOptions o = Options(dir / "src", dir / "out.ffr");
    o.shard_bytes = bytes;
    o.force = true;
    ASSERT_TRUE(Pack(o, &sum).ok());
    ASSERT_EQ(sum.manifest.splits.size(), 1u);
    const auto& shards = sum.manifest.splits[0].shards;
    EXPECT_EQ(shards.size(), bytes == 1 ? 3u : 1u);
    for (const auto& shard : shards) EXPECT_GT(shard.samples, 0) << shard.file;
  }
}

// --shards N cuts each split into N shards as even as whole images allow (it gave 10 for 15 on 20
// images: ceil(20/15) = 2 an image each), and into one an image when there are fewer images than N.
TEST(PackTest, ShardsGivesThatManyShardsOfEvenSizes) {
  ScratchDir dir("shard_count");
  std::vector<TinyImage> images;
  for (int i = 0; i < 20; ++i) images.push_back({std::to_string(i) + ".jpg", 32, 24, MakeJpeg(32, 24, 3), kBox});
  WriteCocoTree(dir / "src", "val", images);
  for (const int asked : {1, 3, 7, 15, 20, 25}) {
    SCOPED_TRACE(asked);
    PackOptions o = Options(dir / "src", dir / "out.ffr");
    o.shards = asked;
    o.force = true;
    PackSummary sum;
    const Status s = Pack(o, &sum);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const auto& shards = sum.manifest.splits[0].shards;
    ASSERT_EQ(shards.size(), static_cast<size_t>(std::min(asked, 20)));
    int64_t fewest = 20, most = 0, total = 0;
    for (const ShardInfo& shard : shards) {
      fewest = std::min(fewest, shard.samples);
      most = std::max(most, shard.samples);
      total += shard.samples;
    }
    EXPECT_EQ(total, 20);
    EXPECT_LE(most - fewest, 1);
    EXPECT_GE(fewest, 1);
  }
}

// An Env whose first shard's fsync waits (10 s at most) for the second shard's
// file to be created, and says whether it was.
class FirstSyncWaitsForTheNextShard : public ffr::EnvWrapper {
 public:
  FirstSyncWaitsForTheNextShard() : EnvWrapper(ffr::Env::Default()) {}
  using ffr::Env::NewWritableFile;
  Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<ffr::WritableFile>* out) override {
    if (path.find("PART_00001.ffr") != std::string::npos) {
      std::lock_guard<std::mutex> lock(mu_);
      next_created_ = true;
      cv_.notify_all();
    }
    FFR_RETURN_IF_ERROR(EnvWrapper::NewWritableFile(path, direct, out));
    if (path.find("PART_00000.ffr") != std::string::npos) out->reset(new HeldSync(std::move(*out), this));
    return Status::OK();
  }
  bool synced_after_next_began() const { return synced_after_next_began_; }

 private:
  class HeldSync : public ffr::WritableFile {
   public:
    HeldSync(std::unique_ptr<ffr::WritableFile> inner, FirstSyncWaitsForTheNextShard* env)
        : inner_(std::move(inner)), env_(env) {}
    Status Append(const void* data, size_t n) override { return inner_->Append(data, n); }
    Status WriteAt(uint64_t offset, const void* data, size_t n) override { return inner_->WriteAt(offset, data, n); }
    Status Seek(uint64_t offset) override { return inner_->Seek(offset); }
    Status Close() override { return inner_->Close(); }
    Status Sync() override {
      std::unique_lock<std::mutex> lock(env_->mu_);
      env_->synced_after_next_began_ =
          env_->cv_.wait_for(lock, std::chrono::seconds(10), [&] { return env_->next_created_; });
      return inner_->Sync();
    }

   private:
    std::unique_ptr<ffr::WritableFile> inner_;
    FirstSyncWaitsForTheNextShard* env_;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  bool next_created_ = false;
  bool synced_after_next_began_ = false;
};

// A shard's fsync waits for the device to take the whole shard; the writer
// goes on with the next shard meanwhile instead of leaving the disk idle.
TEST(PackTest, TheNextShardIsWrittenWhileAShardIsSynced) {
  ScratchDir dir("sync_overlap");
  WriteCocoTree(dir / "src", "val", ThreeImages());
  FirstSyncWaitsForTheNextShard env;
  PackOptions o = Options(dir / "src", dir / "out.ffr");
  o.shards = 3;
  o.env = &env;
  PackSummary sum;
  ASSERT_TRUE(Pack(o, &sum).ok());
  EXPECT_TRUE(env.synced_after_next_began()) << "the first shard's fsync held up the second shard";
  EXPECT_EQ(sum.images, 3);
}

TEST(PackTest, ExistingOutputIsRefusedWithoutForce) {
  ScratchDir dir("refuse");
  WriteCocoTree(dir / "src", "val", {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox}});
  PackSummary sum;
  ASSERT_TRUE(Pack(Options(dir / "src", dir / "out.ffr"), &sum).ok());
  Status again = Pack(Options(dir / "src", dir / "out.ffr"), &sum);
  EXPECT_TRUE(again.IsAlreadyExists());
  EXPECT_NE(again.message().find("--force"), std::string::npos);
  fs::create_directories(dir / "other");
  ASSERT_TRUE(WriteStringToFile(dir / "other/notes.txt", "mine"));
  Status other = Pack(Options(dir / "src", dir / "other"), &sum);
  EXPECT_TRUE(other.IsAlreadyExists());
  EXPECT_TRUE(fs::exists(dir / "other/notes.txt"));  // nothing lost
  EXPECT_FALSE(fs::exists(dir / "other/LOCK"));       // and nothing left behind
  // The refusal named what is there and pointed at --force, which then deleted the folder's
  // contents (through a symlink, its target's): --force replaces only a dataset or a pack.
  EXPECT_NE(other.message().find("holds files that are not a packed dataset nor an unfinished pack (notes.txt)"),
            std::string::npos)
      << other.message();
  EXPECT_EQ(other.message().find("--force"), std::string::npos) << other.message();
  fs::create_directory_symlink(dir / "other", dir / "link");
  for (const char* target : {"other", "link"}) {
    PackOptions forced_foreign = Options(dir / "src", dir / target);
    forced_foreign.force = true;
    other = Pack(forced_foreign, &sum);
    EXPECT_TRUE(other.IsAlreadyExists()) << target << ": " << other.ToString();
    EXPECT_TRUE(fs::exists(dir / "other/notes.txt")) << target;
  }
  PackOptions forced = Options(dir / "src", dir / "out.ffr");
  forced.force = true;
  EXPECT_TRUE(Pack(forced, &sum).ok());
}

TEST(PackTest, TwoPacksIntoOneOutputTakeTurns) {
  ScratchDir dir("turns");
  std::vector<TinyImage> files;
  for (int i = 0; i < 24; ++i) files.push_back({std::to_string(i) + ".jpg", 64, 48, MakeJpeg(64, 48, 3), kBox});
  WriteCocoTree(dir / "src", "val", files);
  PackSummary a, b;
  Status sa, sb;
  std::thread first([&] { sa = Pack(Options(dir / "src", dir / "out.ffr"), &a); });
  std::thread second([&] { sb = Pack(Options(dir / "src", dir / "out.ffr"), &b); });
  first.join();
  second.join();
  // One packs; the other waits for it, then finds a complete dataset.
  EXPECT_NE(sa.ok(), sb.ok()) << sa.ToString() << " / " << sb.ToString();
  const Status refused = sa.ok() ? sb : sa;
  EXPECT_TRUE(refused.IsAlreadyExists()) << refused.ToString();
  EXPECT_NE(refused.message().find("complete dataset"), std::string::npos) << refused.ToString();
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(dir / "out.ffr", &d).ok());
  EXPECT_EQ(d->manifest().splits[0].samples, 24);
}

// yolo-pack --force into a dataset a running yolo-train read replaced it, and the run's final
// validation used the new data. A reader holds the dataset's LOCK shared: a pack waits for it,
// saying so, and a dataset a pack is writing is not opened.
TEST(PackTest, APackWaitsForTheProcessesReadingTheDataset) {
  ScratchDir dir("in_use");
  WriteCocoTree(dir / "src", "val", ThreeImages());
  PackSummary sum;
  ASSERT_TRUE(Pack(Options(dir / "src", dir / "out.ffr"), &sum).ok());
  std::unique_ptr<Dataset> reading;
  ASSERT_TRUE(Dataset::Open(dir / "out.ffr", &reading).ok());
  PackOptions again = Options(dir / "src", dir / "out.ffr");
  again.force = true;
  std::atomic<bool> waiting{false}, done{false};
  again.on_message = [&](const std::string& m) { waiting = waiting || m.find("waiting for LOCK") != std::string::npos; };
  Status repacked;
  std::thread pack([&] {
    repacked = Pack(again, &sum);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(waiting.load());
  EXPECT_FALSE(done.load()) << "the pack went on while the dataset was being read";
  reading.reset();
  pack.join();
  EXPECT_TRUE(repacked.ok()) << repacked.ToString();

  std::unique_ptr<ffr::FileLock> packing;
  ASSERT_TRUE(ffr::Env::Default()->LockFile(dir / "out.ffr/LOCK", &packing).ok());
  const Status s = Dataset::Open(dir / "out.ffr", &reading);
  EXPECT_NE(s.message().find("a pack is writing this dataset"), std::string::npos) << s.ToString();
}

// --force empties the output before packing: an output that is, holds or lies
// inside an input would take the input with it, so it is refused even forced.
TEST(PackTest, OutputOverlappingAnInputIsRefusedEvenForced) {
  ScratchDir dir("overlap");
  const std::string src = dir / "data/src";
  WriteCocoTree(src, "val", {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox}});
  fs::create_directories(dir / "yaml");
  ASSERT_TRUE(WriteStringToFile(dir / "yaml/names.yaml", "names: [a]\n"));
  fs::create_symlink(src, dir / "link");
  struct Case {
    std::string source, output, relation, data_yaml = "";
  };
  const Case cases[] = {
      {src, src, "is the source"},
      {src, src + "/", "is the source"},
      {src, src + "/../src", "is the source"},
      {src, dir / "link", "is the source"},
      {dir / "link", src, "is the source"},
      {src, dir / "data", "contains the source"},
      {src, dir.path(), "contains the source"},
      {src, src + "/images/val", "lies inside the source"},
      {src, src + "/out.ffr", "lies inside the source"},
      {dir / "link", src + "/out.ffr", "lies inside the source"},
      {src, dir / "yaml", "contains the data YAML", dir / "yaml/names.yaml"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source + " -> " + c.output);
    PackOptions o = Options(c.source, c.output);
    o.scan.data_yaml = c.data_yaml;
    o.force = true;
    PackSummary sum;
    const Status s = Pack(o, &sum);
    ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
    const std::string output = c.output.back() == '/' ? c.output.substr(0, c.output.size() - 1) : c.output;
    EXPECT_NE(s.message().find("output " + output + " "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.relation + " " + (c.data_yaml.empty() ? c.source : c.data_yaml)),
              std::string::npos)
        << s.message();
    EXPECT_EQ(s.message().find("--force"), std::string::npos) << s.message();
    EXPECT_TRUE(fs::exists(src + "/images/val/a.jpg"));
    EXPECT_TRUE(fs::exists(src + "/annotations/instances_val.json"));
    EXPECT_TRUE(fs::exists(dir / "yaml/names.yaml"));
    EXPECT_FALSE(fs::exists(src + "/out.ffr"));
  }
  // A sibling whose name starts with the source's is apart from it.
  PackOptions sibling = Options(src, src + "2.ffr");
  sibling.force = true;
  PackSummary sum;
  const Status s = Pack(sibling, &sum);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// A split folder that is a link out of the source: the pack wrote its dataset inside the images it read.
TEST(PackTest, OutputInsideASplitFolderReachedThroughALinkIsRefused) {
  ScratchDir dir("split_link");
  const std::string src = dir / "src";
  WriteCocoTree(src, "val", {{"a.jpg", 32, 24, MakeJpeg(32, 24, 3), kBox}});
  fs::rename(src + "/images/val", dir / "real_val");
  fs::create_symlink(dir / "real_val", src + "/images/val");
  PackOptions o = Options(src, dir / "real_val/out.ffr");
  PackSummary sum;
  const Status s = Pack(o, &sum);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("lies inside the image folder of split val"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "real_val/out.ffr"));
}

// A pack killed mid-way leaves no complete-looking dataset; running it again
// resumes after the finished shards and gives the same dataset as a clean run.
// A pack that failed on its last shard, rerun after the labels were fixed:
// its finished shards hold the old labels, so it must not resume.
TEST(PackTest, UnfinishedPackOfOtherLabelsIsNotResumed) {
  ScratchDir dir("relabelled");
  std::vector<TinyImage> images = ThreeImages();
  // A box far outside its image: the pack fails on the third shard.
  images[2].annotations = "\"category_id\":1,\"bbox\":[100,100,5,5],\"area\":25,\"iscrowd\":0";
  WriteCocoTree(dir / "src", "val", images);
  PackOptions o = Options(dir / "src", dir / "out.ffr");
  o.shards = 3;
  PackSummary sum;
  ASSERT_FALSE(Pack(o, &sum).ok());
  ASSERT_TRUE(fs::exists(dir / "out.ffr/val/PART_00000.ffr"));

  images[0].annotations = "\"category_id\":3,\"bbox\":[2,2,10,10],\"area\":100,\"iscrowd\":0";
  images[2].annotations = "\"category_id\":1,\"bbox\":[4,4,5,5],\"area\":25,\"iscrowd\":0";
  WriteCocoTree(dir / "src", "val", images);
  const Status s = Pack(o, &sum);
  ASSERT_TRUE(s.IsAlreadyExists()) << s.ToString();
  EXPECT_NE(s.message().find("unfinished pack"), std::string::npos) << s.message();
  o.force = true;
  ASSERT_TRUE(Pack(o, &sum).ok());
  const LabelIndex idx = LoadIndex(dir / "out.ffr", "val");
  ASSERT_EQ(idx.box_count(0), 1u);
  EXPECT_EQ(idx.boxes(0)[0].class_index, 1);  // car, as the JSON now says
}

TEST(PackCoco128Test, KilledPackLeavesNothingCompleteAndResumes) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ScratchDir dir("killed");
  PackOptions o = Options(coco128, dir / "out.ffr");
  o.shards = 16;
  o.threads = 1;
  o.full_decode = true;  // slow enough to be caught mid-way
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    PackSummary s;
    Pack(o, &s);
    _exit(0);
  }
  const std::string first_shard = dir / "out.ffr/train2017/PART_00001.ffr";
  for (int i = 0; i < 2000 && !fs::exists(first_shard); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the pack finished before it could be killed";
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(dir / "out.ffr", &d).IsNotFound());

  PackSummary resumed;
  Status s = Pack(o, &resumed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(resumed.resumed_shards, 0);
  PackOptions clean = o;
  clean.output = dir / "clean.ffr";
  PackSummary fresh;
  ASSERT_TRUE(Pack(clean, &fresh).ok());
  EXPECT_EQ(resumed.images, fresh.images);
  EXPECT_EQ(resumed.boxes, fresh.boxes);
  EXPECT_EQ(ReadFileToString(dir / "out.ffr/train2017/labels.idx.zst"),
            ReadFileToString(dir / "clean.ffr/train2017/labels.idx.zst"));
  for (int k = 0; k < 16; ++k) {
    char name[32];
    std::snprintf(name, sizeof(name), "/train2017/PART_%05d.ffr", k);
    EXPECT_EQ(ReadFileToString(dir / ("out.ffr" + std::string(name))),
              ReadFileToString(dir / ("clean.ffr" + std::string(name))))
        << name;
  }
}

}  // namespace
}  // namespace ffyolo
