// test/crash_report.cpp, linked into every suite: a test that dies of a signal leaves the stack
// it died with in the test's output (what a GPU machine without a debugger gives back). Checked
// on this suite's own executable, run again as a child on a hidden test case that faults.
#include <sys/resource.h>

#include <filesystem>
#include <string>

#include "test/support/catch.h"
#include "test/support/child_process.h"
#include "test/support/files.h"
#include "test/server/fresh_dir.h"

namespace {

int* volatile no_object = nullptr;

// noinline and a name nothing else has: the report must name the function that faulted.
[[gnu::noinline]] int crash_report_demo_fault() { return *no_object; }

}  // namespace

TEST_CASE("A hidden test that reads through a null pointer (run by the crash report test)",
          "[.crash-report-demo]") {
  const rlimit no_core{0, 0};  // the fault is wanted: no core file left behind
  ::setrlimit(RLIMIT_CORE, &no_core);
  CHECK(crash_report_demo_fault() == 0);
}

TEST_CASE("A test that dies of a signal prints the stack it died with", "[operator][crash]") {
  const auto dir = fieldbrain::server::testing::fresh_dir("crash-report");
  const std::string log = (dir / "child.log").string();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  fieldbrain::test::ChildProcess child({self, "[crash-report-demo]"}, log);
  REQUIRE(child.pid > 0);
  const int status = child.wait_exit(60);
  const std::string output = fieldbrain::test::file_text(log);
  std::filesystem::remove_all(dir);
  INFO(output);
  CHECK(status == 128 + SIGSEGV);  // the signal's own exit status, as without the report
  CHECK(output.find("SIGSEGV") != std::string::npos);  // Catch2's line with the test's name
  const auto report = output.find("fieldbrain tests: fatal signal 11");
  REQUIRE(report != std::string::npos);
  const auto fault = output.find("crash_report_demo_fault", report);
  CHECK(fault != std::string::npos);  // innermost frames: the handler, the trampoline, the fault
  CHECK(output.find("main", fault) != std::string::npos);
  CHECK(output.find("fieldbrain tests: end of stack", report) != std::string::npos);
}
