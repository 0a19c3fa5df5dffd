// YOLOv5's random_perspective: one random transform M = T*S*R*P*C applied to
// the image (warpAffine, or warpPerspective when perspective != 0; bilinear,
// border 114) and to the boxes (4 corners, min/max, clip, box_candidates).
#pragma once

#include <opencv2/core.hpp>
#include <vector>

#include "ffyolo/augmentation.h"
#include "ffyolo/boxes.h"
#include "ffyolo/random.h"

namespace ffyolo {

struct PerspectiveHyp {
  double degrees = 0, translate = 0.1, scale = 0.5, shear = 0, perspective = 0;
};

// Draws M for an input of in_w x in_h whose output is out_w x out_h (the
// mosaic passes its 2s x 2s canvas and s x s): C centres the input, P, R
// (angle, scale), S (shear), T (translation of the output centre), drawn in
// YOLOv5's order. *scale receives the drawn s, which TransformBoxes needs: it
// cannot be recovered exactly from M once shear or perspective are mixed in.
// Ultralytics 8 draws the same, in the same order, but builds the five
// matrices and their product in float32 (np.eye(3, dtype=np.float32)); M
// then holds those float32 values (OpenCV's warp reads them as doubles).
cv::Matx33d DrawPerspective(SampleRandom* rng, const PerspectiveHyp& hyp, int in_w, int in_h, int out_w, int out_h,
                            double* scale, Augmentation mode = Augmentation::kYolov5);

// True when M is affine (last row 0 0 1): warpAffine applies.
bool IsAffine(const cv::Matx33d& m);

// Warps `src` with M into `dst` (already out_h x out_w CV_8UC3; may be a view).
void WarpImage(const cv::Mat& src, const cv::Matx33d& m, cv::Mat* dst);

// Moves the boxes with M: corners transformed (divided by the homogeneous
// coordinate when not affine), min/max, clipped to [0, out_w] x [0, out_h];
// then keeps, in order, those box_candidates accepts against the originals
// scaled by `scale` (DrawPerspective's s): w2 > 2, h2 > 2, area ratio > 0.10,
// aspect < 100. YOLOv5 moves the corners in float64; Ultralytics 8 in
// float32 (its boxes' dtype), box_candidates included.
void TransformBoxes(const cv::Matx33d& m, double scale, int out_w, int out_h, std::vector<PixelBox>* boxes,
                    Augmentation mode = Augmentation::kYolov5);

// box_candidates(box1 = before, box2 = after, wh_thr=2, ar_thr=100, area_thr=0.1, eps=1e-16).
bool BoxCandidate(const PixelBox& before, const PixelBox& after, double wh_thr = 2, double ar_thr = 100,
                  double area_thr = 0.1);

}  // namespace ffyolo
