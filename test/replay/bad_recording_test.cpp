// `fieldbrain replay` on recordings it must refuse (issue 24 item 6): each bad header or
// setting exits 2 with one line naming the file and the field, before anything large is
// allocated. The command runs as a child process under an address-space limit, so a reader
// that trusted a header would fail here instead of taking the machine's memory.
#include <sys/wait.h>
#include <unistd.h>

#include "test/support/catch.h"
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

using Catch::Contains;
namespace fs = std::filesystem;

namespace {

constexpr int kRows = 4, kS = 3, kM = 2;

// A .npy file as the recorder writes it (format 1.0, header padded to 64 bytes) whose header
// says `shape` and which holds `floats` values.
std::string npy(const std::string& shape, size_t floats, const std::string& descr = "<f4") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  for (size_t i = 0; i < floats; ++i) {
    const float v = 0.01f * float(i % 50);
    out.append(reinterpret_cast<const char*>(&v), 4);
  }
  return out;
}

nlohmann::json good_session() {
  return {{"format", "fieldbrain-recording-1"},
          {"robot_key", "bad-recording"},
          {"key_hash", "1234567890123"},
          {"sensory_dim", kS},
          {"motor_dim", kM},
          {"brain",
           {{"sensory_dim", kS},
            {"motor_dim", kM},
            {"resolution", 8},
            {"attractor_capacity", 2},
            {"seed", 3},
            {"field_step", "reference"}}},
          {"start_cycle", 0},
          {"cycles", kRows},
          {"dropped", 0},
          {"truncated", false},
          {"complete", true}};
}

// A recording folder: a valid one, with whatever the test replaces.
struct RecordingFiles {
  nlohmann::json session = good_session();
  std::string session_text;  // when set, written instead of `session`
  std::string sensors = npy("(4, 3)", kRows* kS);
  std::string reward = npy("(4,)", kRows);
  std::string motors = npy("(4, 2)", kRows* kM);

  fs::path write(const std::string& name) const {
    const fs::path dir = fs::temp_directory_path() /
                         ("fieldbrain-bad-recording-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "session.json") << (session_text.empty() ? session.dump(2) : session_text);
    std::ofstream(dir / "sensors.npy", std::ios::binary) << sensors;
    std::ofstream(dir / "reward.npy", std::ios::binary) << reward;
    std::ofstream(dir / "motors.npy", std::ios::binary) << motors;
    return dir;
  }
};

struct Run {
  int status = -1;  // exit status, or 128 + signal
  std::string output;
};

// `fieldbrain replay DIR ARGS` limited to 3 GiB of address space: LibTorch maps about 1 GiB,
// so a 2 GB allocation fails (a trusting reader exits with "std::bad_alloc"), while a
// refusal made before allocating passes unharmed.
Run replay(const fs::path& dir, const std::string& args = "") {
  const std::string cmd = "ulimit -v 3145728; exec '" FIELDBRAIN_EXE "' replay '" + dir.string() +
                          "' " + args + " 2>&1";
  Run r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  fs::remove_all(dir);
  return r;
}

// Refused: exit 2, one "fieldbrain replay: <file>: ..." line naming `field`, no stack trace.
void check_refused(const Run& r, const std::string& file, const std::string& field) {
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output,
             Contains("fieldbrain replay: ") && Contains("/" + file + ": ") && Contains(field));
  CHECK_THAT(r.output, !Contains("Exception raised from") && !Contains("bad_alloc") &&
                           !Contains("stoll") && !Contains("stoull"));
}

}  // namespace

TEST_CASE(
    "replay refuses a .npy header that claims more rows than the file holds, before "
    "allocating them",
    "[replay]") {
  RecordingFiles f;
  SECTION("sensors") {
    f.sensors = npy("(20000000, 3)", 4800);  // 19 KB claiming 240 MB
    check_refused(replay(f.write("rows")), "sensors.npy", "'shape' (20000000, 3)");
  }
  SECTION("a 2 GB claim") {
    f.sensors = npy("(20000000, 24)", 4800);
    f.session["sensory_dim"] = 24;
    f.session["brain"]["sensory_dim"] = 24;
    check_refused(replay(f.write("rows2g")), "sensors.npy", "'shape' (20000000, 24)");
  }
  SECTION("a scalar without its value") {  // found by fuzz-smoke-npy
    f.reward = npy("()", 0);
    check_refused(replay(f.write("scalar")), "reward.npy", "'shape' () claims");
  }
  SECTION("one value short") {
    f.motors = npy("(4, 2)", kRows * kM - 1);
    check_refused(replay(f.write("short")), "motors.npy", "'shape' (4, 2)");
  }
}

TEST_CASE("replay refuses a .npy header of 2^62 rows instead of replaying zeros", "[replay]") {
  RecordingFiles f;
  SECTION("motors") {
    f.motors = npy("(4611686018427387904, 2)", kRows * kM);
    check_refused(replay(f.write("huge")), "motors.npy", "'shape' (4611686018427387904, 2)");
  }
  SECTION("rows times columns wrap to zero") {
    f.sensors = npy("(4611686018427387904, 4)", kRows * kS);
    f.session["sensory_dim"] = 4;
    f.session["brain"]["sensory_dim"] = 4;
    check_refused(replay(f.write("wrap")), "sensors.npy", "'shape' (4611686018427387904, 4)");
  }
  SECTION("a dimension over 2^63") {
    f.reward = npy("(99999999999999999999,)", kRows);
    check_refused(replay(f.write("over")), "reward.npy", "'shape'");
  }
}

TEST_CASE("replay refuses a negative dimension in a .npy header", "[replay]") {
  RecordingFiles f;
  f.sensors = npy("(-4, 3)", kRows * kS);
  check_refused(replay(f.write("negative")), "sensors.npy", "'shape' has a negative dimension");
}

TEST_CASE("replay names the file and field of a non-numeric value", "[replay]") {
  RecordingFiles f;
  SECTION("a .npy dimension") {
    f.sensors = npy("(four, 3)", kRows * kS);
    check_refused(replay(f.write("nan-dim")), "sensors.npy", "'shape' has 'four'");
  }
  SECTION("a .npy dtype") {
    f.reward = npy("(4,)", 2 * kRows, "<f8");
    check_refused(replay(f.write("f8")), "reward.npy", "'descr'");
  }
  SECTION("key_hash") {
    f.session["key_hash"] = "12ab";
    check_refused(replay(f.write("key-hash")), "session.json", "\"key_hash\"");
  }
  SECTION("key_hash over 64 bits") {
    f.session["key_hash"] = "99999999999999999999999";
    check_refused(replay(f.write("key-hash-big")), "session.json", "\"key_hash\"");
  }
  SECTION("sensory_dim") {
    f.session["sensory_dim"] = "3";
    check_refused(replay(f.write("s-string")), "session.json", "\"sensory_dim\"");
  }
  SECTION("start_cycle") {
    f.session["start_cycle"] = "zero";
    check_refused(replay(f.write("start")), "session.json", "\"start_cycle\"");
  }
  SECTION("a brain setting") {
    f.session["brain"]["resolution"] = "eight";
    check_refused(replay(f.write("r-string")), "session.json", "'brain.resolution'");
  }
  SECTION("not JSON") {
    f.session_text = "{\"robot_key\": ";
    check_refused(replay(f.write("not-json")), "session.json", "not valid JSON");
  }
}

TEST_CASE("replay bounds session.json's brain settings as the server's config does", "[replay]") {
  RecordingFiles f;
  SECTION("resolution below the server's range") {
    f.session["brain"]["resolution"] = 4;
    check_refused(replay(f.write("r4")), "session.json", "'brain.resolution' = 4 is out of range");
  }
  SECTION("attractor_capacity above it") {
    f.session["brain"]["attractor_capacity"] = 100000;
    check_refused(replay(f.write("a-big")), "session.json", "'brain.attractor_capacity' = 100000");
  }
  SECTION("S above the server's max_dim") {
    f.session["sensory_dim"] = 5000;
    f.session["brain"]["sensory_dim"] = 5000;
    check_refused(replay(f.write("s-big")), "session.json", "'brain.sensory_dim' = 5000");
  }
  SECTION("S that differs from the brain's") {
    f.session["sensory_dim"] = 5;
    check_refused(replay(f.write("s-differs")), "session.json", "\"sensory_dim\" = 5");
  }
  SECTION("R = 128 with 256 attractors: more memory than there is") {
    f.session["brain"]["resolution"] = 128;
    f.session["brain"]["attractor_capacity"] = 256;
    check_refused(replay(f.write("r128")), "session.json",
                  "resolution = 128 with attractor_capacity = 256");
  }
  SECTION("negative dropped") {
    f.session["dropped"] = -1;
    check_refused(replay(f.write("dropped")), "session.json", "\"dropped\" = -1");
  }
}

TEST_CASE("replay does not load a field_step file that session.json names", "[replay]") {
  RecordingFiles f;
  const std::string step = FIELDBRAIN_SOURCE_DIR "/models/field_step.pt";
  REQUIRE(fs::exists(step));
  f.session["brain"]["field_step"] = step;
  SECTION("refused") { check_refused(replay(f.write("step-file")), "session.json", "field_step"); }
  SECTION("unless the command line names the step") {
    const Run r = replay(f.write("step-override"), "--field-step reference");
    INFO(r.output);
    CHECK(r.status != 2);
    CHECK_THAT(r.output, Contains("4 cycles"));
  }
}

TEST_CASE(
    "replay reads the rows a recording's headers name, and refuses a session.json that "
    "claims more",
    "[replay]") {
  RecordingFiles f;
  SECTION("files that hold more than their headers say (a crash between append and header)") {
    f.sensors += npy("(1, 3)", kS).substr(64) + "xy";
    f.motors += std::string(5, '\0');
    f.session["cycles"] = kRows - 1;  // session.json is written after the arrays
    const Run r = replay(f.write("longer"));
    INFO(r.output);
    CHECK(r.status != 2);
    CHECK_THAT(r.output, Contains("4 cycles"));
  }
  SECTION("one array a row behind") {
    f.reward = npy("(3,)", kRows - 1);
    f.session["cycles"] = kRows - 1;
    const Run r = replay(f.write("behind"));
    INFO(r.output);
    CHECK(r.status != 2);
    CHECK_THAT(r.output, Contains("3 cycles"));
  }
  SECTION("session.json claiming more cycles than the arrays hold") {
    f.session["cycles"] = kRows + 1;
    check_refused(replay(f.write("more")), "session.json", "\"cycles\" = 5");
  }
}
