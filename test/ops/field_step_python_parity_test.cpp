// The fused operator, loaded into Python with torch.ops.load_library, against the Python
// reference's field_step (scripts/ops/field_step_parity.py, run at test time), once with the
// widest instruction-set variant of the CPU kernel and once with each narrower one.
#include "test/support/catch.h"

#include <cstdio>
#include <string>

namespace {

struct Run {
  std::string output;
  int status;
};

Run run(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Run r;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) r.output += buf;
  r.status = pclose(pipe);
  return r;
}

}  // namespace

TEST_CASE("the operator loaded in Python matches the Python reference's field step",
          "[parity][ops]") {
  const std::string script = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                             "/scripts/ops/field_step_parity.py " + FIELDBRAIN_OPS_LIBRARY;
  SECTION("widest variant, all cases") {
    const Run r = run(script + " 2>&1");
    INFO(script << "\n" << r.output);
    CHECK(r.output.find("chained steps") != std::string::npos);
    CHECK(r.status == 0);
  }
  SECTION("thin slabs: many slab boundaries inside each robot") {
    // A 64 KiB scratch budget cuts every robot into 2-plane slabs (halo recomputation).
    const std::string cmd = "FIELDBRAIN_OPS_SCRATCH_KIB=64 " + script + " --quick 2>&1";
    const Run r = run(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.output.find("chained steps") != std::string::npos);
    CHECK(r.status == 0);
  }
  SECTION("narrower variants, quick cases") {
    for (const char* isa : {"avx2", "default"}) {
      const std::string cmd = std::string("FIELDBRAIN_ISA=") + isa + " " + script + " --quick 2>&1";
      const Run r = run(cmd);
      INFO(cmd << "\n" << r.output);
      CHECK(r.output.find("chained steps") != std::string::npos);
      CHECK(r.status == 0);
    }
  }
}
