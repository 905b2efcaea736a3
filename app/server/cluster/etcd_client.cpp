#include "app/server/cluster/etcd_client.h"

#include <openssl/evp.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace fieldbrain::server::cluster {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

namespace {

// etcd answers a whole prefix listing in one body; a fleet's robots fit well inside this.
constexpr uint64_t kMaxReplyBytes = 16u << 20;

std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), int(in.size()));
  out.resize(size_t(n));
  return out;
}

std::string unbase64(const std::string& in) {
  if (in.empty()) return {};
  if (in.size() % 4 != 0) throw EtcdError("etcd sent a value that is not base64");
  std::string out(3 * in.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), int(in.size()));
  if (n < 0) throw EtcdError("etcd sent a value that is not base64");
  size_t padding = 0;  // EVP_DecodeBlock counts the padding's zero bytes
  for (size_t i = in.size(); i > 0 && in[i - 1] == '='; --i) ++padding;
  out.resize(size_t(n) - padding);
  return out;
}

// The gateway writes 64-bit integers as strings, and leaves out fields that are zero.
int64_t integer(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {
    try {
      size_t used = 0;
      const int64_t v = std::stoll(it->get<std::string>(), &used);
      if (used == it->get<std::string>().size()) return v;
    } catch (const std::exception&) {
    }
  }
  throw EtcdError(std::string("etcd sent a field \"") + field + "\" that is not an integer");
}

KeyValue key_value(const json& kv) {
  KeyValue out;
  out.key = unbase64(kv.value("key", std::string()));
  out.value = unbase64(kv.value("value", std::string()));
  out.lease = integer(kv, "lease");
  out.create_revision = integer(kv, "create_revision");
  out.mod_revision = integer(kv, "mod_revision");
  return out;
}

// The smallest key greater than every key starting with `prefix` (etcd's range_end for a
// prefix): the prefix with its last byte below 0xff incremented and the rest dropped.
std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last < 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

json parse_reply(const std::string& body, const std::string& path) {
  json reply = json::parse(body, nullptr, false);
  if (!reply.is_object()) throw EtcdError("etcd's reply to " + path + " is not a JSON object");
  return reply;
}

}  // namespace

EtcdClient::EtcdClient(EtcdOptions options) : options_(std::move(options)) {
  if (options_.endpoints.empty()) throw std::invalid_argument("no etcd endpoint given");
}

std::string EtcdClient::call(const std::string& path, const std::string& body) {
  size_t first;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = preferred_;
  }
  std::string why;
  for (size_t k = 0; k < options_.endpoints.size(); ++k) {
    const size_t index = (first + k) % options_.endpoints.size();
    const EtcdEndpoint& endpoint = options_.endpoints[index];
    net::io_context io;
    tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    beast::flat_buffer buffer;
    http::request<http::string_body> request{http::verb::post, path, 11};
    request.set(http::field::host, endpoint.host);
    request.set(http::field::content_type, "application/json");
    request.body() = body;
    request.prepare_payload();
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxReplyBytes);
    beast::error_code failure;
    bool done = false;
    auto fail = [&](beast::error_code ec) {
      failure = ec;
      done = true;
    };
    stream.expires_after(options_.timeout);
    resolver.async_resolve(
        endpoint.host, std::to_string(endpoint.port),
        [&](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) return fail(ec);
          stream.async_connect(results, [&](beast::error_code ec, const tcp::endpoint&) {
            if (ec) return fail(ec);
            http::async_write(stream, request, [&](beast::error_code ec, size_t) {
              if (ec) return fail(ec);
              http::async_read(stream, buffer, parser,
                               [&](beast::error_code ec, size_t) { fail(ec); });
            });
          });
        });
    io.run_for(options_.timeout);
    if (!done) {
      why = endpoint.text() + ": no answer within " + std::to_string(options_.timeout.count()) +
            " ms";
      continue;
    }
    if (failure) {
      why = endpoint.text() + ": " + failure.message();
      continue;
    }
    const auto& reply = parser.get();
    const unsigned status = reply.result_int();
    if (status >= 500) {
      why = endpoint.text() + ": HTTP " + std::to_string(status) + " " + reply.body();
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      preferred_ = index;
    }
    if (status != 200) {
      throw EtcdError("etcd at " + endpoint.text() + " refused " + path + ": HTTP " +
                      std::to_string(status) + " " + reply.body());
    }
    return reply.body();
  }
  throw EtcdUnavailable("etcd unreachable (" + why + ")");
}

int64_t EtcdClient::grant(int64_t ttl_s) {
  const json reply = parse_reply(call("/v3/lease/grant", json{{"TTL", ttl_s}}.dump()),
                                 "lease/grant");
  const int64_t id = integer(reply, "ID");
  if (id == 0) {
    throw EtcdError("etcd granted no lease: " + reply.value("error", reply.dump()));
  }
  return id;
}

int64_t EtcdClient::keep_alive(int64_t lease) {
  const json reply = parse_reply(
      call("/v3/lease/keepalive", json{{"ID", std::to_string(lease)}}.dump()), "lease/keepalive");
  // The gateway streams keep-alive replies: one {"result": {...}} per request sent.
  const json& result = reply.contains("result") ? reply["result"] : reply;
  if (!result.is_object()) throw EtcdError("etcd's keep-alive reply has no result");
  return integer(result, "TTL");  // absent (0) once the lease is gone
}

void EtcdClient::revoke(int64_t lease) {
  call("/v3/lease/revoke", json{{"ID", std::to_string(lease)}}.dump());
}

CreateResult EtcdClient::create(const std::string& key, const std::string& value, int64_t lease) {
  const std::string k = base64(key);
  json put = {{"key", k}, {"value", base64(value)}};
  if (lease != 0) put["lease"] = std::to_string(lease);
  const json txn = {
      {"compare", json::array({{{"key", k},
                                {"result", "EQUAL"},
                                {"target", "CREATE"},
                                {"create_revision", "0"}}})},
      {"success", json::array({{{"request_put", put}}})},
      {"failure", json::array({{{"request_range", {{"key", k}}}}})}};
  const json reply = parse_reply(call("/v3/kv/txn", txn.dump()), "kv/txn");
  CreateResult out;
  out.created = reply.value("succeeded", false);
  if (!out.created) {
    const json& responses = reply.value("responses", json::array());
    if (!responses.empty() && responses[0].contains("response_range")) {
      const json& kvs = responses[0]["response_range"].value("kvs", json::array());
      if (!kvs.empty()) out.current = key_value(kvs[0]);
    }
  }
  return out;
}

void EtcdClient::put(const std::string& key, const std::string& value, int64_t lease) {
  json request = {{"key", base64(key)}, {"value", base64(value)}};
  if (lease != 0) request["lease"] = std::to_string(lease);
  call("/v3/kv/put", request.dump());
}

std::optional<KeyValue> EtcdClient::get(const std::string& key) {
  const json reply =
      parse_reply(call("/v3/kv/range", json{{"key", base64(key)}}.dump()), "kv/range");
  const json& kvs = reply.value("kvs", json::array());
  if (kvs.empty()) return std::nullopt;
  return key_value(kvs[0]);
}

std::vector<KeyValue> EtcdClient::list(const std::string& prefix) {
  const json reply = parse_reply(
      call("/v3/kv/range",
           json{{"key", base64(prefix)}, {"range_end", base64(prefix_end(prefix))}}.dump()),
      "kv/range");
  std::vector<KeyValue> out;
  for (const json& kv : reply.value("kvs", json::array())) out.push_back(key_value(kv));
  return out;
}

bool EtcdClient::replace_if_unchanged(const std::string& key, const std::string& value,
                                      int64_t mod_revision) {
  const std::string k = base64(key);
  const json txn = {
      {"compare", json::array({{{"key", k},
                                {"result", "EQUAL"},
                                {"target", "MOD"},
                                {"mod_revision", std::to_string(mod_revision)}}})},
      {"success", json::array({{{"request_put", {{"key", k}, {"value", base64(value)}}}}})}};
  const json reply = parse_reply(call("/v3/kv/txn", txn.dump()), "kv/txn");
  return reply.value("succeeded", false);
}

bool EtcdClient::remove_if(const std::string& key, const std::string& value) {
  const std::string k = base64(key);
  const json txn = {
      {"compare", json::array({{{"key", k},
                                {"result", "EQUAL"},
                                {"target", "VALUE"},
                                {"value", base64(value)}}})},
      {"success", json::array({{{"request_delete_range", {{"key", k}}}}})}};
  const json reply = parse_reply(call("/v3/kv/txn", txn.dump()), "kv/txn");
  return reply.value("succeeded", false);
}

bool EtcdClient::remove(const std::string& key) {
  const json reply = parse_reply(
      call("/v3/kv/deleterange", json{{"key", base64(key)}}.dump()), "kv/deleterange");
  return integer(reply, "deleted") > 0;
}

}  // namespace fieldbrain::server::cluster
