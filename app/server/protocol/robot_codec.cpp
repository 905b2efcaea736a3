#include "app/server/protocol/robot_codec.h"

#include "app/server/protocol/binary_codec.h"
#include "app/server/protocol/json_codec.h"
#include "app/server/protocol/refusal_codec.h"

namespace fieldbrain::server {

uint8_t* RobotCodec::prepare(size_t max) {
  if (start_ == in_.size()) {
    in_.clear();
    start_ = 0;
  } else if (start_ > 0 && start_ >= in_.size() / 2) {
    // Slide the unread tail to the front; amortised, and the capacity is kept.
    in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  prepared_at_ = in_.size();
  in_.resize(prepared_at_ + (max ? max : 1));
  return in_.data() + prepared_at_;
}

void RobotCodec::commit(size_t n) {
  // prepare() grew the buffer by its `max`; keep only what the read delivered.
  in_.resize(prepared_at_ + n);
}

void RobotCodec::consume(size_t n) { start_ += n; }

std::unique_ptr<RobotCodec> make_robot_codec(Opening opening, const CodecLimits& limits) {
  switch (opening) {
    case Opening::A:
      return std::make_unique<BinaryCodec>(Framing::A, limits);
    case Opening::B:
      return std::make_unique<BinaryCodec>(Framing::B, limits);
    case Opening::C:
      return std::make_unique<BinaryCodec>(Framing::C, limits);
    case Opening::JsonLines:
      return std::make_unique<JsonCodec>(limits);
    case Opening::Http:
    case Opening::Tls:
      return std::make_unique<RefusalCodec>(opening);
  }
  return nullptr;
}

}  // namespace fieldbrain::server
