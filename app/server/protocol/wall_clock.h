// Wall-clock time as the Python servers stamp their JSON ("timestamp": seconds since the Unix
// epoch, fractional).
#pragma once

#include <chrono>

namespace fieldbrain::server {

inline double epoch_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace fieldbrain::server
