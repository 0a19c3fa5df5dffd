// Loaders for the two COCO JSON files an evaluation needs: the instances file
// (ground truth) and a results file (detections). The trainer feeds the
// evaluator from memory; these serve tools, tests and comparisons with
// pycocotools. Errors name the file, the entry and what is wrong.
#pragma once

#include <string>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/coco_eval.h"

namespace ffyolo {

// Reads "images" (every "id") and "annotations" ("image_id", "category_id",
// "bbox" [x,y,w,h], "area", and "iscrowd", 0 when absent) of an instances file.
ffr::Status LoadCocoGroundTruth(const std::string& instances_json_path, CocoGroundTruth* out);

// Reads a results file: a list of {"image_id", "category_id", "bbox", "score"}.
ffr::Status LoadCocoDetections(const std::string& results_json_path, std::vector<CocoDetection>* out);

}  // namespace ffyolo
