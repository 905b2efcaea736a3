// A brain archive: named tensors plus JSON metadata in one file that Python opens with
// `torch.load` (a dict {"format", "version", "meta", "tensors", "sha256"}), written
// atomically and verified on load.
//
// Guarantees:
//  - save_archive writes `path` atomically: temp file in the same directory, fsync, rename,
//    fsync of the directory. A crash at any point leaves either the old file or the new one.
//  - "sha256" is SHA-256 (OpenSSL) over the metadata and the exact bytes, dtype and shape of
//    every tensor (see archive_digest); load_archive recomputes it and refuses a mismatch.
//  - load_archive throws std::runtime_error naming the path and the problem (missing,
//    truncated or corrupt, wrong format, checksum mismatch); it never returns partial data.
//  - Tensors are saved from (and loaded to) the CPU; callers move them to their device.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace fieldbrain {

struct Archive {
  std::map<std::string, torch::Tensor> tensors;
  nlohmann::json meta;
};

void save_archive(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const nlohmann::json& meta);

Archive load_archive(const std::string& path);

// Hex SHA-256 over: "fieldbrain-archive-v1\0", the metadata's compact dump, "\0", then per
// tensor in name order: name "\0" dtype-name "\0" ndim and dims (int64 little-endian), and
// the tensor's contiguous bytes. scripts/verify_archive.py computes the same in Python.
std::string archive_digest(const std::map<std::string, torch::Tensor>& tensors,
                           const std::string& meta_dump);

// Writes `bytes` to `path` atomically (temp + fsync + rename + directory fsync).
// Throws std::runtime_error with the failing step and errno text.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace fieldbrain
