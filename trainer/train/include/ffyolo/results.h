// Per-epoch training results: Ultralytics' results.csv (same columns and
// number format) and the results.png plot of losses and metrics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffyolo {

struct EpochResult {
  int64_t epoch = 0;
  double train_box = 0, train_obj = 0, train_cls = 0;
  double precision = 0, recall = 0, map50 = 0, map = 0;
  double val_box = 0, val_obj = 0, val_cls = 0;
  double lr[3] = {0, 0, 0};
};

// The header line and one row in Ultralytics' '%20s' / '%20.5g' format.
std::string ResultsCsvHeader();
std::string ResultsCsvRow(const EpochResult& r);
// Parses a results.csv written by WriteResultsCsv (for resumed runs).
ffr::Status ReadResultsCsv(const std::string& path, std::vector<EpochResult>* rows);
// Rewrites the whole file atomically through `env`.
ffr::Status WriteResultsCsv(const std::string& path, const std::vector<EpochResult>& rows,
                            ffr::Env* env = ffr::Env::Default());

// Ten panels (train losses, precision, recall, val losses, mAP50, mAP50-95)
// over the epochs. PNG when the build has OpenCV imgcodecs, else JPEG beside
// it; either is written atomically through `env`, and *written names the file.
ffr::Status PlotResults(const std::vector<EpochResult>& rows, const std::string& png_path, std::string* written,
                        ffr::Env* env = ffr::Env::Default());

}  // namespace ffyolo
