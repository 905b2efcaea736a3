#include "app/sim/raster_image.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fieldbrain::sim {

RasterImage::RasterImage(int width, int height, Rgb background) : width_(width), height_(height) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384) {
    throw std::invalid_argument("picture size must be 1..16384 pixels per side");
  }
  pixels_.resize(size_t(width) * size_t(height) * 3);
  for (size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = background.r;
    pixels_[i + 1] = background.g;
    pixels_[i + 2] = background.b;
  }
}

void RasterImage::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  uint8_t* p = &pixels_[(size_t(y) * width_ + x) * 3];
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

Rgb RasterImage::get(int x, int y) const {
  const uint8_t* p = &pixels_[(size_t(y) * width_ + x) * 3];
  return {p[0], p[1], p[2]};
}

void RasterImage::fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
  if (x0 > x1) std::swap(x0, x1);
  if (y0 > y1) std::swap(y0, y1);
  for (int y = std::max(0, y0); y <= std::min(height_ - 1, y1); ++y) {
    for (int x = std::max(0, x0); x <= std::min(width_ - 1, x1); ++x) set(x, y, c);
  }
}

void RasterImage::fill_disc(double cx, double cy, double radius, Rgb c) {
  const int x0 = int(std::floor(cx - radius)), x1 = int(std::ceil(cx + radius));
  const int y0 = int(std::floor(cy - radius)), y1 = int(std::ceil(cy + radius));
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
      if (dx * dx + dy * dy <= radius * radius) set(x, y, c);
    }
  }
}

void RasterImage::line(double x0, double y0, double x1, double y1, double thickness, Rgb c) {
  // Stamps discs along the segment, one per pixel of length: simple and gap-free.
  const double len = std::hypot(x1 - x0, y1 - y0);
  const int steps = std::max(1, int(std::ceil(len)));
  const double r = std::max(0.5, 0.5 * thickness);
  for (int i = 0; i <= steps; ++i) {
    const double t = double(i) / steps;
    fill_disc(x0 + t * (x1 - x0), y0 + t * (y1 - y0), r, c);
  }
}

void write_png(const RasterImage& image, const std::string& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width());
  png.height = static_cast<png_uint_32>(image.height());
  png.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.pixels().data(), image.width() * 3,
                               nullptr)) {
    const std::string why = png.message;
    png_image_free(&png);
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
}

}  // namespace fieldbrain::sim
