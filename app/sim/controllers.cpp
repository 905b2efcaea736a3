#include "app/sim/controllers.h"

#include <stdexcept>

namespace fieldbrain::sim {

ControllerKind parse_controller(const std::string& text) {
  if (text == "brain") return ControllerKind::Brain;
  if (text == "random") return ControllerKind::Random;
  if (text == "forward") return ControllerKind::Forward;
  throw std::invalid_argument("controller must be brain, random or forward, not '" + text + "'");
}

const char* controller_name(ControllerKind kind) {
  switch (kind) {
    case ControllerKind::Brain:
      return "brain";
    case ControllerKind::Random:
      return "random";
    case ControllerKind::Forward:
      return "forward";
  }
  return "?";
}

std::vector<float> RandomController::decide(const std::vector<float>&, std::optional<float>) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> m(6);
  for (auto& v : m) v = u(rng_);
  return m;
}

}  // namespace fieldbrain::sim
