// The layout of a torch.save-style zip archive checked against the file's size before LibTorch
// reads any of it. Header-only: brain saves (brain/persistence.cpp) and HRR archives
// (hrr/persistence.cpp) both check with it, and the HRR library, which the brain links, must not
// link the brain back (docs/architecture.md).
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

namespace archive_layout_detail {

// Little-endian reads from the archive's bytes (the caller keeps them inside).
struct Bytes {
  const std::vector<char>& bytes;
  uint64_t size() const { return bytes.size(); }
  uint64_t u16(uint64_t at) const {
    return uint64_t(uint8_t(bytes[at])) | uint64_t(uint8_t(bytes[at + 1])) << 8;
  }
  uint64_t u32(uint64_t at) const { return u16(at) | u16(at + 2) << 16; }
  uint64_t u64(uint64_t at) const { return u32(at) | u32(at + 4) << 32; }
};

struct CentralDirectory {
  uint64_t entries = 0, size = 0, offset = 0;
};

// A record's bytes in the file and the CRC-32 the central directory gives for them.
struct RecordSpan {
  uint64_t begin = 0, end = 0, crc = 0;
};

// The records LibTorch reads: data.pkl and the format version, under the first record's folder.
struct ArchiveRecords {
  std::string folder;
  RecordSpan pkl, version;
};

// The end-of-central-directory record (the last signature within 64 KiB of the end) and its
// zip64 form when there is one; "" or what is wrong.
inline std::string find_central_directory(const Bytes& b, CentralDirectory& cd) {
  const uint64_t size = b.size();
  if (size < 22) return "too short for a zip archive";
  uint64_t eocd = size - 22;
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  while (b.u32(eocd) != 0x06054b50) {
    if (eocd == lowest) return "no zip end-of-directory record";
    --eocd;
  }
  cd = {b.u16(eocd + 10), b.u32(eocd + 12), b.u32(eocd + 16)};
  if (eocd >= 20 && b.u32(eocd - 20) == 0x07064b50) {  // zip64 locator
    const uint64_t z = b.u64(eocd - 20 + 8);
    if (z > size || size - z < 56 || b.u32(z) != 0x06064b50)
      return "bad zip64 end-of-directory record";
    cd = {b.u64(z + 32), b.u64(z + 40), b.u64(z + 48)};
  }
  if (cd.offset > size || cd.size > size - cd.offset) return "central directory outside the file";
  return "";
}

// Zip64 sizes: in the extra field (`begin`..`end`), in this order, for each 32-bit field that
// is all ones.
inline std::string read_zip64_sizes(const Bytes& b, uint64_t begin, uint64_t end,
                                    const std::string& name, uint64_t& uncomp, uint64_t& comp,
                                    uint64_t& local) {
  for (uint64_t e = begin; e + 4 <= end;) {
    const uint64_t id = b.u16(e), len = b.u16(e + 2), field_end = e + 4 + len;
    if (field_end > end) return "bad zip extra field in '" + name + "'";
    if (id == 0x0001) {
      uint64_t f = e + 4;
      for (uint64_t* v : {&uncomp, &comp, &local}) {
        if (*v != 0xffffffffu) continue;
        if (f + 8 > field_end) return "bad zip64 field in '" + name + "'";
        *v = b.u64(f);
        f += 8;
      }
    }
    e = field_end;
  }
  return "";
}

// The central directory entry at `at`: stored and inside the file; notes data.pkl and the
// version record in `records`; `next` is where the following entry starts. "" or what is wrong.
inline std::string read_directory_entry(const Bytes& b, uint64_t at, bool first,
                                        ArchiveRecords& records, uint64_t& next) {
  const uint64_t size = b.size();
  if (at > size || size - at < 46 || b.u32(at) != 0x02014b50) return "bad central directory entry";
  const uint64_t method = b.u16(at + 10), name_len = b.u16(at + 28), extra_len = b.u16(at + 30),
                 comment_len = b.u16(at + 32);
  uint64_t comp = b.u32(at + 20), uncomp = b.u32(at + 24), local = b.u32(at + 42);
  next = at + 46 + name_len + extra_len + comment_len;
  if (next > size) return "bad central directory entry";
  const std::string name(b.bytes.data() + at + 46, name_len);
  const uint64_t extra = at + 46 + name_len;
  const std::string zip64 =
      read_zip64_sizes(b, extra, extra + extra_len, name, uncomp, comp, local);
  if (!zip64.empty()) return zip64;
  if (method != 0 || comp != uncomp) return "record '" + name + "' is compressed";
  if (local > size || size - local < 30 || b.u32(local) != 0x04034b50) {
    return "record '" + name + "' has no local header";
  }
  const uint64_t data = local + 30 + b.u16(local + 26) + b.u16(local + 28);
  if (data > size || uncomp > size - data) {
    return "record '" + name + "' claims " + std::to_string(uncomp) + " bytes past the file's end";
  }
  if (first) {
    if (name.find('/') == std::string::npos) return "first record '" + name + "' has no folder";
    records.folder = name.substr(0, name.find('/') + 1);
  }
  const RecordSpan span{data, data + uncomp, b.u32(at + 16)};
  if (records.pkl.end == 0 && name == records.folder + "data.pkl") records.pkl = span;
  if (name == records.folder + ".data/version" ||
      (records.version.end == 0 && name == records.folder + "version")) {
    records.version = span;
  }
  return "";
}

inline bool crc_holds(const std::vector<char>& bytes, const RecordSpan& span) {
  boost::crc_32_type sum;
  sum.process_bytes(bytes.data() + span.begin, span.end - span.begin);
  return sum.checksum() == span.crc;
}

// LibTorch's reader throws on a bad "version" record from inside its constructor, which leaks
// the zip reader's state (fuzz-brain_save): the same checks, first (its value, and the CRC-32
// the zip reader verifies when it reads the record).
inline std::string version_problem(const std::vector<char>& bytes, const RecordSpan& span) {
  if (span.end == 0) return "no version record";
  if (!crc_holds(bytes, span)) return "the version record fails its CRC-32 check";
  const std::string version(bytes.data() + span.begin, span.end - span.begin);
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
  return "";
}

}  // namespace archive_layout_detail

// LibTorch 1.13 trusts the sizes in a save: the zip reader allocates each record's claimed
// size and the unpickler each string's claimed length before finding that the file is shorter
// (a 1 KB file claiming a 4 GB string allocates 4 GB: fuzz-brain_save). So the layout is
// checked first, against the file's size: every zip record stored (as torch.save and this
// writer store them) and inside the file, and every length and memo index in data.pkl inside
// data.pkl, and data.pkl is a program LibTorch can run safely (brain/pickle_program.h) whose
// CRC-32 holds. Returns "" when all of that holds, else what is wrong.
inline std::string archive_layout_problem(const std::vector<char>& bytes) {
  using namespace archive_layout_detail;
  const Bytes b{bytes};
  CentralDirectory cd;
  if (std::string problem = find_central_directory(b, cd); !problem.empty()) return problem;
  ArchiveRecords records;
  uint64_t at = cd.offset;
  for (uint64_t i = 0; i < cd.entries; ++i) {
    uint64_t next = 0;
    std::string problem = read_directory_entry(b, at, i == 0, records, next);
    if (!problem.empty()) return problem;
    at = next;
  }
  if (records.pkl.end == 0) return "no data.pkl record";
  if (std::string problem = version_problem(bytes, records.version); !problem.empty()) {
    return problem;
  }
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), "PYTORCH1", 8) == 0)
    return "a preview-release archive";

  // data.pkl: its program's shape (brain/pickle_program.h), then its CRC-32, which LibTorch's
  // reader does not check.
  const RecordSpan& pkl = records.pkl;
  const std::string program = pickle_program_problem(bytes.data() + pkl.begin, pkl.end - pkl.begin);
  if (!program.empty()) return program;
  if (!crc_holds(bytes, pkl)) return "data.pkl fails its CRC-32 check";
  return "";
}

}  // namespace fieldbrain
