// Reading JSON config objects with errors a person can act on, shared by the brain's config
// (brain_config.cpp) and the server's (app/server/server_config.cpp, robot_policy.cpp):
//   - a key of the wrong type names the key, the type it wants and the value it got, in words:
//       config key 'brain.resolution' must be a whole number, not 16.5 (a number with a fraction)
//     (nlohmann's own get<int>() truncates 16.5 to 16, so every scalar is checked here first);
//   - an unknown key is refused with the closest known key:
//       unknown config key 'brain.resolutoin' (did you mean 'resolution'?)
//   - a value from a fixed set lists the set and the closest entry:
//       config key 'brain.field_step' is "fastt"; valid values: "reference", "fast", "script"
//       (did you mean "fast"?)
//   - a file that is not JSON names the file, the line and the column.
// A new key gets all of this by being read with read_key / read_choice and listed in the
// known keys; nothing here knows any key. Header-only and torch-free, so the server's
// protocol library (which does not link the brain) uses it too. Every error is a
// std::invalid_argument, except parse_json_file's (std::runtime_error: the file, not a key).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fieldbrain::config {

// A value in words for an error message: `16.5 (a number with a fraction)`, `"fast" (a
// string)`, `an object`. Long values are cut.
inline std::string describe_value(const nlohmann::json& v) {
  auto shown = [&](const char* words) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text + " (" + words + ")";
  };
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return shown("a string");
    case nlohmann::json::value_t::boolean:
      return shown("true/false");
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return shown("a whole number");
    case nlohmann::json::value_t::number_float:
      return shown("a number with a fraction");
    default:
      return shown("a value");
  }
}

// Edit distance counting a swap of two neighbours as one edit (optimal string alignment), so
// "prot" is one edit from "port".
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The candidate closest to `given` when it is close enough to be a typo (at most half its
// letters, or two, differ: "warning" -> "warn", "resolutoin" -> "resolution"), else "".
inline std::string closest(const std::string& given, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, given.size() / 2) + 1;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(given, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

// `"a", "b", "c"`.
inline std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

// Refuses any key of `j` not in `known`, naming it as prefix + key with the closest known key
// (or, when none is close, the list of keys).
inline void check_known_keys(const nlohmann::json& j, const std::string& prefix,
                             const std::vector<std::string>& known) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    const std::string guess = closest(it.key(), known);
    throw std::invalid_argument("unknown config key '" + prefix + it.key() + "'" +
                                (guess.empty() ? "; known keys: " + quoted_list(known)
                                               : " (did you mean '" + guess + "'?)"));
  }
}

namespace detail {

[[noreturn]] inline void wrong_type(const std::string& name, const char* wanted,
                                    const nlohmann::json& v) {
  throw std::invalid_argument("config key '" + name + "' must be " + wanted + ", not " +
                              describe_value(v));
}

template <typename T>
struct IsStringMap : std::false_type {};
template <typename V>
struct IsStringMap<std::map<std::string, V>> : std::true_type {};

// Reads v (the value of config key `name`) into out, checking its JSON type first.
template <typename T>
void read_value(const nlohmann::json& v, const std::string& name, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) wrong_type(name, "true or false", v);
    out = v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    // 16.0 is a whole number written with a point; 16.5 is not, and is never truncated.
    const bool whole =
        v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                  std::floor(v.get<double>()) == v.get<double>());
    if (!whole) wrong_type(name, "a whole number", v);
    const double d = v.get<double>();
    if (std::is_unsigned_v<T> && d < 0) wrong_type(name, "a whole number >= 0", v);
    using Limits = std::numeric_limits<T>;
    bool fits;
    if (v.is_number_unsigned()) {
      fits = v.get<uint64_t>() <= static_cast<uint64_t>(Limits::max());
    } else if (v.is_number_integer()) {
      const int64_t x = v.get<int64_t>();
      fits = x >= 0 ? static_cast<uint64_t>(x) <= static_cast<uint64_t>(Limits::max())
                    : x >= static_cast<int64_t>(Limits::min());
    } else {
      fits = d >= static_cast<double>(Limits::min()) && d <= static_cast<double>(Limits::max());
    }
    if (!fits) {
      throw std::invalid_argument("config key '" + name + "' = " + v.dump() + " is out of range [" +
                                  std::to_string(Limits::min()) + ", " +
                                  std::to_string(Limits::max()) + "]");
    }
    out = v.is_number_float() ? static_cast<T>(d) : v.get<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) wrong_type(name, "a number", v);
    out = v.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) wrong_type(name, "a string", v);
    out = v.get<std::string>();
  } else if constexpr (IsStringMap<T>::value) {
    if (!v.is_object()) wrong_type(name, "an object", v);
    T result;
    for (auto it = v.begin(); it != v.end(); ++it) {
      read_value(it.value(), name + "." + it.key(), result[it.key()]);
    }
    out = std::move(result);
  } else {
    try {
      out = v.get<T>();
    } catch (const nlohmann::json::exception&) {
      wrong_type(name, "of another type", v);
    }
  }
}

}  // namespace detail

// Reads j[key] into out when present (a missing key keeps out's default). `prefix` is "" for
// top-level keys, "brain." or "robots." for a nested object's.
template <typename T>
void read_key(const nlohmann::json& j, const std::string& prefix, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  detail::read_value(*it, prefix + key, out);
}

// One named value of a config enum: {"fast", FieldStep::fast}.
template <typename E>
struct Choice {
  const char* name;
  E value;
};

// Names of a choice table, in order.
template <typename E, size_t N>
std::vector<std::string> choice_names(const Choice<E> (&choices)[N]) {
  std::vector<std::string> names;
  for (const auto& c : choices) names.emplace_back(c.name);
  return names;
}

// The error for a string that is none of `valid`; `also` adds words after the list (", or the
// path of a TorchScript .pt file").
[[noreturn]] inline void not_a_choice(const std::string& name, const std::string& given,
                                      const std::vector<std::string>& valid,
                                      const std::string& also = "") {
  const std::string guess = closest(given, valid);
  throw std::invalid_argument("config key '" + name + "' is \"" + given +
                              "\"; valid values: " + quoted_list(valid) + also +
                              (guess.empty() ? "" : " (did you mean \"" + guess + "\"?)"));
}

// Reads j[key], a string naming one of `choices`, into out (an enum).
template <typename E, size_t N>
void read_choice(const nlohmann::json& j, const std::string& prefix, const char* key, E& out,
                 const Choice<E> (&choices)[N]) {
  auto it = j.find(key);
  if (it == j.end()) return;
  std::string given;
  detail::read_value(*it, prefix + key, given);
  for (const auto& c : choices) {
    if (given == c.name) {
      out = c.value;
      return;
    }
  }
  not_a_choice(prefix + key, given, choice_names(choices));
}

// The name of `value` in `choices` (to_json of a config enum).
template <typename E, size_t N>
const char* choice_name(E value, const Choice<E> (&choices)[N]) {
  for (const auto& c : choices) {
    if (c.value == value) return c.name;
  }
  return "?";
}

// Parses a config file. Throws std::runtime_error "cannot open config file X" or
// "config file X is not valid JSON: line L, column C: <what the parser expected>".
inline nlohmann::json parse_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open config file " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the character the parser stopped at: the last character
    // of the token it could not take.
    const size_t stop = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < stop; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    const size_t detail = what.find("syntax error");
    what = detail == std::string::npos ? what : what.substr(detail);
    throw std::runtime_error("config file " + path + " is not valid JSON: line " +
                             std::to_string(line) + ", column " + std::to_string(column) + ": " +
                             what);
  }
}

}  // namespace fieldbrain::config
