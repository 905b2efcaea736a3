#include "app/sim/picarx_body.h"

#include <cmath>

namespace fieldbrain::sim {

StepOutcome step_car(const PicarxGeometry& g, const Arena& arena, const MotorCommand& cmd,
                     CarState& car) {
  const double vl = cmd.left_duty * g.full_duty_speed;
  const double vr = cmd.right_duty * g.full_duty_speed;
  const double v = 0.5 * (vl + vr);
  const double delta = -cmd.steering_deg * kPi / 180.0;  // right steer = clockwise
  const double omega = v * std::tan(delta) / g.wheelbase + g.skid * (vr - vl) / g.track;
  const double h0 = car.pose.heading;
  const double h1 = h0 + omega * g.dt;
  // Midpoint heading: exact enough for 0.05 s steps of a few centimetres.
  const Vec2 displacement = unit(0.5 * (h0 + h1)) * (v * g.dt);
  const Vec2 target = car.pose.position + displacement;

  StepOutcome out;
  car.steering_deg = cmd.steering_deg;
  car.pan_deg = cmd.pan_deg;
  car.pose.heading = std::remainder(h1, 2.0 * kPi);
  if (arena.disc_collides(target, g.radius)) {
    out.collided = true;
    return out;
  }
  car.pose.position = target;
  out.moved = length(displacement);
  out.progress = dot(displacement, unit(h0));
  return out;
}

double max_step_distance(const PicarxGeometry& g) {
  return kMaxSpeedDuty * g.full_duty_speed * g.dt;
}

}  // namespace fieldbrain::sim
