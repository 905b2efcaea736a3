// A brain archive: named tensors plus JSON metadata in one file that Python opens with
// `torch.load(path, weights_only=True)`: a plain dict {"format": str, "version": int,
// "meta": str (JSON), "tensors": {name: tensor}, "sha256": str}, written atomically and
// verified on load.
//
// Guarantees:
//  - save_archive writes `path` atomically: temp file in the same directory, fsync, rename,
//    fsync of the directory. A crash at any point leaves either the old file or the new one.
//  - "sha256" is SHA-256 (OpenSSL) over the metadata and the exact bytes, dtype and shape of
//    every tensor (see archive_digest); load_archive recomputes it and refuses a mismatch.
//  - load_archive throws std::runtime_error naming the path and the problem (missing,
//    truncated or corrupt, wrong format, checksum mismatch); it never returns partial data.
//  - Tensors are saved from (and loaded to) the CPU; callers move them to their device.
//  - Version 2 is written; version 1 (the same content in type-tagged dicts, which
//    weights_only=True refuses) is still read, so older saves migrate on their next save.
//    Any other version is refused with a message naming it.
//  - Every floating-point tensor must be finite: save_archive refuses (std::runtime_error, the
//    file at `path` untouched) and load_archive refuses a tensor holding a NaN or an Inf,
//    naming it: a poisoned brain never replaces its last good save nor comes back from disk.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace fieldbrain {

struct Archive {
  std::map<std::string, torch::Tensor> tensors;
  nlohmann::json meta;
  int64_t version = 0;  // the file's archive version
};

void save_archive(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const nlohmann::json& meta);

// What an archive will hold, gathered now (host tensors that share nothing with the live
// state) and written later, from any thread: a save off the brain thread that the brain keeps
// stepping past.
struct ArchiveContents {
  std::map<std::string, torch::Tensor> tensors;
  nlohmann::json meta;
  void save(const std::string& path) const { save_archive(path, tensors, meta); }
};

Archive load_archive(const std::string& path);

// Hex SHA-256 over: "fieldbrain-archive-v<version>\0", the metadata's compact dump, "\0", then
// per tensor in name order: name "\0" dtype-name "\0" ndim and dims (int64 little-endian),
// and the tensor's contiguous bytes. scripts/verify_archive.py computes the same in Python.
std::string archive_digest(const std::map<std::string, torch::Tensor>& tensors,
                           const std::string& meta_dump, int64_t version = 2);

// A bank of slots [B, A, ...] saved sparsely: only the slots whose flag in `live` [B, A] is
// non-zero. A brain's attractor bank is 64 MiB per robot at R = 32 and mostly empty, so
// storing it whole made saves ~6x larger and loads ~6x slower than the state they carry.
struct PackedSlots {
  torch::Tensor rows;   // [L, ...] CPU: the live slots, in (robot, slot) order
  torch::Tensor index;  // [L, 2] int64 CPU: (robot, slot) of each row
};
PackedSlots pack_live_slots(const torch::Tensor& bank, const torch::Tensor& live);
// Throws std::runtime_error when `rows`/`index` do not fit `bank` (shapes, dtypes, indices).
void check_packed_slots(const torch::Tensor& bank, const torch::Tensor& rows,
                        const torch::Tensor& index);
// Zeroes `bank` and writes `rows` back at `index`, after check_packed_slots (nothing is
// written when it throws).
void unpack_live_slots(torch::Tensor& bank, const torch::Tensor& rows, const torch::Tensor& index);

// Writes `bytes` to `path` atomically (temp + fsync + rename + directory fsync).
// Throws std::runtime_error with the failing step and errno text.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace fieldbrain
