#include "app/server/cluster/fleet_gate.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <cmath>

#include "app/server/protocol/handshake.h"

namespace fieldbrain::server::cluster {

namespace {

OwnershipOptions ownership_options(const ClusterConfig& c, std::string server_id,
                                   std::string address) {
  OwnershipOptions o;
  o.cluster = c.name;
  o.server_id = std::move(server_id);
  o.address = std::move(address);
  o.lease_ttl_s = c.lease_ttl_s;
  o.renew_every = std::chrono::milliseconds(int64_t(std::lround(c.renew_every_s * 1000)));
  // Trust the lease one renewal period less than etcd keeps it, and never less than the
  // longest a renewal can take.
  o.safety_margin = std::max(o.renew_every, std::chrono::milliseconds(int64_t(
                                                std::lround(c.etcd_timeout_s * 1000))));
  return o;
}

EtcdOptions etcd_options(const ClusterConfig& c) {
  EtcdOptions o;
  o.endpoints = parse_etcd_endpoints(c.etcd);
  o.timeout = std::chrono::milliseconds(int64_t(std::lround(c.etcd_timeout_s * 1000)));
  return o;
}

// One record as identities.json writes it; read back through IdentityStore::parse, so a record
// in etcd is checked exactly as one in the file.
std::string record_text(const std::string& identity, const IdentityRecord& record) {
  IdentityStore one;
  one.put(identity, record);
  return one.to_file_json()["robots"][identity].dump();
}

}  // namespace

FleetGate::FleetGate(const ClusterConfig& config, std::string server_id, std::string address,
                     RobotPolicy policy)
    : config_(config),
      policy_(std::move(policy)),
      etcd_(etcd_options(config)),
      ownership_(etcd_, ownership_options(config, std::move(server_id), std::move(address))) {}

FleetGate::~FleetGate() { stop(); }

std::string FleetGate::identity_key(const std::string& identity) const {
  return "/fieldbrain/" + config_.name + "/identities/" + identity;
}

void FleetGate::start() {
  // Admissions that wait for a handover block a thread each: enough for a server's share of
  // a failover at once.
  pool_ = std::make_unique<boost::asio::thread_pool>(8);
  ownership_.start();
  spdlog::info("cluster: server {} joined fleet '{}' (etcd {}, lease {} s)",
               ownership_.options().server_id, config_.name, config_.etcd, config_.lease_ttl_s);
}

void FleetGate::stop() {
  if (pool_) {
    pool_->join();
    pool_.reset();
  }
  ownership_.stop();
}

void FleetGate::set_handlers(LostHandler lost, HandoverHandler handover) {
  ownership_.on_lost(std::move(lost));
  ownership_.on_takeover(
      [handover = std::move(handover)](const std::string& identity, const std::string&) {
        if (handover) handover(identity);
      });
}

void FleetGate::admit(const IdentityClaim& claim, std::function<void(FleetAdmission)> done) {
  if (!pool_) {
    FleetAdmission refused;
    refused.code = kCodeSessionLimit;
    refused.error = "this server is not serving the fleet now";
    done(std::move(refused));
    return;
  }
  boost::asio::post(*pool_, [this, claim, done = std::move(done)] { done(admit_now(claim)); });
}

std::optional<std::pair<IdentityRecord, int64_t>> FleetGate::read_record(
    const std::string& identity) {
  const auto kv = etcd_.get(identity_key(identity));
  if (!kv) return std::nullopt;
  IdentityStore one;
  const nlohmann::json file = {{"version", 1},
                               {"robots", {{identity, nlohmann::json::parse(kv->value, nullptr,
                                                                            false)}}}};
  one.parse(file.dump(), "etcd key " + kv->key);  // throws naming the key when damaged
  return std::make_pair(*one.find(identity), kv->mod_revision);
}

FleetAdmission FleetGate::admit_now(const IdentityClaim& claim) {
  FleetAdmission out;
  const std::string identity = identity_of(claim);
  const auto refuse = [&](int code, std::string why) {
    out.ok = false;
    out.code = code;
    out.error = std::move(why);
    // The session logs the refusal under the server-wide log budget; a robot retrying through
    // a long etcd outage must not flood the log from here.
    spdlog::debug("cluster: robot {} refused: {}", identity, out.error);
    return out;
  };
  // Held before this admission (a reconnect to the server that runs the robot): a failure
  // below must not give up a brain that is live here.
  const bool held_before = ownership_.holds(identity);
  const auto give_back = [&] {
    if (!held_before && ownership_.holds(identity)) ownership_.release(identity);
  };
  {
    // A release of this robot still on its way to etcd lands first (bounded by its timeout).
    std::unique_lock<std::mutex> lock(releasing_mutex_);
    released_.wait_for(lock, std::chrono::milliseconds(int64_t(config_.etcd_timeout_s * 2000)),
                       [&] { return releasing_.count(identity) == 0; });
  }
  try {
    // 1. The token and sizes, against the fleet's record, before anything is taken: a claim
    //    without the right token must not make the robot's server hand the brain over.
    auto stored = read_record(identity);
    IdentityStore scratch;
    if (stored) scratch.put(identity, stored->first);
    IdentityDecision d = decide_identity(scratch, policy_, claim);
    if (!d.ok) return refuse(d.code, d.error);

    // 2. The robot, from whichever server runs it.
    const double wait_s =
        std::max(policy_.takeover_after_s, double(config_.lease_ttl_s)) + config_.renew_every_s * 2;
    const ClaimResult taken = ownership_.acquire(
        identity, std::chrono::milliseconds(int64_t(std::lround(wait_s * 1000))));
    if (taken.outcome == ClaimOutcome::OwnedElsewhere) {
      return refuse(kCodeDuplicateSession, taken.error);
    }
    if (taken.outcome != ClaimOutcome::Owned) {
      return refuse(kCodeSessionLimit, taken.error + "; try again later");
    }

    // 3. A first claim's record (and token) into the fleet, before the token is handed out.
    if (d.store_changed) {
      const std::string text = record_text(identity, *scratch.find(identity));
      const bool written =
          stored ? etcd_.replace_if_unchanged(identity_key(identity), text, stored->second)
                 : etcd_.create(identity_key(identity), text, 0).created;
      if (!written) {
        // Another server recorded this identity meanwhile: decide again against its record.
        stored = read_record(identity);
        IdentityStore again;
        if (stored) again.put(identity, stored->first);
        d = decide_identity(again, policy_, claim);
        if (!d.ok || d.store_changed) {
          give_back();
          return d.ok ? refuse(kCodeSessionLimit, "the robot's fleet record changed while it "
                                                  "was being written; try again")
                      : refuse(d.code, d.error);
        }
        scratch = again;
      }
    }
    out.ok = true;
    out.record = *scratch.find(identity);
    out.issued_token = d.issued_token;
    return out;
  } catch (const EtcdUnavailable& e) {
    give_back();
    return refuse(kCodeSessionLimit, std::string("the fleet's etcd cannot be reached (") +
                                         e.what() + "): no new robots now; try again later");
  } catch (const std::exception& e) {
    give_back();
    return refuse(kCodeSessionLimit, std::string("the fleet's records could not be used: ") +
                                         e.what());
  }
}

void FleetGate::release(const std::string& identity) {
  // Not held from this moment (a save of it is refused), the key deleted off this thread.
  if (!ownership_.forget(identity) || !pool_) return;
  {
    std::lock_guard<std::mutex> lock(releasing_mutex_);
    ++releasing_[identity];
  }
  boost::asio::post(*pool_, [this, identity] {
    ownership_.drop_key(identity);
    std::lock_guard<std::mutex> lock(releasing_mutex_);
    if (--releasing_[identity] == 0) releasing_.erase(identity);
    released_.notify_all();
  });
}

bool FleetGate::may_save(const std::string& identity) const { return ownership_.holds(identity); }

bool FleetGate::healthy() const { return ownership_.lease_valid(); }

}  // namespace fieldbrain::server::cluster
