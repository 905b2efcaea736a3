// A brain archive written the way save_archive writes one (plain pickle, a valid digest) but
// without its checks: for tests that need a file save_archive refuses to write, such as a
// save whose state holds NaN or Inf (issue 36), to see that the reader refuses it.
#pragma once

#include <limits>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "brain/persistence.h"
#include "brain/plain_pickle.h"
#include "test/support/files.h"

namespace fieldbrain::test {

inline void write_forged_archive(const std::string& path,
                                 const std::map<std::string, torch::Tensor>& tensors,
                                 const nlohmann::json& meta) {
  constexpr int64_t kVersion = 2;  // the archive version save_archive writes
  const std::string meta_dump = meta.dump();
  std::map<std::string, torch::Tensor> host;
  for (const auto& [name, tensor] : tensors) {
    host.emplace(name, tensor.to(torch::kCPU).contiguous());
  }
  c10::impl::GenericDict table(c10::StringType::get(), c10::TensorType::get());
  for (const auto& [name, tensor] : host) table.insert(name, tensor);
  c10::impl::GenericDict top(c10::StringType::get(), c10::AnyType::get());
  top.insert("format", std::string("fieldbrain-archive"));
  top.insert("version", kVersion);
  top.insert("meta", meta_dump);
  top.insert("tensors", table);
  top.insert("sha256", archive_digest(host, meta_dump, kVersion));
  write_file(path, pickle_save_plain(top));
}

// The archive at `path` with one NaN written into the first element of its tensor `name`
// (re-signed, so only the finiteness check can refuse it). Reads the file without
// load_archive's checks being in the way: it must be finite to begin with.
inline void poison_archive(const std::string& path, const std::string& name) {
  Archive a = load_archive(path);
  torch::Tensor t = a.tensors.at(name).clone();
  t.view({-1})[0] = std::numeric_limits<float>::quiet_NaN();
  a.tensors[name] = t;
  write_forged_archive(path, a.tensors, a.meta);
}

}  // namespace fieldbrain::test
