// An 8-bit RGB picture with the few drawing primitives the sim's plots need (filled
// rectangles and discs, thick lines). Pixel (0, 0) is the top-left corner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fieldbrain::sim {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

class RasterImage {
 public:
  RasterImage(int width, int height, Rgb background);

  int width() const { return width_; }
  int height() const { return height_; }
  const std::vector<uint8_t>& pixels() const { return pixels_; }  // RGBRGB..., row-major

  void set(int x, int y, Rgb c);  // ignores points outside the picture
  Rgb get(int x, int y) const;
  void fill_rect(int x0, int y0, int x1, int y1, Rgb c);  // inclusive corners, any order
  void fill_disc(double cx, double cy, double radius, Rgb c);
  void line(double x0, double y0, double x1, double y1, double thickness, Rgb c);

 private:
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// Writes `image` as an 8-bit RGB PNG with libpng; throws std::runtime_error on failure.
void write_png(const RasterImage& image, const std::string& path);

}  // namespace fieldbrain::sim
