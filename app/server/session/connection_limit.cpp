#include "app/server/session/connection_limit.h"

namespace fieldbrain::server {

ConnectionLimit::ConnectionLimit(int max_total, int max_per_address)
    : max_total_(max_total),
      max_per_address_(max_per_address),
      counts_(std::make_shared<Counts>()) {}

ConnectionLimit::Ticket ConnectionLimit::admit(const std::string& address, std::string* why) {
  {
    std::lock_guard<std::mutex> lock(counts_->mutex);
    auto it = counts_->per_address.find(address);
    const int from_address = it == counts_->per_address.end() ? 0 : it->second;
    if (counts_->total >= max_total_) {
      if (why) *why = "at its cap of " + std::to_string(max_total_) + " connections";
      return nullptr;
    }
    if (from_address >= max_per_address_) {
      if (why) *why = std::to_string(from_address) + " connections from this address already";
      return nullptr;
    }
    ++counts_->total;
    ++counts_->per_address[address];
  }
  // The deleter keeps the counts alive; the ticket's pointer itself is never read.
  return Ticket(counts_.get(), [counts = counts_, address](const void*) {
    std::lock_guard<std::mutex> lock(counts->mutex);
    --counts->total;
    auto it = counts->per_address.find(address);
    if (it != counts->per_address.end() && --it->second <= 0) counts->per_address.erase(it);
  });
}

int ConnectionLimit::total() const {
  std::lock_guard<std::mutex> lock(counts_->mutex);
  return counts_->total;
}

}  // namespace fieldbrain::server
