// A small client for the server's monitor port (docs/protocol.md "Monitor port"): one command
// line out, one compact JSON line back, after a welcome line on connect. The sim uses it to
// fetch field slices (`field_slice <robot_id> <channel> <z>`, whose data is
// {"resolution":R,"channel":c,"z":z,"values":[[R floats] x R]}) and robot keys
// (`brain_stats`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/sim/timed_socket.h"

namespace fieldbrain::sim {

struct FieldSlice {
  int resolution = 0;
  int channel = 0;
  int z = 0;
  std::vector<std::vector<float>> values;  // [row][column], R x R
};

class MonitorClient {
 public:
  MonitorClient(std::string host, int port, double timeout_s);

  // Connects and reads the welcome line. Throws LinkError when unreachable.
  void connect();

  // Sends one command and returns the parsed reply. Throws LinkError on a transport problem
  // or when the reply's "status" is not "success" (the message then holds the server's text).
  nlohmann::json command(const std::string& line);

  FieldSlice field_slice(const std::string& robot_key, int channel, int z);

  // Keys of the robots the server has attached now (brain_stats "sessions").
  std::vector<std::string> robot_keys();

 private:
  std::string host_;
  int port_;
  TimedSocket socket_;
};

}  // namespace fieldbrain::sim
