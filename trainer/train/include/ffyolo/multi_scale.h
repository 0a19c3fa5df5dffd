// Multi-scale training (train.py --multi-scale): each batch trains at a random
// size between 0.5 and 1.5 times --img, a multiple of the grid stride, its
// images resized on the device; the targets, normalized, stay as they are.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ffyolo {

// The size of training iteration `ni` (= batch + nb * epoch): v7.0's
// random.randrange(imgsz * 0.5, imgsz * 1.5 + gs) // gs * gs for an
// img_size that is a multiple of gs. Drawn from (seed, ni) rather than from a
// generator's running state, so that every rank trains a step at the same
// size and a resumed run at the sizes the uninterrupted one would have.
int MultiScaleSize(int img_size, int gs, uint64_t seed, int64_t ni);

// The batch (N, C, H, W) resized as train.py does for `size`: by the factor
// size / max(H, W), each side rounded up to a multiple of gs, with bilinear
// interpolation (align_corners false). `images` itself when the factor is 1.
at::Tensor MultiScaleResize(const at::Tensor& images, int size, int gs);

}  // namespace ffyolo
