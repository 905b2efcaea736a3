#include "app/sim/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace fieldbrain::sim {

ProgressLine::ProgressLine(std::vector<const LiveCounters*> robots, long long target)
    : robots_(std::move(robots)),
      target_(target),
      tty_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressLine::tick(bool final) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (!final && since < (tty_ ? 0.5 : 5.0)) return;
  last_ = now;
  long long cycles = 0, collisions = 0, dist = 0, motor = 0, samples = 0, reconnecting = 0;
  for (const LiveCounters* r : robots_) {
    cycles += r->cycles.load();
    collisions += r->collisions.load();
    dist += r->distance_um.load();
    motor += r->abs_motor_micro.load();
    samples += r->motor_samples.load();
    reconnecting += r->reconnecting.load();
  }
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  char line[320];
  int n = std::snprintf(line, sizeof line,
                        "[sim] cycles %lld/%lld (%3.0f%%)  %.1f cycles/s  collisions %lld  "
                        "distance %.2f m  mean|motor| %.3f",
                        cycles, target_, target_ ? 100.0 * cycles / target_ : 0.0,
                        elapsed > 0 ? cycles / elapsed : 0.0, collisions, dist * 1e-6,
                        samples ? motor * 1e-6 / samples : 0.0);
  if (reconnecting > 0 && n > 0 && size_t(n) < sizeof line) {
    std::snprintf(line + n, sizeof line - n, "  reconnecting %lld", reconnecting);
  }
  if (tty_) {
    std::fprintf(stderr, "\r%s\x1b[K%s", line, final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

}  // namespace fieldbrain::sim
