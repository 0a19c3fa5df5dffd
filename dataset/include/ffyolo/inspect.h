// Inspection of a packed dataset, for `yolo-ffr`: statistics from the label
// indexes (info), a full integrity check (verify), and single samples read
// back as text, images and labels (ls, cat, extract). Everything here works
// on a Dataset; the tool only parses flags and prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ffr/read_buffer.h"
#include "ffr/reader.h"
#include "ffyolo/dataset.h"
#include "ffyolo/label_index.h"
#include "ffyolo/record.h"

namespace ffyolo {

// ---- info

// The smallest, median and largest of a set of values (all 0 when it is empty).
struct Spread {
  double min = 0, median = 0, max = 0;
};

// How often one class occurs in a split.
struct ClassCount {
  std::string name;
  int category_id = 0;
  int64_t boxes = 0;   // crowd boxes included
  int64_t images = 0;  // images with at least one such box
};

// What a split holds, counted from its label index, with the shard count,
// bytes and skipped images from the manifest. No image is read, so this is
// quick even for COCO-sized splits.
struct SplitStats {
  std::string name;
  int64_t samples = 0, boxes = 0, crowd_boxes = 0, background = 0, skipped = 0;
  int64_t exif_oriented = -1;       // images with an EXIF orientation but 1; -1: not recorded (manifest.h)
  bool exif_applied = false;        // those images trained and shown as viewed (manifest.h)
  size_t shards = 0;
  uint64_t bytes = 0;
  std::vector<ClassCount> classes;  // by class index
  Spread width, height;             // image size in pixels
  Spread aspect;                    // image width / height
  double mean_boxes = 0;            // boxes per image
  Spread box_width, box_height;     // box size in pixels, crowd boxes included
};

Status ComputeSplitStats(const Dataset& dataset, const std::string& split, SplitStats* out);
// The text report of one split: totals, size statistics and the class table
// (most frequent class first, classes without boxes named at the end).
std::string FormatSplitStats(const SplitStats& stats);
// The dataset and its splits as one JSON document (every class listed).
std::string SplitStatsToJson(const Dataset& dataset, const std::vector<SplitStats>& splits);

// ---- verify

struct VerifyOptions {
  std::vector<std::string> splits;  // empty: every split
  int workers = 0;                  // checking threads; 0: one per CPU
  bool check_images = true;         // check each image's header and end marker
  bool full_decode = false;         // and decode JPEGs fully
  size_t batch_size = 32;           // samples per batched read
  // Samples checked so far out of all samples of the checked splits. Called
  // from the checking threads, one at a time.
  std::function<void(int64_t done, int64_t total)> on_progress;
};

// One thing wrong with a dataset.
struct VerifyProblem {
  std::string split;
  std::string file;     // the shard or label index (in the split directory), or the manifest
  int64_t sample = -1;  // the sample's index in the split; -1 when a whole file is wrong
  std::string image;    // the image's file name, when known
  std::string message;  // names all of the above and says what is wrong
};

struct VerifyReport {
  int64_t expected_samples = 0;  // what the manifest lists for the checked splits
  int64_t samples = 0;           // samples read and checksummed
  int64_t images = 0;            // image headers checked
  uint64_t bytes = 0;            // sample bytes read
  int64_t shards = 0;            // shards whose header checked
  std::vector<VerifyProblem> problems;  // by split, then sample
  bool ok() const { return problems.empty(); }
};

// Checks every byte of a packed dataset: each shard's size, header and meta
// CRC, each sample's CRC, that each record parses, agrees with its label index
// entry and has valid boxes, that each image's header reads (and with
// full_decode that it decodes), and that the sample counts agree with the
// manifest. Reads go in batches through the Reader on `workers` threads.
// A broken shard is reported and the others are still checked. Returns a
// failed Status only when nothing can be checked (no manifest, unknown
// split); every problem found lands in report->problems.
Status VerifyDataset(const std::string& path, const VerifyOptions& options, VerifyReport* report);

// ---- ls, cat, extract

// One line about sample `i` of a label index: index, image id, file name,
// WxH, encoding, image bytes, box count.
std::string FormatIndexEntry(const LabelIndex& index, size_t i);

// The index of the sample whose COCO image id is `image_id`, from the split's label index.
Status FindSampleByImageId(const Dataset& dataset, const std::string& split, int64_t image_id, int64_t* index);

// Reads and parses sample `index`; *out points into `buffer`.
Status ReadRecord(const ffr::Reader& reader, int64_t index, ffr::ReadBuffer* buffer, RecordView* out);

// The frame a record's boxes are in, and the loader decodes its image to, which cat and extract report it in:
// `viewed` (as cv2.imread shows the image) where the split applies EXIF orientations (`exif_applied`,
// yolo-pack's default) or the record's orientation does not turn the image; else the stored pixels, which
// cv2.imread shows turned.
struct RecordFrame {
  uint32_t width = 0, height = 0;
  bool viewed = true;
};
RecordFrame FrameOf(const RecordView& record, bool exif_applied);

// A record's metadata and boxes as text: its size in its frame (FrameOf: which one is said where the orientation
// turns the image), class name, cx cy w h normalized and in the frame's pixels, area and iscrowd per box.
std::string FormatRecord(const Manifest& manifest, int64_t index, const RecordView& record, bool exif_applied);
// The record's boxes as a YOLO label file: "cls cx cy w h" per non-crowd box.
std::string YoloLabelText(const RecordView& record);
// The record's metadata (boxes included, not the image) as JSON: "width" and "height" of its frame, "frame"
// ("viewed": as cv2.imread shows the image; "stored": the stored pixels, its orientation not applied),
// "exif_orientation" (as recorded, 0 where not) and "stored_width" and "stored_height".
std::string RecordMetadataJson(const Manifest& manifest, int64_t index, const RecordView& record, bool exif_applied);

// The files ExtractRecord writes for a record into `dir`: the image under the base name of its
// file name, then <stem>.txt and <stem>.json. Corruption for a name that cannot be a file's.
Status ExtractedPaths(const RecordView& record, int64_t index, const std::string& dir, std::vector<std::string>* paths);

// Writes into `dir` the record's image bytes untouched under the base name of
// its file name, its YOLO labels (<stem>.txt) and its metadata (<stem>.json,
// RecordMetadataJson). *image_path receives the image's path. A file that is
// there already is replaced only with `replace`; otherwise nothing is written
// and AlreadyExists names it (it may be the user's own label file).
Status ExtractRecord(const Manifest& manifest, int64_t index, const RecordView& record, bool exif_applied,
                     const std::string& dir, bool replace, std::string* image_path);

// Checks, before anything is written, that extracting these records (their ExtractedPaths, in
// order) into one folder writes no file twice and, unless `replace`, replaces none already there.
Status CheckExtractable(const std::vector<std::pair<int64_t, std::vector<std::string>>>& samples, bool replace);

}  // namespace ffyolo
