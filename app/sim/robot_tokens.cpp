#include "app/sim/robot_tokens.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace fieldbrain::sim {

namespace fs = std::filesystem;

RobotTokens::RobotTokens(std::string path) : path_(std::move(path)) {
  if (path_.empty() || !fs::exists(path_)) return;
  std::ifstream in(path_);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("tokens file " + path_ + " is not JSON (" + e.what() +
                             "); move it away to start with new robot ids");
  }
  if (!j.is_object()) throw std::runtime_error("tokens file " + path_ + " is not a JSON object");
  for (const auto& [id, token] : j.items()) {
    if (!token.is_string()) {
      throw std::runtime_error("tokens file " + path_ + ": the token of '" + id +
                               "' is not a string");
    }
    tokens_[id] = token.get<std::string>();
  }
  loaded_ = tokens_.size();
}

std::string RobotTokens::find(const std::string& robot_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto given = given_.find(robot_id);
  if (given != given_.end()) return given->second;
  auto it = tokens_.find(robot_id);
  return it == tokens_.end() ? std::string() : it->second;
}

void RobotTokens::provide(const std::string& robot_id, const std::string& token) {
  std::lock_guard<std::mutex> lock(mutex_);
  given_[robot_id] = token;
}

void RobotTokens::accepted(const std::string& robot_id, const std::string& issued) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string token = issued;
  auto given = given_.find(robot_id);
  if (given != given_.end()) {
    if (token.empty()) token = given->second;
    given_.erase(given);
  }
  if (token.empty()) return;
  auto it = tokens_.find(robot_id);
  if (it != tokens_.end() && it->second == token) return;
  tokens_[robot_id] = token;
  write_locked();
}

void RobotTokens::write_locked() const {
  if (path_.empty()) return;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [id, token] : tokens_) j[id] = token;
  const std::string text = j.dump(2) + "\n";
  const std::string tmp = path_ + ".tmp";
  // 0600: a token is the robot's secret.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  if (ok) ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (ok) ok = ::fsync(fd) == 0;
  if (fd >= 0) ok = (::close(fd) == 0) && ok;
  if (ok) ok = std::rename(tmp.c_str(), path_.c_str()) == 0;
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write the tokens file " + path_);
  }
}

}  // namespace fieldbrain::sim
