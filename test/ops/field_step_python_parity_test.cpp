// The fused operator, loaded into Python with torch.ops.load_library, against the Python
// reference's field_step (scripts/ops/field_step_parity.py, run at test time).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

TEST_CASE("the operator loaded in Python matches the Python reference's field step",
          "[parity][ops]") {
  const std::string cmd = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                          "/scripts/ops/field_step_parity.py " + FIELDBRAIN_OPS_LIBRARY +
                          " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  const int status = pclose(pipe);
  INFO(cmd << "\n" << output);
  CHECK(output.find("chained steps") != std::string::npos);
  CHECK(status == 0);
}
