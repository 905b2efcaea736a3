// Saving and loading vocabularies and item memories with integrity.
//
// File = one plain dict in torch.save's format (brain/plain_pickle.h: no TorchScript type
// tags), so Python opens it with torch.load(path, weights_only=True):
//   {"format": "fieldbrain-hrr/vocabulary" | "fieldbrain-hrr/item-memory",
//    "format_version": 1, "dim": D, "dtype": "float32" | "float64",
//    vocabulary:  "seed": "<u64 decimal>", "unitary": bool, "scheme": "sha256-boxmuller-v1",
//    item memory: "similarity": "cosine" | "dot", "threshold": float,
//    "names": [str, ...]  (vocabulary) | "labels": [str, ...] (item memory),
//    "vectors": Tensor [N, D] (CPU, contiguous),
//    "digest": "sha256:<64 hex>"}
//
// digest = SHA-256 of
//   "fieldbrain-hrr-digest-v1\n"
//   for every scalar field except "digest", in sorted key order: "<key>=<value>\n" with ints in
//     decimal, bools as true/false, strings raw, floats as the 16-hex-digit IEEE-754 bit pattern
//   "<names|labels>\n", then per entry: byte length as u64 LE, then the UTF-8 bytes
//   "vectors\n", N and D as u64 LE, then the raw little-endian bytes of the tensor
// so it covers the exact bytes of every vector and all metadata (scripts/hrr/hrr_reference.py
// recomputes it independently).
//
// Writes are atomic: a temp file in the same directory, fsync, rename, fsync of the directory.
// Loads refuse anything that does not verify (bad digest, truncated or corrupted archive,
// missing or mistyped field, wrong format) with std::runtime_error naming the path and reason.
#pragma once

#include <string>

#include "hrr/item_memory.h"
#include "hrr/vocabulary.h"

namespace fieldbrain::hrr {

void save_vocabulary(const Vocabulary& vocabulary, const std::string& path);
Vocabulary load_vocabulary(const std::string& path);  // on the CPU; .to(device) afterwards

void save_item_memory(const ItemMemory& memory, const std::string& path);
ItemMemory load_item_memory(const std::string& path);  // on the CPU

}  // namespace fieldbrain::hrr
