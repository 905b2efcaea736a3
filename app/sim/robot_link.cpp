#include "app/sim/robot_link.h"

#include <boost/asio.hpp>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

namespace fieldbrain::sim {

using server::MessageType;

namespace {
// Replies carry 6 motors; anything far beyond that is a broken stream, not a motor vector.
constexpr uint32_t kMaxReplyFloats = 4096;
}  // namespace

std::vector<float> picarx_handshake_vector(int sensory_dim, int motor_dim) {
  // [version, S, M, hardware 1 = PiCar-X, mask 3 = vision|audio, width, height] (§2.1)
  return {1.0f,  static_cast<float>(sensory_dim), static_cast<float>(motor_dim), 1.0f, 3.0f, 640.0f,
          480.0f};
}

std::pair<std::string, int> parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument("expected HOST:PORT, got '" + text + "'");
  }
  int port = 0;
  try {
    size_t used = 0;
    port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1) throw std::invalid_argument("trailing characters");
  } catch (const std::exception&) {
    throw std::invalid_argument("bad port in '" + text + "'");
  }
  if (port < 1 || port > 65535) throw std::invalid_argument("port out of range in '" + text + "'");
  return {text.substr(0, colon), port};
}

Framing parse_framing(const std::string& text) {
  if (text == "a" || text == "A") return Framing::A;
  if (text == "b" || text == "B") return Framing::B;
  if (text == "c" || text == "C") return Framing::C;
  if (text == "json") return Framing::JsonLines;
  throw std::invalid_argument("framing must be a, b, c or json, not '" + text + "'");
}

std::string framing_label(Framing framing) {
  switch (framing) {
    case Framing::A:
      return "a";
    case Framing::B:
      return "b";
    case Framing::C:
      return "c";
    case Framing::JsonLines:
      return "json";
  }
  return "?";
}

RobotLink::RobotLink(LinkOptions options)
    : options_(std::move(options)), socket_("", options_.timeout_s) {}

void RobotLink::close() { socket_.close(); }

void RobotLink::send_bytes(const std::vector<uint8_t>& bytes) {
  socket_.write(bytes.data(), bytes.size());
}

std::vector<float> RobotLink::read_frame(MessageType expected) {
  std::vector<uint8_t> header(server::header_size(options_.framing));
  socket_.read_exact(header.data(), header.size());
  server::FrameHeader h;
  const auto problem = server::parse_header(options_.framing, header.data(), kMaxReplyFloats, &h);
  if (problem != server::HeaderProblem::None) {
    throw LinkError(std::string("bad reply header: ") + server::header_problem_name(problem));
  }
  std::vector<uint8_t> body(4 * size_t{h.count});
  socket_.read_exact(body.data(), body.size());
  std::vector<float> values = server::decode_floats(body.data(), h.count);
  if (h.type != static_cast<uint8_t>(expected)) {
    std::string detail = "unexpected reply type " + std::to_string(h.type);
    if (h.type == static_cast<uint8_t>(MessageType::Error) && !values.empty()) {
      detail += " (ERROR code " + std::to_string(values[0]) + ")";
    }
    throw LinkError(detail);
  }
  return values;
}

nlohmann::json RobotLink::read_json(const char* what) {
  const std::string line = socket_.read_line();
  try {
    return nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw LinkError(std::string(what) + " is not JSON: " + e.what());
  }
}

const HandshakeReply& RobotLink::connect() {
  socket_.connect(options_.host, options_.port);  // TCP_NODELAY as the HEAD client
  handshake_ = HandshakeReply{};
  if (options_.framing == Framing::JsonLines) {
    nlohmann::json hs = {{"type", "handshake"},
                         {"robot_id", options_.robot_id},
                         {"sensory_dim", options_.sensory_dim},
                         {"motor_dim", options_.motor_dim}};
    if (!options_.token.empty()) hs["token"] = options_.token;
    const std::string line = hs.dump() + "\n";
    send_bytes(std::vector<uint8_t>(line.begin(), line.end()));
    const nlohmann::json reply = read_json("the handshake reply");
    if (reply.value("type", "") == "error") {
      const int code = reply.value("code", 0);
      throw HandshakeRefused(code, "handshake refused (" + std::to_string(code) +
                                       "): " + reply.value("message", reply.dump()));
    }
    if (reply.value("type", "") != "handshake" || !reply.value("accepted", false)) {
      throw HandshakeRefused(0, "handshake refused: " + reply.dump());
    }
    handshake_.robot_key = reply.value("robot_id", options_.robot_id);
    handshake_.sensory_dim = reply.value("sensory_dim", 0);
    handshake_.motor_dim = reply.value("motor_dim", 0);
    handshake_.token = reply.value("token", "");
    handshake_.cycle = reply.value("cycle", -1LL);
    return handshake_;
  }
  send_bytes(
      server::encode_frame(options_.framing, MessageType::Handshake,
                           picarx_handshake_vector(options_.sensory_dim, options_.motor_dim)));
  handshake_.values = read_frame(MessageType::Handshake);
  const auto& v = handshake_.values;
  // The HEAD client needs >= 5 floats; a leading -1 is the in-band failure vector (§2.2).
  if (v.size() < 5) throw LinkError("handshake reply has " + std::to_string(v.size()) + " floats");
  if (v[0] < 0) {
    const int code = static_cast<int>(v[1]);
    throw HandshakeRefused(code, "handshake refused, code " + std::to_string(code));
  }
  // Framing A answers [1, M, S, M, 1]; B and C answer [1, S, M, gpu, caps].
  const bool legacy_a = options_.framing == Framing::A;
  handshake_.sensory_dim = static_cast<int>(legacy_a ? v[2] : v[1]);
  handshake_.motor_dim = static_cast<int>(legacy_a ? v[3] : v[2]);
  return handshake_;
}

std::vector<float> RobotLink::exchange(const std::vector<float>& sensors,
                                       std::optional<float> reward) {
  if (!socket_.is_open()) throw LinkError("not connected");
  if (options_.framing == Framing::JsonLines) {
    nlohmann::json msg = {{"type", "sensors"}, {"values", sensors}};
    if (reward) msg["reward"] = *reward;
    const std::string line = msg.dump() + "\n";
    send_bytes(std::vector<uint8_t>(line.begin(), line.end()));
    const nlohmann::json reply = read_json("the reply");
    if (reply.value("type", "") != "motors" || !reply.contains("values") ||
        !reply["values"].is_array()) {
      throw LinkError("expected a motors reply, got " + reply.dump());
    }
    std::vector<float> motors;
    for (const auto& x : reply["values"]) {
      if (!x.is_number()) throw LinkError("non-numeric motor value in " + reply.dump());
      motors.push_back(x.get<float>());
    }
    return motors;
  }
  std::vector<float> frame = sensors;
  if (reward) frame.push_back(*reward);
  send_bytes(server::encode_frame(options_.framing, MessageType::SensoryInput, frame));
  return read_frame(MessageType::ActionOutput);
}

}  // namespace fieldbrain::sim
