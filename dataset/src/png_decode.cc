#include "ffyolo/png_decode.h"

#include <png.h>

#include <cstdio>
#include <cstring>

namespace ffyolo {

namespace {

// What libpng reads from, and where its error message lands.
struct PngInput {
  const unsigned char* data;
  size_t size;
  size_t at;
  char error[256];
};

void ReadFromMemory(png_structp png, png_bytep out, size_t length) {
  auto* input = static_cast<PngInput*>(png_get_io_ptr(png));
  if (length > input->size - input->at) png_error(png, "the file ends before the image does");
  std::memcpy(out, input->data + input->at, length);
  input->at += length;
}

[[noreturn]] void KeepError(png_structp png, png_const_charp message) {
  auto* input = static_cast<PngInput*>(png_get_error_ptr(png));
  std::snprintf(input->error, sizeof(input->error), "%s", message);
  png_longjmp(png, 1);
}

void IgnoreWarning(png_structp, png_const_charp) {}

// libpng's errors longjmp back to the setjmp here: no object in this frame
// has a destructor that the jump would skip.
bool ReadImage(png_structp png, png_infop info, std::vector<uint8_t>* pixels, std::vector<png_bytep>* rows,
               int* width, int* height) {
  if (setjmp(png_jmpbuf(png)) != 0) return false;
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &w, &h, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  // The transforms cv::imdecode(IMREAD_COLOR) asks for, in its order.
  if (bit_depth == 16) png_set_strip_16(png);
  png_set_strip_alpha(png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if ((color_type & PNG_COLOR_MASK_COLOR) == 0 && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if ((color_type & PNG_COLOR_MASK_COLOR) != 0) {
    png_set_bgr(png);
  } else {
    png_set_gray_to_rgb(png);
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t row_bytes = size_t{w} * 3;
  if (png_get_rowbytes(png, info) != row_bytes) png_error(png, "the transforms do not give 3 bytes a pixel");
  pixels->resize(row_bytes * h);
  rows->resize(h);
  for (png_uint_32 y = 0; y < h; ++y) (*rows)[y] = pixels->data() + row_bytes * y;
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);  // the chunks after the image data, to IEND, with their CRCs
  *width = static_cast<int>(w);
  *height = static_cast<int>(h);
  return true;
}

}  // namespace

ffr::Status DecodePngToBgr(std::string_view bytes, const std::string& where, std::vector<uint8_t>* pixels,
                           int* width, int* height) {
  PngInput input{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, {}};
  // Destroys the read struct however this returns (a failed resize throws).
  struct ReadStruct {
    png_structp png = nullptr;
    png_infop info = nullptr;
    ~ReadStruct() { png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr); }
  } read;
  read.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &input, KeepError, IgnoreWarning);
  if (read.png != nullptr) read.info = png_create_info_struct(read.png);
  if (read.info == nullptr) return ffr::Status::IOError(where + ": cannot start libpng (out of memory)");
  png_set_read_fn(read.png, &input, ReadFromMemory);
  std::vector<png_bytep> rows;
  if (!ReadImage(read.png, read.info, pixels, &rows, width, height))
    return ffr::Status::Corruption(where + ": PNG image data does not decode (libpng: " + input.error + ")");
  return ffr::Status::OK();
}

}  // namespace ffyolo
