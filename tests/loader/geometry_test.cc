// Augmentation geometry end to end: images whose objects are solid colour
// rectangles on black go through mosaic + random perspective (rotation, shear,
// scale, translation) + flips; every kept box must enclose its object's pixels
// and fit them tightly, and every object left without a box must be one the
// candidate filter drops (thin, or under 10% of its scaled area).
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <filesystem>
#include <opencv2/imgproc.hpp>

#include "ffyolo/dataset.h"
#include "ffyolo/loader.h"
#include "ffyolo/pack.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;

// Class k: a w x h rectangle of colour (BGR).
struct ClassSpec {
  cv::Scalar bgr;
  int w, h;
};
const ClassSpec kClasses[] = {{{0, 0, 255}, 40, 24}, {{0, 255, 0}, 18, 50}, {{255, 0, 0}, 30, 30}};
constexpr int kImageW = 160, kImageH = 120;

std::string EncodeJpeg(const cv::Mat& bgr) {
  tjhandle h = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  tjCompress2(h, bgr.data, bgr.cols, 0, bgr.rows, TJPF_BGR, &buf, &size, TJSAMP_444, 98, 0);
  std::string out(reinterpret_cast<char*>(buf), size);
  tjFree(buf);
  tjDestroy(h);
  return out;
}

// A COCO tree of `n` images, each with one rectangle of every class at random non-overlapping places.
void WriteTree(const std::string& root, int n) {
  fs::create_directories(root + "/annotations");
  fs::create_directories(root + "/train");
  cv::RNG rng(1);
  std::string images, anns;
  int ann = 1;
  for (int i = 0; i < n; ++i) {
    cv::Mat img(kImageH, kImageW, CV_8UC3, cv::Scalar(0, 0, 0));
    std::vector<cv::Rect> placed;
    for (int c = 0; c < 3; ++c) {
      cv::Rect r;
      for (int tries = 0; tries < 100; ++tries) {
        r = cv::Rect(rng.uniform(0, kImageW - kClasses[c].w), rng.uniform(0, kImageH - kClasses[c].h), kClasses[c].w,
                     kClasses[c].h);
        bool free = true;
        for (const cv::Rect& p : placed) free = free && (r & cv::Rect(p.x - 4, p.y - 4, p.width + 8, p.height + 8)).empty();
        if (free) break;
      }
      placed.push_back(r);
      cv::rectangle(img, r, kClasses[c].bgr, cv::FILLED);
      anns += std::string(anns.empty() ? "" : ",") + "{\"id\":" + std::to_string(ann++) +
              ",\"image_id\":" + std::to_string(i + 1) + ",\"category_id\":" + std::to_string(c + 1) +
              ",\"bbox\":[" + std::to_string(r.x) + "," + std::to_string(r.y) + "," + std::to_string(r.width) + "," +
              std::to_string(r.height) + "],\"area\":" + std::to_string(r.area()) + ",\"iscrowd\":0}";
    }
    const std::string name = std::to_string(i + 1) + ".jpg";
    ASSERT_TRUE(testing::WriteStringToFile(root + "/train/" + name, EncodeJpeg(img)));
    images += std::string(images.empty() ? "" : ",") + "{\"id\":" + std::to_string(i + 1) + ",\"file_name\":\"" +
              name + "\",\"width\":" + std::to_string(kImageW) + ",\"height\":" + std::to_string(kImageH) + "}";
  }
  ASSERT_TRUE(testing::WriteStringToFile(
      root + "/annotations/instances_train.json",
      "{\"images\":[" + images + "],\"annotations\":[" + anns +
          "],\"categories\":[{\"id\":1,\"name\":\"red\"},{\"id\":2,\"name\":\"green\"},{\"id\":3,\"name\":\"blue\"}]}"));
}

TEST(AugmentGeometryTest, BoxesFollowTheirObjects) {
  testing::ScratchDir dir("geometry");
  WriteTree(dir / "src", 24);
  PackOptions po;
  po.source = dir / "src";
  po.output = dir / "g.ffr";
  PackSummary ps;
  ASSERT_TRUE(Pack(po, &ps).ok());
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(po.output, &d).ok());

  LoaderOptions o;
  o.img_size = 160;  // load_image keeps the 160-wide images at scale 1
  o.batch_size = 8;
  o.workers = 2;
  o.hyp.hsv_h = o.hyp.hsv_s = o.hyp.hsv_v = 0;  // colours stay recognisable
  o.hyp.degrees = 10;
  o.hyp.shear = 2;
  o.hyp.flipud = 0.5;
  o.hyp.mosaic = 0.8;
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(*d, o, &loader).ok());
  const int tol = 3;
  int kept = 0, unboxed_blobs = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    ASSERT_TRUE(loader->Start(epoch).ok());
    const Batch* b = nullptr;
    while (loader->Next(&b).ok() && b) {
      const int s = b->width;
      const size_t plane = static_cast<size_t>(s) * s;
      for (int i = 0; i < b->size; ++i) {
        const uint8_t* rgb = b->images + 3 * plane * i;
        for (int c = 0; c < 3; ++c) {
          // Pixels of class c's colour (RGB planes; the fill is grey 114, the background black).
          cv::Mat mask(s, s, CV_8UC1, cv::Scalar(0));
          const cv::Scalar want = kClasses[c].bgr;
          for (size_t p = 0; p < plane; ++p) {
            const int r = rgb[p], g = rgb[plane + p], bl = rgb[2 * plane + p];
            const int dist = std::abs(r - static_cast<int>(want[2])) + std::abs(g - static_cast<int>(want[1])) +
                             std::abs(bl - static_cast<int>(want[0]));
            if (dist < 150) mask.data[p] = 255;
          }
          std::vector<cv::Rect> boxes;
          for (size_t t = 0; t < b->num_targets(); ++t) {
            const float* row = &b->targets[6 * t];
            if (static_cast<int>(row[0]) != i || static_cast<int>(row[1]) != c) continue;
            const cv::Rect box(cv::Point(static_cast<int>(std::floor((row[2] - row[4] / 2) * s)),
                                         static_cast<int>(std::floor((row[3] - row[5] / 2) * s))),
                               cv::Point(static_cast<int>(std::ceil((row[2] + row[4] / 2) * s)),
                                         static_cast<int>(std::ceil((row[3] + row[5] / 2) * s))));
            boxes.push_back(box);
            // A rotated object cut by the image border keeps the clipped corner box
            // of its rotated label, which may hold none of its pixels (YOLOv5 does
            // the same): tightness is checked on boxes away from the border.
            if (box.x <= tol || box.y <= tol || box.br().x >= s - tol || box.br().y >= s - tol) continue;
            // Tight: the object's pixels inside the box reach each of its edges.
            cv::Rect grown(box.x - tol, box.y - tol, box.width + 2 * tol, box.height + 2 * tol);
            grown &= cv::Rect(0, 0, s, s);
            std::vector<cv::Point> pts;
            cv::findNonZero(mask(grown), pts);
            ASSERT_FALSE(pts.empty()) << "box of class " << c << " holds no object pixel (epoch " << epoch
                                      << " batch " << b->index << " image " << i << ")";
            const cv::Rect found = cv::boundingRect(pts) + grown.tl();
            EXPECT_LE(std::abs(found.x - box.x), tol + 1) << "class " << c;
            EXPECT_LE(std::abs(found.y - box.y), tol + 1) << "class " << c;
            EXPECT_LE(std::abs(found.br().x - box.br().x), tol + 1) << "class " << c;
            EXPECT_LE(std::abs(found.br().y - box.br().y), tol + 1) << "class " << c;
            ++kept;
          }
          // Every object blob is boxed, unless the candidate filter had to drop it.
          cv::Mat labels, stats, centroids;
          const int nb = cv::connectedComponentsWithStats(mask, labels, stats, centroids, 8);
          for (int k = 1; k < nb; ++k) {
            const cv::Rect blob(stats.at<int>(k, cv::CC_STAT_LEFT), stats.at<int>(k, cv::CC_STAT_TOP),
                                stats.at<int>(k, cv::CC_STAT_WIDTH), stats.at<int>(k, cv::CC_STAT_HEIGHT));
            const int area = stats.at<int>(k, cv::CC_STAT_AREA);
            if (area < 4) continue;  // interpolation specks at seams
            bool covered = false;
            for (const cv::Rect& box : boxes) {
              const cv::Rect grown(box.x - tol, box.y - tol, box.width + 2 * tol, box.height + 2 * tol);
              covered = covered || (blob & grown) == blob;
            }
            if (covered) continue;
            ++unboxed_blobs;
            const double max_scaled_area = kClasses[c].w * kClasses[c].h * 1.5 * 1.5;
            const bool thin = blob.width <= 2 + tol || blob.height <= 2 + tol;
            EXPECT_TRUE(thin || area <= 0.1 * max_scaled_area + 4 * (blob.width + blob.height))
                << "class " << c << " object of " << area << " px at " << blob << " has no box (epoch " << epoch
                << " batch " << b->index << " image " << i << ")";
          }
        }
      }
      loader->Release(b);
    }
  }
  EXPECT_GT(kept, 100);
  RecordProperty("unboxed_blobs", unboxed_blobs);
}

}  // namespace
}  // namespace ffyolo
