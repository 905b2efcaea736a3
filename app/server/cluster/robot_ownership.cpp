#include "app/server/cluster/robot_ownership.h"

#include <spdlog/spdlog.h>

namespace fieldbrain::server::cluster {

using Clock = std::chrono::steady_clock;

RobotOwnership::RobotOwnership(EtcdClient& etcd, OwnershipOptions options)
    : etcd_(etcd), options_(std::move(options)) {
  if (options_.server_id.empty()) throw std::invalid_argument("cluster: server id is empty");
  if (options_.lease_ttl_s < 2) throw std::invalid_argument("cluster: lease TTL below 2 s");
  if (options_.renew_every * 3 > std::chrono::seconds(options_.lease_ttl_s)) {
    throw std::invalid_argument("cluster: the lease must be renewed at least 3 times per TTL");
  }
}

RobotOwnership::~RobotOwnership() { stop(); }

void RobotOwnership::on_lost(LostHandler handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  lost_handler_ = std::move(handler);
}

void RobotOwnership::on_takeover(TakeoverHandler handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  takeover_handler_ = std::move(handler);
}

std::string RobotOwnership::robot_key(const std::string& identity) const {
  return "/fieldbrain/" + options_.cluster + "/robots/" + identity;
}
std::string RobotOwnership::takeover_key(const std::string& identity) const {
  return "/fieldbrain/" + options_.cluster + "/takeover/" + identity;
}
std::string RobotOwnership::server_key() const {
  return "/fieldbrain/" + options_.cluster + "/servers/" + options_.server_id;
}

bool RobotOwnership::valid_locked() const { return lease_ != 0 && Clock::now() < valid_until_; }

bool RobotOwnership::lease_valid() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return valid_locked();
}

bool RobotOwnership::holds(const std::string& identity) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return valid_locked() && owned_.count(identity) != 0;
}

std::vector<std::string> RobotOwnership::owned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {owned_.begin(), owned_.end()};
}

void RobotOwnership::start() {
  const auto t0 = Clock::now();
  const int64_t lease = etcd_.grant(options_.lease_ttl_s);
  etcd_.put(server_key(), options_.address, lease);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lease_ = lease;
    valid_until_ = t0 + std::chrono::seconds(options_.lease_ttl_s) - options_.safety_margin;
    stopping_ = false;
  }
  thread_ = std::thread([this] { renew_loop(); });
}

void RobotOwnership::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  int64_t lease;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lease = lease_;
    lease_ = 0;
    owned_.clear();
  }
  if (lease == 0) return;
  try {
    etcd_.revoke(lease);  // every robot key of this server goes at once
  } catch (const std::exception& e) {
    spdlog::warn("cluster: revoking the lease at stop failed ({}); etcd drops it after {} s",
                 e.what(), options_.lease_ttl_s);
  }
}

void RobotOwnership::renew_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.renew_every, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    renew_once();
    poll_takeovers();
    lock.lock();
  }
}

void RobotOwnership::renew_once() {
  int64_t lease;
  std::vector<std::string> unreleased;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lease = lease_;
  }
  const auto t0 = Clock::now();
  if (lease == 0) {  // lost earlier: a fresh lease once etcd answers again
    try {
      const int64_t fresh = etcd_.grant(options_.lease_ttl_s);
      etcd_.put(server_key(), options_.address, fresh);
      std::lock_guard<std::mutex> lock(mutex_);
      lease_ = fresh;
      valid_until_ = t0 + std::chrono::seconds(options_.lease_ttl_s) - options_.safety_margin;
      spdlog::info("cluster: new etcd lease; accepting robots again");
    } catch (const std::exception&) {
    }
    return;
  }
  try {
    const int64_t ttl = etcd_.keep_alive(lease);
    if (ttl <= 0) {
      lose_everything("the etcd lease expired (this server was silent longer than its TTL)");
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (lease_ == lease && Clock::now() < valid_until_) {
      valid_until_ = t0 + std::chrono::seconds(ttl) - options_.safety_margin;
    } else if (lease_ == lease) {
      // Renewed, but only after this server had stopped trusting the lease: holds() answered
      // false meanwhile, so give everything up rather than resume behind the robots' backs.
      lease = -lease;
    }
  } catch (const std::exception& e) {
    double left_s;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      left_s = std::chrono::duration<double>(valid_until_ - Clock::now()).count();
    }
    if (left_s <= 0) {
      lose_everything(std::string("etcd unreachable past the lease: ") + e.what());
    } else {
      spdlog::warn("cluster: renewing the etcd lease failed ({}); its robots stay for {:.1f} s",
                   e.what(), left_s);
    }
    return;
  }
  if (lease < 0) lose_everything("the etcd lease was renewed too late to be trusted");
}

void RobotOwnership::lose_everything(const std::string& why) {
  std::vector<std::string> lost;
  int64_t lease;
  LostHandler handler;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lost.assign(owned_.begin(), owned_.end());
    owned_.clear();
    takeovers_seen_.clear();
    lease = lease_;
    lease_ = 0;
    handler = lost_handler_;
  }
  spdlog::error("cluster: {}; giving up {} robot(s) and refusing new ones until etcd answers",
                why, lost.size());
  if (lease != 0) {
    try {
      etcd_.revoke(lease);  // frees the robots for other servers now, not at the TTL
    } catch (const std::exception&) {
    }
  }
  if (handler && !lost.empty()) handler(lost);
}

void RobotOwnership::poll_takeovers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (owned_.empty() || !valid_locked()) return;
  }
  const std::string prefix = "/fieldbrain/" + options_.cluster + "/takeover/";
  std::vector<KeyValue> requests;
  try {
    requests = etcd_.list(prefix);
  } catch (const std::exception&) {
    return;  // the renewal decides what etcd's silence means
  }
  std::vector<std::pair<std::string, std::string>> to_tell;
  TakeoverHandler handler;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, std::string> seen;
    for (const KeyValue& kv : requests) {
      const std::string identity = kv.key.substr(prefix.size());
      if (!owned_.count(identity) || kv.value == options_.server_id) continue;
      seen[identity] = kv.value;
      const auto it = takeovers_seen_.find(identity);
      if (it == takeovers_seen_.end() || it->second != kv.value) to_tell.emplace_back(identity, kv.value);
    }
    takeovers_seen_ = std::move(seen);
    handler = takeover_handler_;
  }
  for (const auto& [identity, requester] : to_tell) {
    spdlog::info("cluster: server {} asks for robot {}: handing it over", requester, identity);
    if (handler) handler(identity, requester);
  }
}

ClaimResult RobotOwnership::claim(const std::string& identity) {
  ClaimResult out;
  int64_t lease;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!valid_locked()) {
      out.error = "this server cannot reach the fleet's etcd, so it takes no new robots now";
      return out;
    }
    if (owned_.count(identity)) {
      out.outcome = ClaimOutcome::Owned;
      return out;
    }
    lease = lease_;
  }
  try {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const CreateResult r = etcd_.create(robot_key(identity), options_.server_id, lease);
      if (r.created) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (lease_ != lease) {  // the lease was lost while asking: the key dies with it
          out.error = "this server lost its etcd lease while taking the robot";
          return out;
        }
        owned_.insert(identity);
        out.outcome = ClaimOutcome::Owned;
        return out;
      }
      if (!r.current) continue;  // released in between: try again
      if (r.current->value == options_.server_id && r.current->lease != lease) {
        // Left by an earlier lease of this server (lost, revoke failed): not a live owner.
        etcd_.remove_if(robot_key(identity), options_.server_id);
        continue;
      }
      // This server's own key on its live lease, though it no longer holds the robot: a
      // release is still on its way to etcd. Reported as held here, so acquire() waits for it.
      out.outcome = ClaimOutcome::OwnedElsewhere;
      out.owner = r.current->value;
      return out;
    }
    out.error = "the robot's ownership key kept changing in etcd";
  } catch (const EtcdUnavailable& e) {
    out.error = std::string("the fleet's etcd cannot be reached (") + e.what() + ")";
  } catch (const EtcdError& e) {
    out.error = e.what();
  }
  return out;
}

ClaimResult RobotOwnership::acquire(const std::string& identity, std::chrono::milliseconds wait) {
  ClaimResult r = claim(identity);
  if (r.outcome != ClaimOutcome::OwnedElsewhere) return r;
  int64_t lease;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lease = lease_;
  }
  const std::string owner = r.owner;
  try {
    etcd_.put(takeover_key(identity), options_.server_id, lease);
  } catch (const std::exception& e) {
    r.outcome = ClaimOutcome::Unavailable;
    r.error = std::string("asking server ") + owner + " for the robot failed: " + e.what();
    return r;
  }
  const auto deadline = Clock::now() + wait;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r = claim(identity);
    if (r.outcome != ClaimOutcome::OwnedElsewhere) break;
  }
  try {
    etcd_.remove_if(takeover_key(identity), options_.server_id);
  } catch (const std::exception&) {
    // under this server's lease: it goes with the lease at the latest
  }
  if (r.outcome == ClaimOutcome::OwnedElsewhere) {
    r.error = "the robot runs on server " + r.owner + ", which did not hand it over within " +
              std::to_string(wait.count()) + " ms";
  }
  return r;
}

void RobotOwnership::release(const std::string& identity) {
  if (forget(identity)) drop_key(identity);
}

bool RobotOwnership::forget(const std::string& identity) {
  std::lock_guard<std::mutex> lock(mutex_);
  takeovers_seen_.erase(identity);
  return owned_.erase(identity) != 0;
}

void RobotOwnership::drop_key(const std::string& identity) {
  try {
    etcd_.remove_if(robot_key(identity), options_.server_id);
  } catch (const std::exception& e) {
    // The key stays under a lease this server keeps renewing: nobody could take the robot
    // until this server stops. Give the lease up so the fleet is not blocked.
    lose_everything(std::string("releasing robot ") + identity + " failed: " + e.what());
  }
}

}  // namespace fieldbrain::server::cluster
