#include "app/server/config/etcd_endpoints.h"

#include <stdexcept>

namespace fieldbrain::server::cluster {

std::vector<EtcdEndpoint> parse_etcd_endpoints(const std::string& list) {
  std::vector<EtcdEndpoint> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                      : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const std::string original = item;
    if (item.rfind("http://", 0) == 0) item = item.substr(7);
    if (!item.empty() && item.back() == '/') item.pop_back();
    const size_t colon = item.rfind(':');
    if (item.find("://") != std::string::npos || colon == std::string::npos || colon == 0) {
      throw std::invalid_argument("etcd endpoint \"" + original +
                                  "\" is not http://host:port");
    }
    EtcdEndpoint e;
    e.host = item.substr(0, colon);
    const std::string port = item.substr(colon + 1);
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || value > 65535) {
        value = -1;
        break;
      }
      value = value * 10 + (c - '0');
    }
    if (port.empty() || value < 1 || value > 65535) {
      throw std::invalid_argument("etcd endpoint \"" + original + "\" has no valid port");
    }
    e.port = uint16_t(value);
    out.push_back(e);
  }
  if (out.empty()) throw std::invalid_argument("no etcd endpoint given");
  return out;
}

}  // namespace fieldbrain::server::cluster
