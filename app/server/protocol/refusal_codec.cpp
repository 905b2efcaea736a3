#include "app/server/protocol/refusal_codec.h"

#include <algorithm>

#include "app/server/protocol/printable.h"

namespace fieldbrain::server {

const char* const kHttpRefusalLine =
    "fieldbrain: this is the robot port (binary frames or JSON lines), not HTTP\n";

WireMessage RefusalCodec::decode() {
  if (opening_ == Opening::Tls) {
    // A fatal alert record (TLS 1.0 framing, accepted by every version): handshake_failure.
    static const char alert[] = {0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28};
    return WireFatal{kCodeInvalidMessage,
                     "TLS ClientHello on the robot port (it does not speak TLS), closing",
                     std::string(alert, sizeof alert)};
  }
  // The request line, as far as it has arrived, for the log.
  const auto* p = reinterpret_cast<const char*>(data());
  const size_t eol = static_cast<size_t>(
      std::find_if(p, p + buffered(), [](char c) { return c == '\r' || c == '\n'; }) - p);
  const std::string body = kHttpRefusalLine;
  std::string reply = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  return WireFatal{kCodeInvalidMessage,
                   "HTTP request on the robot port ('" + printable(std::string_view(p, eol), 60) +
                       "'), answered 400, closing",
                   std::move(reply)};
}

}  // namespace fieldbrain::server
