#include "app/sim/monitor_client.h"

namespace fieldbrain::sim {

MonitorClient::MonitorClient(std::string host, int port, double timeout_s)
    : host_(std::move(host)), port_(port), socket_("monitor", timeout_s) {}

void MonitorClient::connect() {
  socket_.connect(host_, port_);
  try {
    const auto j = nlohmann::json::parse(socket_.read_line());
    if (j.value("status", "") != "connected") throw LinkError("monitor: unexpected welcome");
  } catch (const nlohmann::json::exception&) {
    throw LinkError("monitor: the welcome line is not JSON");
  }
}

nlohmann::json MonitorClient::command(const std::string& line) {
  const std::string out = line + "\n";
  socket_.write(out.data(), out.size());
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(socket_.read_line());
  } catch (const nlohmann::json::exception& e) {
    throw LinkError(std::string("monitor: reply is not JSON: ") + e.what());
  }
  if (reply.value("status", "") != "success") {
    std::string why = reply.value("error", reply.value("message", reply.dump()));
    throw LinkError("monitor: '" + line + "' failed: " + why);
  }
  return reply;
}

FieldSlice MonitorClient::field_slice(const std::string& robot_key, int channel, int z) {
  const auto reply =
      command("field_slice " + robot_key + " " + std::to_string(channel) + " " + std::to_string(z));
  const auto& d = reply.at("data");
  FieldSlice s;
  s.resolution = d.value("resolution", 0);
  s.channel = d.value("channel", channel);
  s.z = d.value("z", z);
  for (const auto& row : d.at("values")) s.values.push_back(row.get<std::vector<float>>());
  if (s.values.empty() || s.values.size() != s.values.front().size()) {
    throw LinkError("monitor: field_slice returned a non-square slice");
  }
  return s;
}

std::vector<std::string> MonitorClient::robot_keys() {
  const auto reply = command("brain_stats");
  std::vector<std::string> keys;
  for (auto it = reply["data"]["sessions"].begin(); it != reply["data"]["sessions"].end(); ++it) {
    keys.push_back(it.key());
  }
  return keys;
}

}  // namespace fieldbrain::sim
