#include "app/server/worker/robot_table.h"

#include <stdexcept>

namespace fieldbrain::server {

void RobotTable::connect(RobotEntry& robot) {
  robot.view.id = next_id_++;
  owners_[robot.view.id] = robot.entry_number;
}

void RobotTable::disconnect(const RobotEntry& robot) {
  if (robot.view.id != 0) owners_.erase(robot.view.id);
}

RobotEntry& RobotTable::insert(RobotEntry robot) {
  const uint64_t entry = robot.entry_number;
  return brains_.emplace(entry, std::move(robot)).first->second;
}

RobotEntry* RobotTable::owned(RobotId id) {
  auto it = owners_.find(id);
  if (it == owners_.end()) return nullptr;
  return &brains_.at(it->second);
}

const RobotEntry* RobotTable::owned(RobotId id) const {
  auto it = owners_.find(id);
  if (it == owners_.end()) return nullptr;
  return &brains_.at(it->second);
}

RobotEntry* RobotTable::find(uint64_t entry) {
  auto it = brains_.find(entry);
  return it == brains_.end() ? nullptr : &it->second;
}

std::vector<RobotView> RobotTable::robots() const {
  std::vector<RobotView> out;
  for (const auto& [entry, robot] : brains_) {
    if (robot.slot && robot.view.id != 0) out.push_back(robot.view);
  }
  return out;
}

const RobotView* RobotTable::robot_by_key(const std::string& key) const {
  for (const auto& [entry, robot] : brains_) {
    if (robot.slot && robot.view.id != 0 && robot.view.key == key) return &robot.view;
  }
  return nullptr;
}

BrainEngine::Slot RobotTable::slot_of(RobotId id) const {
  const RobotEntry& robot = brains_.at(owners_.at(id));
  if (!robot.slot) throw std::runtime_error(robot.view.key + ": brain still loading");
  return *robot.slot;
}

}  // namespace fieldbrain::server
