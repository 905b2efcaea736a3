// How the legacy parts put their state into one archive (brain/persistence.h) and take it back:
// tensors under "<part>.<name>", host scalars, deques and dicts in the JSON meta under
// meta["state"]["<part>"]. Doubles go through JSON with 17 significant digits, so they round-trip
// exactly. A reader throws std::runtime_error naming the missing or mistyped key.
#pragma once

#include <torch/torch.h>

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace fieldbrain::legacy {

struct StateWriter {
  std::map<std::string, torch::Tensor> tensors;
  nlohmann::json state = nlohmann::json::object();

  void tensor(const std::string& key, const torch::Tensor& t) {
    tensors[key] = t.defined() ? t.detach().to(torch::kCPU).contiguous().clone() : torch::Tensor();
    if (!t.defined()) tensors.erase(key);
  }
};

struct StateReader {
  const std::map<std::string, torch::Tensor>& tensors;
  const nlohmann::json& state;

  bool has_tensor(const std::string& key) const { return tensors.count(key) != 0; }
  torch::Tensor tensor(const std::string& key) const {
    auto it = tensors.find(key);
    if (it == tensors.end()) throw std::runtime_error("legacy state: missing tensor '" + key + "'");
    return it->second.clone();
  }
  // A tensor that must have this dtype and shape.
  torch::Tensor tensor(const std::string& key, torch::ScalarType dtype,
                       torch::IntArrayRef shape) const {
    torch::Tensor t = tensor(key);
    if (t.scalar_type() != dtype || t.sizes() != shape)
      throw std::runtime_error("legacy state: tensor '" + key + "' has the wrong dtype or shape");
    return t;
  }
  const nlohmann::json& at(const std::string& part) const {
    if (!state.contains(part))
      throw std::runtime_error("legacy state: missing part '" + part + "'");
    return state.at(part);
  }
};

}  // namespace fieldbrain::legacy
