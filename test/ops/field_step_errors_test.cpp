// Bad arguments are refused with a message naming the argument, never a crash.
#include "test/support/catch.h"

#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"

using fieldbrain::ops::field_step;
using Catch::Contains;

TEST_CASE("field_step refuses malformed arguments with a clear message", "[ops]") {
  auto in = fieldbrain::ops::make_field_step_inputs(2, 8, 9);
  SECTION("field of the wrong rank") {
    CHECK_THROWS_WITH(field_step(in.field[0], in.noise, in.wave, in.ef, in.scalars),
                      Contains("field must have shape [B,64,R,R,R]"));
  }
  SECTION("noise of the wrong shape") {
    CHECK_THROWS_WITH(field_step(in.field, in.noise.slice(1, 0, 47), in.wave, in.ef, in.scalars),
                      Contains("noise must have shape"));
  }
  SECTION("batch mismatch in the scalars") {
    CHECK_THROWS_WITH(field_step(in.field, in.noise, in.wave, in.ef, in.scalars.slice(0, 0, 1)),
                      Contains("scalars must have shape"));
  }
  SECTION("double precision") {
    CHECK_THROWS_WITH(field_step(in.field, in.noise, in.wave.to(torch::kDouble), in.ef, in.scalars),
                      Contains("wave must be float32"));
  }
  SECTION("out aliasing the field") {
    CHECK_THROWS_WITH(
        fieldbrain::ops::field_step_out(in.field, in.noise, in.wave, in.ef, in.scalars, in.field),
        Contains("overlap"));
  }
}

TEST_CASE("field_step accepts non-contiguous inputs and resizes a wrong out", "[ops]") {
  auto in = fieldbrain::ops::make_field_step_inputs(2, 8, 10);
  const auto expected = field_step(in.field, in.noise, in.wave, in.ef, in.scalars);
  // The same values through a transposed view: copied, same result.
  const auto wave_t = in.wave.transpose(1, 3).contiguous().transpose(1, 3);
  REQUIRE_FALSE(wave_t.is_contiguous());
  CHECK(torch::equal(field_step(in.field, in.noise, wave_t, in.ef, in.scalars), expected));
  auto out = torch::empty({3});
  fieldbrain::ops::field_step_out(in.field, in.noise, in.wave, in.ef, in.scalars, out);
  CHECK(torch::equal(out, expected));
}
