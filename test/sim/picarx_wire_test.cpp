// The sim's robot link against the byte traces of docs/protocol.md, legacy §9.1 (framing B, the
// 2025-08-20 PiCar-X client): a one-shot fake server on loopback records what the link sends
// and answers with the recorded server bytes.
#include <boost/asio.hpp>
#include "test/support/catch.h"
#include <cctype>
#include <string>
#include <thread>

#include "app/sim/robot_link.h"

using namespace fieldbrain::sim;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

std::vector<uint8_t> hex(const std::string& text) {
  std::vector<uint8_t> out;
  std::string digits;
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
  }
  for (size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// §9.1, copied from the spec's hex dumps.
const char* kClientHandshake =
    "52 4F 42 4F 00 00 00 21 02 00 00 00 07 00 00 80 3F 00 00 40 41 00 00 C0 40 00 00 80 3F"
    " 00 00 40 40 00 00 20 44 00 00 F0 43";
const char* kServerHandshake = "524f424f0000001902000000050000803f000040410000c0400000000000007041";
const char* kClientSensory1 =
    "52 4F 42 4F 00 00 00 35 00 00 00 00 0C 00 00 00 3F 00 00 00 3F 00 00 00 3F 00 00 80 3E"
    " 00 00 40 3F 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F"
    " 00 00 00 00";
const char* kServerAction1 =
    "52 4F 42 4F 00 00 00 1D 01 00 00 00 06 00 00 80 3E 00 00 00 BF 00 00 00 3E 00 00 00 00"
    " 00 00 40 3F 00 00 80 BE";

}  // namespace

TEST_CASE("The robot link speaks framing B byte for byte as the HEAD PiCar-X client", "[sim]") {
  asio::io_context ctx;
  tcp::acceptor acceptor(ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const int port = acceptor.local_endpoint().port();
  std::vector<uint8_t> got_handshake(41), got_sensory(61);
  std::thread fake([&] {
    tcp::socket s(ctx);
    acceptor.accept(s);
    asio::read(s, asio::buffer(got_handshake));
    asio::write(s, asio::buffer(hex(kServerHandshake)));
    asio::read(s, asio::buffer(got_sensory));
    asio::write(s, asio::buffer(hex(kServerAction1)));
    boost::system::error_code ec;
    s.shutdown(tcp::socket::shutdown_both, ec);
  });

  LinkOptions o;
  o.port = port;
  o.framing = Framing::B;
  o.timeout_s = 5;
  RobotLink link(o);
  const auto& hs = link.connect();
  CHECK(hs.sensory_dim == 12);
  CHECK(hs.motor_dim == 6);
  const auto motors =
      link.exchange({0.5f, 0.5f, 0.5f, 0.25f, 0.75f, 0, 0, 0, 0, 0, 0.5f, 0}, std::nullopt);
  fake.join();
  CHECK(got_handshake == hex(kClientHandshake));
  CHECK(got_sensory == hex(kClientSensory1));
  CHECK(motors == std::vector<float>{0.25f, -0.5f, 0.125f, 0.0f, 0.75f, -0.25f});
  // The server closed: the next cycle is a clear error, not a hang.
  CHECK_THROWS_AS(link.exchange(std::vector<float>(12, 0.5f), std::nullopt), LinkError);
}

TEST_CASE("The robot link gives up on a silent server after its timeout", "[sim]") {
  asio::io_context ctx;
  tcp::acceptor acceptor(ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  LinkOptions o;
  o.port = acceptor.local_endpoint().port();
  o.timeout_s = 0.3;
  RobotLink link(o);
  // The kernel completes the TCP connect from the backlog; nobody ever answers.
  CHECK_THROWS_WITH(link.connect(), Catch::Contains("timed out"));
}

TEST_CASE("Host, port and framing arguments are checked", "[sim]") {
  CHECK(parse_host_port("127.0.0.1:9999") == std::make_pair(std::string("127.0.0.1"), 9999));
  CHECK_THROWS(parse_host_port("localhost"));
  CHECK_THROWS(parse_host_port("h:0"));
  CHECK_THROWS(parse_host_port("h:12x"));
  CHECK(parse_framing("json") == Framing::JsonLines);
  CHECK_THROWS(parse_framing("z"));
}
