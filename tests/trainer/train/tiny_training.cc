#include "tiny_training.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ffyolo/image_decoder.h"
#include "ffyolo/pack.h"
#include "testing/test_env.h"

namespace ffyolo::testing {

const std::string& TinyDataset() {
  static std::string path;
  if (!path.empty()) return path;
  const std::string root = testing::BinaryPath("test_scratch/train_data." + std::to_string(::getpid()));
  testing::RemoveTree(root);
  SyntheticOptions so;
  so.output_dir = root + "/src";
  so.train_images = 32;
  so.val_images = 8;
  so.num_classes = 3;
  so.min_size = 96;
  so.max_size = 128;
  so.max_objects = 3;
  so.min_object_fraction = 0.2;
  PackSynthetic(so, root + "/tiny.ffr");
  return path = root + "/tiny.ffr";
}

void PackSynthetic(const SyntheticOptions& so, const std::string& output) {
  SyntheticSummary ss;
  const ffr::Status generated = GenerateSyntheticCoco(so, &ss);
  ASSERT_TRUE(generated.ok()) << generated.ToString();
  PackOptions po;
  po.source = so.output_dir;
  po.output = output;
  PackSummary ps;
  const ffr::Status packed = Pack(po, &ps);
  ASSERT_TRUE(packed.ok()) << packed.ToString();
}

TrainOptions TinyTrainOptions(const std::string& project, int epochs) {
  TrainOptions o;
  o.data = TinyDataset();
  o.cfg = "yolov5n";
  o.img_size = 128;
  o.batch_size = 8;
  o.epochs = epochs;
  o.workers = 2;
  o.threads = 2;
  o.project = project;
  o.noval = true;
  o.device = "cpu";  // the same numbers on a GPU machine
  return o;
}

std::pair<int, int> TrainBatchGridSize(const std::string& save_dir) {
  const std::string jpeg = ReadFileToString(save_dir + "/train_batch0.jpg");
  ImageDecoder decoder;
  cv::Mat img;
  int denominator = 0;
  const ffr::Status s = decoder.Decode(reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), ImageEncoding::kJpeg,
                                       "train_batch0.jpg", DecodeOptions(), &img, &denominator);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return {img.cols, img.rows};
}

}  // namespace ffyolo::testing
