#include "app/sim/brain_connection.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "app/server/protocol/handshake.h"

namespace fieldbrain::sim {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

BrainConnection::BrainConnection(LinkOptions options, RobotTokens& tokens, ReconnectPolicy policy)
    : options_(std::move(options)), tokens_(tokens), policy_(policy) {}

const HandshakeReply& BrainConnection::handshake_once() {
  if (link_) link_->close();
  LinkOptions o = options_;
  if (o.framing == Framing::JsonLines) o.token = tokens_.find(o.robot_id);
  link_ = std::make_unique<RobotLink>(o);
  try {
    const HandshakeReply& hs = link_->connect();
    if (o.framing == Framing::JsonLines) tokens_.accepted(o.robot_id, hs.token);
    return hs;
  } catch (const HandshakeRefused& e) {
    if (e.code != server::kCodeIdentityRefused) throw;
    const std::string where =
        tokens_.path().empty() ? std::string("no tokens file") : "the tokens file " + tokens_.path();
    throw HandshakeRefused(
        e.code, std::string(e.what()) + " [" +
                    (o.token.empty() ? where + " has no token for '" + o.robot_id + "'"
                                     : "the token sent for '" + o.robot_id + "' (from " +
                                           (where) + " or --token) is not this server's") +
                    ": run with --tokens naming the file an earlier run wrote, give --token, "
                    "or choose another --robot-id]");
  }
}

const HandshakeReply& BrainConnection::connect() { return handshake_once(); }

ReconnectOutcome BrainConnection::reconnect(const std::function<bool()>& stopping) {
  ReconnectOutcome out;
  const auto lost = Clock::now();
  if (link_) link_->close();
  double wait = policy_.first_wait_s;
  while (policy_.give_up_after_s > 0 && !stopping()) {
    ++out.attempts;
    try {
      handshake_once();
      out.ok = true;
      break;
    } catch (const std::exception& e) {
      out.last_error = e.what();
    }
    if (seconds_since(lost) + wait > policy_.give_up_after_s) break;
    // Sleep in short steps so that a Ctrl-C is seen at once.
    const auto until = Clock::now() + std::chrono::duration<double>(wait);
    while (Clock::now() < until && !stopping()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    wait = std::min(2 * wait, policy_.max_wait_s);
  }
  out.seconds = seconds_since(lost);
  return out;
}

}  // namespace fieldbrain::sim
