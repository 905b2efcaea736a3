// field_step_out allocates nothing in steady state (after the first call has grown the
// per-thread scratch), counted with a wrapper around c10's CPU allocator.
#include "test/support/catch.h"

#include "brain/ops/allocation_counter.h"
#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"

TEST_CASE("field_step_out makes no tensor allocation in steady state", "[ops]") {
  const int64_t B = GENERATE(1, 3);
  const int64_t R = GENERATE(16, 32);
  CAPTURE(B, R);
  auto in = fieldbrain::ops::make_field_step_inputs(B, R, 5, 1.0, -1);
  auto out = torch::empty_like(in.field);
  fieldbrain::ops::field_step_out(in.field, in.noise, in.wave, in.ef, in.scalars, out);  // warm-up

  fieldbrain::ops::AllocationCounter counter;
  {  // the counter does see allocations: a positive control
    auto probe = torch::empty({4});
    REQUIRE(counter.count() == 1);
  }
  counter.reset();
  for (int i = 0; i < 5; ++i) {
    fieldbrain::ops::field_step_out(in.field, in.noise, in.wave, in.ef, in.scalars, out);
  }
  CHECK(counter.count() == 0);

  // The functional form allocates exactly its result.
  counter.reset();
  auto result = fieldbrain::ops::field_step(in.field, in.noise, in.wave, in.ef, in.scalars);
  CHECK(counter.count() == 1);
  CHECK(torch::equal(result, out));
}
