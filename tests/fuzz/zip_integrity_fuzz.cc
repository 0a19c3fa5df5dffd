// CheckZipIntegrity (the checkpoint check) on any bytes.
#include "zip_integrity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffyolo::CheckZipIntegrity(data, size, "fuzz");
  return 0;
}
