// The sim's two pictures: the arena with every robot's path, and one field slice as a
// heat map. Both only turn data into a RasterImage; write_png saves them.
#pragma once

#include <vector>

#include "app/sim/arena.h"
#include "app/sim/monitor_client.h"
#include "app/sim/raster_image.h"

namespace fieldbrain::sim {

// The arena at `px_per_m` pixels per metre: ceil(W*px_per_m) x ceil(H*px_per_m) pixels,
// y up. Floor light grey, the line dark, walls and obstacles black/grey, each path in its
// own colour from a green start disc to a red end disc.
RasterImage plot_trajectories(const Arena& arena, const std::vector<std::vector<Vec2>>& paths,
                              double px_per_m);

// Pixel size of plot_trajectories' picture along a side of `metres`.
int plot_pixels(double metres, double px_per_m);

// One R x R slice, each cell a `scale` x `scale` block: (R*scale)^2 pixels. Diverging colour
// map normalised by the slice's largest |value|: blue negative, white zero, red positive.
RasterImage plot_field_slice(const FieldSlice& slice, int scale);

}  // namespace fieldbrain::sim
