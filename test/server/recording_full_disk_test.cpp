// Issue 36 item 6a: docs/operating.md promises that a recording stopped by a full disk has
// "cycles" and "error" in its session.json. While the disk stays full the atomic rewrite
// (temporary file, rename) cannot succeed; the recorder then overwrites the file in place.
// A full disk is made here as the other full-disk tests make it: a file-size limit fails the
// .npy appends (EFBIG), and a directory where session.json's temporary file goes fails every
// atomic rewrite, as ENOSPC would.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/server/worker/recorder.h"
#include "test/server/captured_log.h"
#include "test/server/eventually.h"
#include "test/server/file_size_limit.h"
#include "test/server/fresh_dir.h"
#include "test/support/catch.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

TEST_CASE("a recording stopped by a full disk says so in session.json while the disk stays full",
          "[server][limits]") {
  auto dir = fresh_dir("fieldbrain-record-stays-full");
  CapturedLog log;
  std::string folder;
  {
    Recorder recorder(dir.string(), nlohmann::json::object());
    auto s = recorder.open("rover", 7, 4, 3, 0);
    REQUIRE(s);
    folder = s->folder();
    // The disk fills up and stays full: no new file, no growing file.
    fs::create_directories(fs::path(folder) / "session.json.tmp" / "keep");
    FileSizeLimit full(16 * 1024);
    REQUIRE(full.applied());
    const std::vector<float> sensors = {0.1f, 0.2f, 0.3f, 0.4f};
    for (int i = 0; i < 3000; ++i) {
      s->append(sensors, 0.5f, {0.1f, 0.2f, 0.3f});
      if (i % 200 == 199) std::this_thread::sleep_for(std::chrono::milliseconds(60));
    }
    // The writer meets the full disk on its own thread: wait for it to say so while the disk
    // is still full.
    CHECK(eventually([&] { return log.count("recording stopped") >= 1; }));
    s->close();
  }
  INFO(log.text());
  CHECK(log.count("recording stopped") == 1);
  std::ifstream in(fs::path(folder) / "session.json");
  const auto meta = nlohmann::json::parse(in, nullptr, false);
  REQUIRE_FALSE(meta.is_discarded());
  INFO(meta.dump());
  CHECK(meta.value("error", "").size() > 0);
  CHECK(meta.value("complete", true) == false);
  REQUIRE(meta.contains("cycles"));
  CHECK(meta["cycles"].get<long long>() < 3000);
}
