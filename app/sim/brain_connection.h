// One simulated robot's connection to the brain server as a robot keeps it: the JSON
// robot's token sent and stored (RobotTokens), and after a lost connection a reconnection
// with back-off (0.1 s doubling to 2 s) until the server answers again or `give_up_after_s`
// has passed, so a server restart or a fleet failover shows in the run as a gap, not an end.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "app/sim/robot_link.h"
#include "app/sim/robot_tokens.h"

namespace fieldbrain::sim {

struct ReconnectPolicy {
  double give_up_after_s = 30.0;  // 0: no reconnection, a lost connection ends the robot
  double first_wait_s = 0.1;
  double max_wait_s = 2.0;
};

// What one reconnection cost.
struct ReconnectOutcome {
  bool ok = false;
  int attempts = 0;
  double seconds = 0.0;  // from the lost connection to the new handshake's reply
  std::string last_error;  // the last attempt's error ("" when the first succeeded)
};

class BrainConnection {
 public:
  BrainConnection(LinkOptions options, RobotTokens& tokens, ReconnectPolicy policy);

  // The first connection. Throws LinkError (a 2005 refusal says what to do about the token).
  const HandshakeReply& connect();

  // Reconnects after `exchange` failed: attempts until one succeeds, `stopping()` turns true
  // or the policy gives up. Never throws.
  ReconnectOutcome reconnect(const std::function<bool()>& stopping);

  std::vector<float> exchange(const std::vector<float>& sensors, std::optional<float> reward) {
    return link_->exchange(sensors, reward);
  }
  void close() { link_->close(); }
  const HandshakeReply& handshake() const { return link_->handshake(); }
  const ReconnectPolicy& policy() const { return policy_; }

 private:
  const HandshakeReply& handshake_once();

  LinkOptions options_;
  RobotTokens& tokens_;
  ReconnectPolicy policy_;
  std::unique_ptr<RobotLink> link_;
};

}  // namespace fieldbrain::sim
