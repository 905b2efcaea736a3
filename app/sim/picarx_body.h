// The simulated PiCar-X's body: its dimensions, where its sensors sit, and how a motor
// command moves it for one control cycle (the client runs at 20 Hz, so 0.05 s).
//
// Kinematics: rear wheels driven at v = duty * full_duty_speed each; forward speed is their
// mean. Yaw comes from the front steering (bicycle model, v*tan(delta)/wheelbase; positive
// steering turns right, i.e. clockwise) plus the rear wheels' speed difference, which on a
// steered car only partly turns it (skid factor). The body is a disc for collisions: a move
// that would overlap a wall or obstacle leaves the car where it was (heading still changes,
// a disc can always turn in place) and counts as a collision.
#pragma once

#include "app/sim/arena.h"
#include "app/sim/picarx_motors.h"

namespace fieldbrain::sim {

struct PicarxGeometry {
  double radius = 0.11;  // collision disc (body 0.25 x 0.14 m)
  double wheelbase = 0.10;
  double track = 0.12;               // rear wheel spacing
  double skid = 0.5;                 // share of the differential yaw that turns a steered car
  double full_duty_speed = 0.40;     // m/s at PWM duty 1.0
  double ultrasonic_forward = 0.11;  // sensor ahead of the centre, looking straight ahead
  double ultrasonic_range = 4.0;     // m at reading 1.0 (23200 us echo)
  double gray_forward = 0.08;        // the three grayscale sensors, ahead of the centre...
  double gray_spacing = 0.02;        // ...and this far apart sideways (right, centre, left)
  double dt = 0.05;                  // s per control cycle
};

struct CarState {
  Pose pose;
  double steering_deg = 0.0;
  double pan_deg = 0.0;
};

struct StepOutcome {
  bool collided = false;
  double moved = 0.0;     // metres actually travelled this cycle
  double progress = 0.0;  // signed metres along the heading at the start of the cycle
};

// Advances `car` by one cycle under `cmd` in `arena`.
StepOutcome step_car(const PicarxGeometry& g, const Arena& arena, const MotorCommand& cmd,
                     CarState& car);

// Largest distance one cycle can cover (for normalising the progress reward).
double max_step_distance(const PicarxGeometry& g);

}  // namespace fieldbrain::sim
