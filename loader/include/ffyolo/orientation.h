// EXIF orientation (exif.h) applied to decoded pixels: the stored image turned and mirrored as
// viewers show it, exactly as cv::imread(path, IMREAD_COLOR) does (a lossless transpose and flips),
// and regions of the view mapped to the stored pixels they come from, so that a region decode
// reads only what it needs.
#pragma once

#include <opencv2/core.hpp>

#include "ffyolo/exif.h"  // OrientationTurns

namespace ffyolo {

// The orientation that turns a viewed image back to its stored pixels (6 and 8 undo each other; the
// others undo themselves).
int InverseOrientation(int orientation);

// The viewed size of a stored image of this size (the sides swapped for orientations 5 to 8).
cv::Size ViewedSize(cv::Size stored, int orientation);

// The stored pixels a viewed region shows, and the viewed region a stored one becomes.
cv::Rect StoredRegion(const cv::Rect& viewed, cv::Size stored, int orientation);
cv::Rect ViewedRegion(const cv::Rect& stored, cv::Size stored_size, int orientation);

// `stored` as viewed, into *viewed: written in place where it is already of the viewed size and
// type (a region of a larger image, say), else allocated.
void OrientImage(const cv::Mat& stored, int orientation, cv::Mat* viewed);

}  // namespace ffyolo
