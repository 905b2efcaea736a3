// A cap on connections at once, in total and per peer address, for a port whose sessions
// live on one I/O thread or several (the web port's HTTP connections, issue 24 item 2).
// admit() hands out a ticket; the connection holds it and its place is free again when the
// last copy of the ticket goes, whenever and wherever that is (the counts outlive the limit
// object, so a session destroyed with its io_context after the limit is gone is harmless).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fieldbrain::server {

class ConnectionLimit {
 public:
  using Ticket = std::shared_ptr<const void>;

  ConnectionLimit(int max_total, int max_per_address);

  // A ticket for one more connection from `address`, or null when it must be refused;
  // `why` (when given) then says which cap it met.
  Ticket admit(const std::string& address, std::string* why = nullptr);
  int total() const;

 private:
  struct Counts {
    std::mutex mutex;
    int total = 0;
    std::map<std::string, int> per_address;
  };
  const int max_total_;
  const int max_per_address_;
  std::shared_ptr<Counts> counts_;
};

}  // namespace fieldbrain::server
