// RecordView::Parse on any bytes: a Status, never a crash or a read out of bounds.
#include "ffyolo/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffyolo::RecordView view;
  if (ffyolo::RecordView::Parse(data, size, "fuzz", &view).ok()) {
    for (size_t i = 0; i < view.box_count(); ++i) view.box(i);
    volatile uint8_t sink = view.image_size() > 0 ? view.image_data()[view.image_size() - 1] : 0;
    (void)sink;
  }
  return 0;
}
