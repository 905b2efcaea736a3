// The tokens a server issued to the simulator's JSON robots, kept so that the next run can
// claim the same robot ids (a server with tokens on refuses a registered id without its
// token: error 2005, docs/robots.md). One JSON object {"<robot_id>": "<token>"} in a file
// (by default tokens.json in the run's output directory), written with mode 0600 as soon as
// a token is issued (a run that dies later keeps it), by replacing the file atomically.
// Thread-safe: robot threads reconnect on their own.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace fieldbrain::sim {

class RobotTokens {
 public:
  // Reads `path` when it exists ("" = keep tokens in memory only). Throws std::runtime_error
  // naming the file when it is not a JSON object of strings.
  explicit RobotTokens(std::string path);

  // The token to send for `robot_id` ("" when none is known).
  std::string find(const std::string& robot_id) const;
  // A token given on the command line (--token): sent, and written to the file once a
  // handshake with it is accepted.
  void provide(const std::string& robot_id, const std::string& token);
  // After an accepted handshake: records the token the server issued (`issued`, may be ""),
  // or the --token the server accepted, and rewrites the file when that changed it. Throws
  // std::runtime_error when the file cannot be written (the token would be lost with the run).
  void accepted(const std::string& robot_id, const std::string& issued);

  const std::string& path() const { return path_; }
  size_t loaded() const { return loaded_; }  // tokens read from the file at start

 private:
  void write_locked() const;

  std::string path_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> tokens_;  // what the file holds
  std::map<std::string, std::string> given_;   // --token, not (yet) in the file
  size_t loaded_ = 0;
};

}  // namespace fieldbrain::sim
