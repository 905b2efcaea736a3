// The layout of a torch.save-style zip archive checked against the file's size before LibTorch
// reads any of it. Header-only: brain saves (brain/persistence.cpp) and HRR archives
// (hrr/persistence.cpp) both check with it, without one library depending on the other.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <boost/crc.hpp>
#include <caffe2/serialize/versions.h>

#include "brain/pickle_program.h"

namespace fieldbrain {

// LibTorch 1.13 trusts the sizes in a save: the zip reader allocates each record's claimed
// size and the unpickler each string's claimed length before finding that the file is shorter
// (a 1 KB file claiming a 4 GB string allocates 4 GB: fuzz-brain_save). So the layout is
// checked first, against the file's size: every zip record stored (as torch.save and this
// writer store them) and inside the file, and every length and memo index in data.pkl inside
// data.pkl, and data.pkl is a program LibTorch can run safely (brain/pickle_program.h) whose
// CRC-32 holds. Returns "" when all of that holds, else what is wrong.
inline std::string archive_layout_problem(const std::vector<char>& bytes) {
  const uint64_t size = bytes.size();
  const auto u16 = [&](uint64_t at) {
    return uint64_t(uint8_t(bytes[at])) | uint64_t(uint8_t(bytes[at + 1])) << 8;
  };
  const auto u32 = [&](uint64_t at) { return u16(at) | u16(at + 2) << 16; };
  const auto u64 = [&](uint64_t at) { return u32(at) | u32(at + 4) << 32; };
  // End of central directory: the last signature within 64 KiB of the end.
  if (size < 22) return "too short for a zip archive";
  uint64_t eocd = size - 22;
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  while (u32(eocd) != 0x06054b50) {
    if (eocd == lowest) return "no zip end-of-directory record";
    --eocd;
  }
  uint64_t entries = u16(eocd + 10), cd_size = u32(eocd + 12), cd_offset = u32(eocd + 16);
  if (eocd >= 20 && u32(eocd - 20) == 0x07064b50) {  // zip64 locator
    const uint64_t z = u64(eocd - 20 + 8);
    if (z > size || size - z < 56 || u32(z) != 0x06064b50)
      return "bad zip64 end-of-directory record";
    entries = u64(z + 32);
    cd_size = u64(z + 40);
    cd_offset = u64(z + 48);
  }
  if (cd_offset > size || cd_size > size - cd_offset) return "central directory outside the file";
  uint64_t at = cd_offset, pkl_begin = 0, pkl_end = 0, pkl_crc = 0, version_begin = 0,
           version_end = 0, version_crc = 0;
  std::string folder;  // the first record's folder: LibTorch looks every record up under it
  for (uint64_t i = 0; i < entries; ++i) {
    if (at > size || size - at < 46 || u32(at) != 0x02014b50) return "bad central directory entry";
    const uint64_t method = u16(at + 10), name_len = u16(at + 28), extra_len = u16(at + 30),
                   comment_len = u16(at + 32);
    uint64_t comp = u32(at + 20), uncomp = u32(at + 24), local = u32(at + 42);
    const uint64_t next = at + 46 + name_len + extra_len + comment_len;
    if (next > size) return "bad central directory entry";
    const std::string name(bytes.data() + at + 46, name_len);
    // Zip64 sizes: in the extra field, in this order, for each 32-bit field that is all ones.
    for (uint64_t e = at + 46 + name_len; e + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = u16(e), len = u16(e + 2), end = e + 4 + len;
      if (end > at + 46 + name_len + extra_len) return "bad zip extra field in '" + name + "'";
      if (id == 0x0001) {
        uint64_t f = e + 4;
        for (uint64_t* v : {&uncomp, &comp, &local}) {
          if (*v != 0xffffffffu) continue;
          if (f + 8 > end) return "bad zip64 field in '" + name + "'";
          *v = u64(f);
          f += 8;
        }
      }
      e = end;
    }
    if (method != 0 || comp != uncomp) return "record '" + name + "' is compressed";
    if (local > size || size - local < 30 || u32(local) != 0x04034b50) {
      return "record '" + name + "' has no local header";
    }
    const uint64_t data = local + 30 + u16(local + 26) + u16(local + 28);
    if (data > size || uncomp > size - data) {
      return "record '" + name + "' claims " + std::to_string(uncomp) +
             " bytes past the file's end";
    }
    if (i == 0) {
      if (name.find('/') == std::string::npos) return "first record '" + name + "' has no folder";
      folder = name.substr(0, name.find('/') + 1);
    }
    if (pkl_end == 0 && name == folder + "data.pkl") {
      pkl_begin = data;
      pkl_end = data + uncomp;
      pkl_crc = u32(at + 16);
    }
    if (name == folder + ".data/version" || (version_end == 0 && name == folder + "version")) {
      version_begin = data;
      version_end = data + uncomp;
      version_crc = u32(at + 16);
    }
    at = next;
  }
  if (pkl_end == 0) return "no data.pkl record";
  // LibTorch's reader throws on a bad "version" record from inside its constructor, which
  // leaks the zip reader's state (fuzz-brain_save): the same checks, first (its value, and the
  // CRC-32 the zip reader verifies when it reads the record).
  if (version_end == 0) return "no version record";
  boost::crc_32_type version_sum;
  version_sum.process_bytes(bytes.data() + version_begin, version_end - version_begin);
  if (version_sum.checksum() != version_crc) return "the version record fails its CRC-32 check";
  const std::string version(bytes.data() + version_begin, version_end - version_begin);
  const size_t digits = version.find_first_not_of(" \t\n");
  uint64_t file_version = 0;
  const auto parsed =
      digits == std::string::npos
          ? std::from_chars_result{version.data(), std::errc::invalid_argument}
          : std::from_chars(version.data() + digits, version.data() + version.size(), file_version);
  if (parsed.ec != std::errc() ||
      file_version < caffe2::serialize::kMinSupportedFileFormatVersion ||
      file_version > caffe2::serialize::kMaxSupportedFileFormatVersion) {
    return "unsupported zip format version record";
  }
  if (size >= 8 && std::memcmp(bytes.data(), "PYTORCH1", 8) == 0)
    return "a preview-release archive";

  // data.pkl: its program's shape (brain/pickle_program.h), then its CRC-32, which LibTorch's
  // reader does not check.
  const std::string program = pickle_program_problem(bytes.data() + pkl_begin, pkl_end - pkl_begin);
  if (!program.empty()) return program;
  boost::crc_32_type pkl_sum;
  pkl_sum.process_bytes(bytes.data() + pkl_begin, pkl_end - pkl_begin);
  if (pkl_sum.checksum() != pkl_crc) return "data.pkl fails its CRC-32 check";
  return "";
}

}  // namespace fieldbrain
