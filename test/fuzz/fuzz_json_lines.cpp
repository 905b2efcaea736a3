// libFuzzer harness: JSON lines, both as whole lines (parse_json_line) and as a stream through
// JsonCodec, whose replies must each be one line of valid JSON whatever the client sent
// (invalid UTF-8 included). Error messages quoting client text must be printable ASCII.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "app/server/protocol/json_codec.h"
#include "app/server/protocol/json_lines.h"

using namespace fieldbrain::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_reply(const std::string& line) {
  if (line.empty()) return;
  check(line.back() == '\n');
  check(line.find('\n') == line.size() - 1);
  check(!nlohmann::json::parse(line, nullptr, false).is_discarded());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  JsonMessage m = parse_json_line(text, 64, 16, 4);
  if (auto* bad = std::get_if<JsonBad>(&m)) {
    for (char c : bad->message) check(c >= 0x20 && c < 0x7f);
    check_reply(json_error_reply(bad->code, bad->message));
  } else if (auto* hs = std::get_if<JsonHandshake>(&m)) {
    check(hs->sensory_dim >= 1 && hs->sensory_dim <= 64);
    check_reply(json_handshake_reply(hs->robot_id, hs->sensory_dim, hs->motor_dim, 3, hs->token));
  }

  CodecLimits limits;
  limits.max_line = 512;
  JsonCodec codec(limits);
  size_t at = 0;
  while (at < size) {
    const size_t n = std::min<size_t>(97, size - at);
    std::memcpy(codec.prepare(n), data + at, n);
    codec.commit(n);
    at += n;
    check(codec.buffered() <= limits.max_line + 97);
    for (;;) {
      WireMessage msg = codec.decode();
      if (std::holds_alternative<NeedMore>(msg)) break;
      std::string out;
      if (auto* hs = std::get_if<WireHandshake>(&msg)) {
        HandshakeAccepted a;
        a.key = hs->identity;
        a.sensory_dim = hs->sensory_dim;
        a.motor_dim = hs->motor_dim;
        codec.encode_accepted(a, out);
      } else if (auto* u = std::get_if<WireUnknown>(&msg)) {
        codec.encode_unknown(u->what, out);
      } else if (auto* r = std::get_if<WireRejected>(&msg)) {
        codec.encode_rejected(r->code, r->why, 2, out);
      } else if (auto* f = std::get_if<WireFatal>(&msg)) {
        check_reply(f->reply);
        return 0;
      }
      check_reply(out);
    }
  }
  return 0;
}
