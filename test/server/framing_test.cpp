// Wire formats as pure functions, checked against the byte traces of docs/protocol.md, legacy §9
// (captured from the Python transport code, so independent of this implementation).
#include "app/server/protocol/framing.h"

#include "test/support/catch.h"

#include "app/server/protocol/robot_client.h"

using namespace fieldbrain::server;
using fieldbrain::server::from_hex;
using fieldbrain::server::hex;

TEST_CASE("framing is detected from the first bytes of a connection", "[server]") {
  const uint8_t robo[] = {0x52, 0x4F, 0x42, 0x4F};
  const uint8_t beef[] = {0xDE, 0xAD, 0xBE, 0xEF};
  const uint8_t a[] = {0x00, 0x00, 0x00, 0x19};
  const uint8_t json[] = {'{'};
  CHECK(detect_framing(robo, 4) == Framing::B);
  CHECK(detect_framing(beef, 4) == Framing::C);
  CHECK(detect_framing(a, 4) == Framing::A);
  CHECK(detect_framing(json, 1) == Framing::JsonLines);
  CHECK_FALSE(detect_framing(a, 3).has_value());
  CHECK(header_size(Framing::A) == 9);
  CHECK(header_size(Framing::B) == 13);
  CHECK(header_size(Framing::C) == 13);
}

TEST_CASE("encoded frames match the legacy byte traces", "[server]") {
  SECTION("HEAD handshake reply, framing B (9.1)") {
    auto bytes = encode_frame(Framing::B, MessageType::Handshake, {1, 12, 6, 0, 15});
    CHECK(hex(bytes) == "524f424f0000001902000000050000803f000040410000c0400000000000007041");
  }
  SECTION("HEAD PiCar-X handshake request, framing B (9.1)") {
    auto bytes = encode_frame(Framing::B, MessageType::Handshake, {1, 12, 6, 1, 3, 640, 480});
    CHECK(bytes == from_hex("52 4F 42 4F 00 00 00 21 02 00 00 00 07 00 00 80 3F 00 00 40 41 "
                            "00 00 C0 40 00 00 80 3F 00 00 40 40 00 00 20 44 00 00 F0 43"));
  }
  SECTION("ef2bdb8 action, framing A (9.2)") {
    auto bytes = encode_frame(Framing::A, MessageType::ActionOutput, {0.25f, -0.5f, 0.125f, 0.0f});
    CHECK(bytes == from_hex("00 00 00 15 01 00 00 00 04 00 00 80 3E 00 00 00 BF 00 00 00 3E "
                            "00 00 00 00"));
  }
  SECTION("ef2bdb8 ERROR [1.0] and handshake error vector (9.3)") {
    CHECK(encode_frame(Framing::A, MessageType::Error, {1.0f}) ==
          from_hex("00 00 00 09 FF 00 00 00 01 00 00 80 3F"));
    CHECK(encode_frame(Framing::A, MessageType::Handshake, {-1, 2001, 1, 0, 0}) ==
          from_hex("00 00 00 19 02 00 00 00 05 00 00 80 BF 00 20 FA 44 00 00 80 3F 00 00 00 00 "
                   "00 00 00 00"));
    CHECK(encode_frame(Framing::A, MessageType::ActionOutput, {}) ==
          from_hex("00 00 00 05 01 00 00 00 00"));
  }
  SECTION("framing C carries the DEADBEEF magic and otherwise B's layout") {
    auto b = encode_frame(Framing::B, MessageType::ActionOutput, {0.5f});
    auto c = encode_frame(Framing::C, MessageType::ActionOutput, {0.5f});
    REQUIRE(b.size() == c.size());
    CHECK(hex({c.begin(), c.begin() + 4}) == "deadbeef");
    CHECK(std::equal(b.begin() + 4, b.end(), c.begin() + 4));
  }
}

TEST_CASE("headers are checked before any body is read", "[server]") {
  FrameHeader h;
  SECTION("a consistent header passes and decodes") {
    auto f = from_hex("52 4F 42 4F 00 00 00 35 00 00 00 00 0C");
    REQUIRE(parse_header(Framing::B, f.data(), 4096, &h) == HeaderProblem::None);
    CHECK(h.length == 53);
    CHECK(h.type == 0);
    CHECK(h.count == 12);
  }
  SECTION("bad magic") {
    auto f = from_hex("52 4F 42 58 00 00 00 35 00 00 00 00 0C");
    CHECK(parse_header(Framing::B, f.data(), 4096, &h) == HeaderProblem::BadMagic);
  }
  SECTION("length that disagrees with count") {
    auto f = from_hex("00 00 00 19 00 00 00 00 04");
    CHECK(parse_header(Framing::A, f.data(), 4096, &h) == HeaderProblem::LengthMismatch);
    auto zero = from_hex("00 00 00 00 00 00 00 00 00");
    CHECK(parse_header(Framing::A, zero.data(), 4096, &h) == HeaderProblem::LengthMismatch);
  }
  SECTION("count or length above the limit") {
    auto big_count = from_hex("00 00 40 09 00 00 00 10 02");
    CHECK(parse_header(Framing::A, big_count.data(), 4096, &h) == HeaderProblem::TooLarge);
    auto big_length = from_hex("52 4F 42 4F FF FF FF FF 00 00 00 00 01");
    CHECK(parse_header(Framing::B, big_length.data(), 4096, &h) == HeaderProblem::TooLarge);
    // "ROBO" read as a framing-A length (what ef2bdb8 did) is refused as too large.
    auto robo_as_a = from_hex("52 4F 42 4F 00 00 00 00 21");
    CHECK(parse_header(Framing::A, robo_as_a.data(), 4096, &h) == HeaderProblem::TooLarge);
  }
}

TEST_CASE("payload floats are little-endian f32", "[server]") {
  auto body = from_hex("CD CC CC 3D 66 66 66 3F 00 00 80 BF");
  auto v = decode_floats(body.data(), 3);
  CHECK(v[0] == 0.1f);
  CHECK(v[1] == 0.9f);
  CHECK(v[2] == -1.0f);
}
