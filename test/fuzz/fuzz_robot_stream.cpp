// libFuzzer harness: the robot port's byte stream as RobotSession sees it. The first bytes
// choose the codec (classify_opening: framing A/B/C, JSON lines, HTTP, TLS), the rest arrives
// in reads whose sizes the input also chooses, and every decoded message is answered through
// the codec's encoders. Checks, beyond ASan/UBSan: a codec never buffers more than one
// maximal message plus one read, a Fatal ends the stream, decoded sizes respect the limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "app/server/protocol/robot_codec.h"

using namespace fieldbrain::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  CodecLimits limits;
  limits.max_frame_floats = 256;  // small limits reach the edges quickly
  limits.max_dim = 64;
  limits.max_line = 2048;
  const size_t chunk = 1 + data[0] % 64;  // read size, as the network might deliver
  data += 1;
  size -= 1;
  size_t have = 0;
  while (have < size && !classify_opening(data, have)) ++have;
  const auto opening = classify_opening(data, have);
  if (!opening) return 0;
  auto codec = make_robot_codec(*opening, limits);
  const size_t max_held = 13 + 4 * limits.max_frame_floats + limits.max_line + chunk;
  size_t at = 0;
  int motor_dim = 0;
  std::string out;
  while (at < size) {
    const size_t n = std::min(chunk, size - at);
    std::memcpy(codec->prepare(n), data + at, n);
    codec->commit(n);
    at += n;
    check(codec->buffered() <= max_held);
    for (;;) {
      WireMessage msg = codec->decode();
      if (std::holds_alternative<NeedMore>(msg)) break;
      out.clear();
      if (auto* hs = std::get_if<WireHandshake>(&msg)) {
        check(hs->sensory_dim >= 1 && hs->sensory_dim <= limits.max_dim);
        check(hs->motor_dim >= 1 && hs->motor_dim <= limits.max_dim);
        codec->set_sensory_dim(hs->sensory_dim);
        motor_dim = hs->motor_dim;
        HandshakeAccepted a;
        a.key = hs->identity;
        a.sensory_dim = hs->sensory_dim;
        a.motor_dim = hs->motor_dim;
        a.caps = hs->caps;
        codec->encode_accepted(a, out);
      } else if (auto* s = std::get_if<WireSensors>(&msg)) {
        check(s->values.size() <= limits.max_frame_floats);
        codec->encode_motors(std::vector<float>(static_cast<size_t>(motor_dim), 0.5f), 1, out);
        codec->encode_rejected(7001, "fuzz", motor_dim, out);
      } else if (auto* u = std::get_if<WireUnknown>(&msg)) {
        codec->encode_unknown(u->what, out);
      } else if (auto* r = std::get_if<WireRejected>(&msg)) {
        codec->encode_refused(r->code, r->why, out);
      } else {
        return 0;  // Fatal: the session closes here
      }
    }
  }
  return 0;
}
