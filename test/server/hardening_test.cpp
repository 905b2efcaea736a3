// What a hostile or careless client can do to the server (issue 12 items 3, 4, 7, the caps;
// issue 15 item 6): every case on loopback against an in-process server, each must end in a
// bounded way: cut off, paused, refused, or escaped.
#include <poll.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include "test/support/catch.h"
#include <chrono>
#include <sstream>
#include <thread>

#include "app/server/protocol/refusal_codec.h"
#include "app/server/protocol/robot_client.h"
#include "test/server/captured_log.h"
#include "test/server/eventually.h"
#include "test/server/loopback_peer.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

namespace {

std::string json_handshake_line(const std::string& id, int s, int m) {
  nlohmann::json j = {
      {"type", "handshake"}, {"robot_id", id}, {"sensory_dim", s}, {"motor_dim", m}};
  return j.dump() + "\n";
}

}  // namespace

TEST_CASE("a monitor client that never reads its replies is cut off at its byte limit",
          "[server]") {
  ServerConfig c = test_config();
  c.max_write_queue_bytes = 64 * 1024;
  ToyServer srv(c);
  const size_t rss_before = resident_bytes();
  // 8 MB of pings would queue ~190 MB of pongs on a server without a limit.
  LoopbackPeer m("127.0.0.1", srv.monitor_port(), /*sndbuf=*/64 * 1024);
  ::setsockopt(m.fd(), SOL_SOCKET, SO_RCVBUF, &c.max_write_queue_bytes, sizeof(int));
  const size_t sent = m.flood("ping\n", 8u << 20);
  INFO("sent " << sent << " bytes of pings");
  CHECK(m.closed_within(10.0));
  const size_t rss_after = resident_bytes();
  INFO("RSS " << rss_before / 1e6 << " MB -> " << rss_after / 1e6 << " MB");
  CHECK(rss_after < rss_before + (48u << 20));
  CHECK(srv.server->stats().errors_with_code(kCodeMessageTooLarge) >= 1);
  // The port still serves a well-behaved client.
  RobotClient other(srv.monitor_port());
  REQUIRE(other.read_line().has_value());
  other.send_text("ping\n");
  REQUIRE(other.read_line().has_value());
}

TEST_CASE("a robot that never reads its replies is paused at its byte limit, memory bounded",
          "[server]") {
  ServerConfig c = test_config();
  c.max_write_queue_bytes = 64 * 1024;
  // Unknown types count as bad frames; lift that cap so only the byte limit can stop this.
  c.max_bad_frames = 1000000000;
  ToyServer srv(c);
  const size_t rss_before = resident_bytes();
  LoopbackPeer robot("127.0.0.1", srv.port(), /*sndbuf=*/64 * 1024);
  int small = 16 * 1024;
  ::setsockopt(robot.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  // Unknown-type frames each answered with an ERROR frame; 16 MB of them, never read.
  auto frame = encode_frame_raw(Framing::B, 7, {});
  std::string many;
  for (int i = 0; i < 1024; ++i) many.append(frame.begin(), frame.end());
  const size_t sent = robot.flood(many, 16u << 20);
  const size_t rss_after = resident_bytes();
  INFO("sent " << sent << " bytes; RSS " << rss_before / 1e6 << " MB -> " << rss_after / 1e6
               << " MB");
  CHECK(rss_after < rss_before + (24u << 20));
}

TEST_CASE("a flood of malformed JSON lines is disconnected after max_bad_frames", "[server]") {
  ToyServer srv;  // max_bad_frames = 5
  LoopbackPeer c("127.0.0.1", srv.port());
  c.send_all(json_handshake_line("flooder", 2, 1));
  const size_t sent = c.flood("{not json at all\n", 400 * 1024);
  INFO("sent " << sent << " bytes");
  CHECK(c.closed_within(5.0));
  // Five error replies and the handshake reply: nowhere near one per line sent.
  CHECK(c.received() < 4096);
  CHECK(srv.server->stats().errors_with_code(kCodeInvalidMessage) <= 20);
}

TEST_CASE("a connection that sends only blank lines is closed", "[server]") {
  ToyServer srv;
  SECTION("robot port, after a JSON handshake") {
    LoopbackPeer c("127.0.0.1", srv.port());
    c.send_all(json_handshake_line("blank", 2, 1));
    c.send_all(std::string(20, '\n'));
    CHECK(c.closed_within(3.0));
  }
  SECTION("monitor port") {
    LoopbackPeer m("127.0.0.1", srv.monitor_port());
    m.send_all("\n\r\n  \n\n\n\n\n\n\n\n");
    CHECK(m.closed_within(3.0));
  }
}

TEST_CASE("a newline in robot_id or a message type cannot forge a log line", "[server]") {
  CapturedLog log;
  ServerConfig c = test_config();
  c.log_level = "info";
  ToyServer srv(c);
  spdlog::set_level(spdlog::level::info);
  RobotClient r(srv.port());
  // An id with a control character is refused outright: ids appear in every log line and
  // name files, so none can carry a newline into either.
  r.send_text(json_handshake_line("evil\n[2001 INVALID_CAPABILITIES] forged: robot hijacked", 2, 1));
  auto refused = nlohmann::json::parse(r.read_line().value());
  CHECK(refused["type"] == "error");
  CHECK(refused["code"] == 2001);
  r.send_text(json_handshake_line("plain", 2, 1));
  auto hs = nlohmann::json::parse(r.read_line().value());
  REQUIRE(hs["accepted"] == true);
  // Client text quoted in a log line (here an unknown type) is escaped.
  r.send_text(R"({"type":"x\n[7001 INVALID_MESSAGE] forged too"})"
              "\n");
  auto err = nlohmann::json::parse(r.read_line().value());
  CHECK(err["type"] == "error");
  r.close();
  // Logged before the error reply was sent; waited for, not slept for (a busy machine).
  const std::string escaped = "x\\n[7001 INVALID_MESSAGE] forged too";
  CHECK(eventually([&] { return log.text().find(escaped) != std::string::npos; }));
  const std::string text = log.text();
  INFO(text);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.rfind("[2001 INVALID_CAPABILITIES] forged", 0) == std::string::npos);
    CHECK(line.rfind("[7001 INVALID_MESSAGE] forged", 0) == std::string::npos);
  }
}

TEST_CASE("one connection cannot write the log faster than log_lines_per_minute", "[server]") {
  CapturedLog log;
  ServerConfig c = test_config();
  c.log_level = "info";
  c.log_lines_per_minute = 5;
  c.max_bad_frames = 1000;
  ToyServer srv(c);
  spdlog::set_level(spdlog::level::info);
  RobotClient r(srv.port());
  r.send_text(json_handshake_line("noisy", 2, 1));
  REQUIRE(r.read_line().has_value());
  for (int i = 0; i < 200; ++i) {
    r.send_text("{nope\n");
    REQUIRE(r.read_line().has_value());
  }
  r.close();
  // The note that lines were suppressed is the last thing this connection logs.
  CHECK(eventually([&] { return log.text().find("suppressed") != std::string::npos; }));
  const std::string text = log.text();
  size_t malformed = 0;
  for (size_t at = text.find("malformed JSON"); at != std::string::npos;
       at = text.find("malformed JSON", at + 1)) {
    ++malformed;
  }
  INFO(text);
  CHECK(malformed <= 6);
  CHECK(text.find("suppressed") != std::string::npos);
  CHECK(srv.server->stats().errors_with_code(kCodeInvalidMessage) >= 200);  // all counted
}

TEST_CASE("connections are capped in total and per address", "[server]") {
  ServerConfig c = test_config();
  c.max_connections = 3;
  c.max_connections_per_address = 2;
  ToyServer srv(c);
  LoopbackPeer a1("127.0.0.1", srv.port()), a2("127.0.0.1", srv.port());
  LoopbackPeer a3("127.0.0.1", srv.port());  // third from one address: refused
  CHECK(a3.closed_within(2.0));
  LoopbackPeer b1("127.0.0.2", srv.port());  // another address: accepted (3 in total)
  LoopbackPeer d1("127.0.0.3", srv.port());  // a fourth connection: refused by the total
  CHECK(d1.closed_within(2.0));
  CHECK_FALSE(a1.closed_within(0.3));
  CHECK_FALSE(b1.closed_within(0.1));
  // Accepted connections work.
  b1.send_all(json_handshake_line("b1", 2, 1));
  CHECK_FALSE(b1.closed_within(0.3));
  CHECK(b1.received() > 0);
  SECTION("the monitor port has its own per-address cap") {
    std::vector<std::unique_ptr<LoopbackPeer>> monitors;
    for (int i = 0; i < 2; ++i) {
      monitors.push_back(std::make_unique<LoopbackPeer>("127.0.0.4", srv.monitor_port()));
    }
    LoopbackPeer extra("127.0.0.4", srv.monitor_port());
    CHECK(extra.closed_within(2.0));
    CHECK_FALSE(monitors[0]->closed_within(0.2));
  }
}

TEST_CASE("an HTTP request on the robot port gets the HTTP error line", "[server]") {
  ToyServer srv;
  RobotClient c(srv.port());
  c.send_text("GET / HTTP/1.1\r\nHost: robot\r\n\r\n");
  auto status = c.read_line();
  REQUIRE(status.has_value());
  CHECK(*status == "HTTP/1.1 400 Bad Request\r");
  std::string last;
  for (int i = 0; i < 8; ++i) {
    auto line = c.read_line();
    if (!line) break;
    last = *line;
  }
  CHECK(last + "\n" == kHttpRefusalLine);
  CHECK(c.wait_closed());
  SECTION("a TLS ClientHello gets a TLS alert, not a frame") {
    RobotClient t(srv.port());
    t.send_bytes({0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00});
    auto alert = t.read_exact(7);
    REQUIRE(alert.has_value());
    CHECK((*alert)[0] == 0x15);  // alert record
    CHECK((*alert)[5] == 2);     // fatal
    CHECK(t.wait_closed());
  }
}

TEST_CASE("a silent monitor client receives pushed telemetry in the 2025-08-20 format",
          "[server]") {
  ServerConfig c = test_config();
  c.legacy_push = true;
  c.legacy_push_after_s = 0.3;
  ToyServer srv(c);
  RobotClient silent(srv.monitor_port());
  REQUIRE(silent.read_line().has_value());  // the welcome line
  RobotClient talker(srv.monitor_port());
  REQUIRE(talker.read_line().has_value());
  talker.send_text("ping\n");
  REQUIRE(talker.read_line().has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  RobotClient robot(srv.port());
  REQUIRE(robot.handshake(Framing::B, {1, 12, 6, 1, 3}).has_value());
  for (int i = 0; i < 5; ++i) REQUIRE(robot.exchange(Framing::B, std::vector<float>(12, 0.25f)));
  for (int expected = 1; expected <= 5; ++expected) {
    auto line = silent.read_line();
    REQUIRE(line.has_value());
    auto j = nlohmann::json::parse(*line);
    CHECK(j["cycles"] == expected);
    CHECK(j["motors"].size() == 5);  // that generation sent the first 5 motors
    CHECK(j["sensors"].size() == 12);
    for (const char* key : {"uptime", "hz", "energy", "comfort", "motivation", "exploring",
                            "concepts_formed", "causal_chains", "semantic_meanings",
                            "prediction_accuracy", "learning_score", "exploration_rate"}) {
      CHECK(j.contains(key));
    }
  }
  // A client that talks is an ef2bdb8-style client: no unsolicited lines, so the next line
  // it reads is the answer to its request.
  talker.send_text("ping\n");
  auto pong = nlohmann::json::parse(talker.read_line().value());
  CHECK(pong["message"] == "pong");
}

TEST_CASE("monitor saves are rate-limited and the monitor listens on loopback by default",
          "[server]") {
  ServerConfig c = test_config();
  c.monitor_save_interval_s = 30;
  ToyServer srv(c);
  RobotClient m(srv.monitor_port());
  REQUIRE(m.read_line().has_value());
  m.send_text("save\n");
  auto first = nlohmann::json::parse(m.read_line().value());
  CHECK(first["status"] == "success");
  m.send_text("save\n");
  auto second = nlohmann::json::parse(m.read_line().value());
  CHECK(second["status"] == "error");
  CHECK(second["error"].get<std::string>().find("rate-limited") != std::string::npos);
  CHECK(ServerConfig().monitor_host == "127.0.0.1");  // loopback unless chosen
}

TEST_CASE("a remote monitor client must send the token before any other command", "[server]") {
  ServerConfig c = test_config();
  c.monitor_token = "s3cret-token";
  c.legacy_push = true;
  c.legacy_push_after_s = 0.2;
  ToyServer srv(c);
  // 127.0.0.2 stands for another machine; 127.0.0.1 is this one and needs no token.
  LoopbackPeer remote("127.0.0.2", srv.monitor_port());
  RobotClient local(srv.monitor_port());
  REQUIRE(local.read_line().has_value());
  local.send_text("ping\n");
  CHECK(nlohmann::json::parse(local.read_line().value())["message"] == "pong");
  RobotClient robot(srv.port());
  REQUIRE(robot.handshake(Framing::B, {1, 4, 2, 1, 0}).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  REQUIRE(robot.exchange(Framing::B, std::vector<float>(4, 0.5f)).has_value());
  // The remote client reads its welcome and nothing else: no push without the token.
  auto read_line = [&](double timeout_s) {
    std::string line;
    char ch;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{remote.fd(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      if (::recv(remote.fd(), &ch, 1, 0) != 1) break;
      if (ch == '\n') return line;
      line += ch;
    }
    return std::string();
  };
  CHECK(nlohmann::json::parse(read_line(2.0))["status"] == "connected");
  CHECK(read_line(0.3).empty());
  remote.send_all("ping\n");
  auto refused = nlohmann::json::parse(read_line(2.0));
  CHECK(refused["status"] == "error");
  CHECK(refused["error"].get<std::string>().find("auth") != std::string::npos);
  remote.send_all("auth wrong-token\n");
  CHECK(nlohmann::json::parse(read_line(2.0))["status"] == "error");
  remote.send_all("auth s3cret-token\n");
  CHECK(nlohmann::json::parse(read_line(2.0))["status"] == "success");
  remote.send_all("ping\n");
  CHECK(nlohmann::json::parse(read_line(2.0))["message"] == "pong");
}
