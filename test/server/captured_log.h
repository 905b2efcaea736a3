// Replaces spdlog's default logger with one writing into a string for the test's lifetime,
// for tests that count what the server logs.
//
// The server's threads log through spdlog's default logger by raw pointer, and a test may end
// while one of them is still writing a line (a connection closing). So the captured logger and
// the text it writes into must outlive the test: the sink owns its text, and every captured
// logger is kept for the rest of the process (one small logger per test case; ctest runs each
// case in its own process). Before this, a line logged after the test's scope ended reached a
// destroyed logger ("pure virtual method called").
#pragma once

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fieldbrain::server::testing {

// A sink that appends each formatted line to a string it owns; text() reads it under the
// sink's own lock, so a test reads while server threads write.
class StringSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string text() {
    std::lock_guard<std::mutex> lock(this->mutex_);
    return text_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    this->formatter_->format(msg, formatted);
    text_.append(formatted.data(), formatted.size());
  }
  void flush_() override {}

 private:
  std::string text_;
};

class CapturedLog {
 public:
  CapturedLog()
      : previous_(spdlog::default_logger()), sink_(std::make_shared<StringSink>()) {
    sink_->set_pattern("%v");
    auto logger = std::make_shared<spdlog::logger>("captured", sink_);
    logger->set_level(spdlog::level::info);
    kept_loggers().push_back(logger);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::string text() { return sink_->text(); }
  // Lines that contain `needle`.
  size_t count(const std::string& needle) {
    const std::string t = text();
    size_t n = 0;
    for (size_t at = t.find(needle); at != std::string::npos; at = t.find(needle, at + 1)) ++n;
    return n;
  }

 private:
  // Never destroyed (a deliberate leak): a server thread may hold a captured logger's raw
  // pointer after the test that made it has ended.
  static std::vector<std::shared_ptr<spdlog::logger>>& kept_loggers() {
    static auto* kept = new std::vector<std::shared_ptr<spdlog::logger>>();
    return *kept;
  }

  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<StringSink> sink_;
};

}  // namespace fieldbrain::server::testing
