// The brains this server holds in memory, by entry number, and which connection drives each
// (RobotId -> entry). Plain bookkeeping for the registry's parts (robot_registry.h); worker
// thread only, no locks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/server/worker/robot_entry.h"

namespace fieldbrain::server {

class RobotTable {
 public:
  using Entries = std::map<uint64_t, RobotEntry>;

  // The number the next entry is known by (a load in flight carries it).
  uint64_t next_entry_number() { return next_entry_++; }
  // Gives `robot` (in the table or about to be) to a new connection: a new RobotId.
  void connect(RobotEntry& robot);
  // Forgets the connection that drives `robot` (its view.id is left to the caller).
  void disconnect(const RobotEntry& robot);
  RobotEntry& insert(RobotEntry robot);
  void erase(uint64_t entry) { brains_.erase(entry); }

  // The entry connection `id` drives; null when it was taken over or released.
  RobotEntry* owned(RobotId id);
  const RobotEntry* owned(RobotId id) const;
  RobotEntry* find(uint64_t entry);
  Entries& entries() { return brains_; }
  const Entries& entries() const { return brains_; }

  template <typename Pred>
  bool any(Pred pred) const {
    return std::any_of(brains_.begin(), brains_.end(),
                       [&](const auto& e) { return pred(e.second); });
  }
  template <typename Pred>
  size_t count(Pred pred) const {
    return static_cast<size_t>(std::count_if(brains_.begin(), brains_.end(),
                                             [&](const auto& e) { return pred(e.second); }));
  }
  template <typename Pred>
  std::vector<uint64_t> entries_where(Pred pred) const {
    std::vector<uint64_t> out;
    for (const auto& [entry, robot] : brains_) {
      if (pred(robot)) out.push_back(entry);
    }
    return out;
  }
  bool holds_base(const std::string& base) const {
    return any([&](const RobotEntry& r) { return r.base == base; });
  }

  std::vector<RobotView> robots() const;  // connected, brain ready (not loading)
  const RobotView* robot_by_key(const std::string& key) const;
  BrainEngine::Slot slot_of(RobotId id) const;           // throws while loading
  size_t live_brains() const { return brains_.size(); }  // loading ones included
  size_t connections() const { return owners_.size(); }

 private:
  Entries brains_;                      // by entry number
  std::map<RobotId, uint64_t> owners_;  // connection -> entry
  uint64_t next_entry_ = 1;
  RobotId next_id_ = 1;
};

}  // namespace fieldbrain::server
