// The replies of one connection waiting to be written, in order, with their byte count (the
// back-pressure measure). Written buffers are kept for reuse, so encoding a reply allocates
// no new string buffer in a lock-step exchange. A deque, because the front reply is being
// written from while others are pushed: its bytes must not move (a short string keeps them
// inside the object, so a vector's reallocation would move them).
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace fieldbrain::server {

class ReplyQueue {
 public:
  // An empty string, with the capacity of an earlier reply when one is free.
  std::string take_buffer() {
    if (spare_.empty()) return std::string();
    std::string s = std::move(spare_.back());
    spare_.pop_back();
    s.clear();
    return s;
  }
  void push(std::string bytes) {
    bytes_ += bytes.size();
    items_.push_back(std::move(bytes));
  }
  bool empty() const { return items_.empty(); }
  const std::string& front() const { return items_.front(); }
  // Drops the front reply (written) and keeps its buffer for take_buffer().
  void pop_front() {
    bytes_ -= items_.front().size();
    if (spare_.size() < kSpares) spare_.push_back(std::move(items_.front()));
    items_.pop_front();
  }
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kSpares = 4;
  std::deque<std::string> items_;
  size_t bytes_ = 0;
  std::vector<std::string> spare_;
};

}  // namespace fieldbrain::server
