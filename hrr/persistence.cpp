#include "hrr/persistence.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <vector>

#include "brain/archive_layout.h"
#include "brain/plain_pickle.h"
#include "hrr/sha256.h"

namespace fieldbrain::hrr {
namespace {

constexpr int64_t kFormatVersion = 1;
const char* const kVocabularyFormat = "fieldbrain-hrr/vocabulary";
const char* const kItemMemoryFormat = "fieldbrain-hrr/item-memory";

// What every file holds besides its scalar metadata.
struct Record {
  std::map<std::string, torch::IValue> scalars;  // sorted: the digest order
  std::string list_key;                          // "names" or "labels"
  std::vector<std::string> entries;
  torch::Tensor vectors;  // [N, D], CPU, contiguous
};

[[noreturn]] void refuse(const std::string& path, const std::string& reason) {
  throw std::runtime_error("hrr: refusing to load '" + path + "': " + reason);
}

std::string canonical(const std::string& key, const torch::IValue& value) {
  if (value.isInt()) return std::to_string(value.toInt());
  if (value.isBool()) return value.toBool() ? "true" : "false";
  if (value.isString()) return value.toStringRef();
  if (value.isDouble()) {
    const double d = value.toDouble();
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, sizeof bits);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(bits));
    return hex;
  }
  throw std::runtime_error("field '" + key + "' has an unsupported type");
}

std::string digest_of(const Record& record) {
  Sha256 sha;
  sha.update("fieldbrain-hrr-digest-v1\n");
  for (const auto& [key, value] : record.scalars) {
    sha.update(key).update("=").update(canonical(key, value)).update("\n");
  }
  sha.update(record.list_key).update("\n");
  for (const std::string& entry : record.entries) {
    sha.update_u64_le(entry.size()).update(entry);
  }
  const torch::Tensor& v = record.vectors;
  sha.update("vectors\n")
      .update_u64_le(static_cast<std::uint64_t>(v.size(0)))
      .update_u64_le(static_cast<std::uint64_t>(v.size(1)));
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "digest assumes little-endian hosts");
  sha.update(v.data_ptr(), v.numel() * v.element_size());
  return "sha256:" + to_hex(sha.finish());
}

std::string dtype_name(torch::Dtype dtype) {
  return dtype == torch::kFloat64 ? "float64" : "float32";
}

void write_atomically(const std::string& path, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string temp =
      path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  auto failure = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw std::runtime_error("hrr: cannot save '" + path + "': " + what + ": " + reason);
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) failure("cannot create " + temp);
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      failure("write failed");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    failure("fsync failed");
  }
  if (::close(fd) != 0) failure("close failed");
  if (::rename(temp.c_str(), path.c_str()) != 0) failure("rename failed");
  // Make the rename itself durable.
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void save_record(const Record& record, const std::string& path) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [key, value] : record.scalars) dict.insert(key, value);
  c10::List<std::string> entries;
  for (const std::string& e : record.entries) entries.push_back(e);
  dict.insert(record.list_key, torch::IValue(entries));
  dict.insert("vectors", record.vectors);
  dict.insert("digest", torch::IValue(digest_of(record)));
  write_atomically(path, pickle_save_plain(torch::IValue(dict)));
}

std::string first_line(const std::exception& error) {
  // c10::Error::what() appends a backtrace; the first line is the reason.
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  std::string text = c10_error ? c10_error->what_without_backtrace() : error.what();
  const std::size_t newline = text.find('\n');
  return newline == std::string::npos ? text : text.substr(0, newline);
}

torch::IValue field(const c10::Dict<torch::IValue, torch::IValue>& dict, const std::string& key,
                    const std::string& path) {
  const auto found = dict.find(torch::IValue(key));
  if (found == dict.end()) refuse(path, "missing field '" + key + "'");
  return found->value();
}

// Reads, unpickles and verifies; `format` and the names of the scalar fields are checked.
Record load_record(const std::string& path, const std::string& format,
                   const std::vector<std::string>& scalar_keys, const std::string& list_key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("hrr: cannot open '" + path + "' for reading");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) refuse(path, "the file is empty");
  // torch's zip writer ends the file with the 22-byte end-of-central-directory record and no
  // comment; the zip reader alone tolerates losing its last bytes, so check it is complete.
  static const char kEndOfCentralDirectory[] = {'P', 'K', 5, 6};
  if (bytes.size() < 22 ||
      std::memcmp(bytes.data() + bytes.size() - 22, kEndOfCentralDirectory, 4) != 0) {
    refuse(path,
           "the file is truncated (or has trailing bytes): it does not end with a zip "
           "end-of-central-directory record");
  }

  // The same layout and pickle-program checks as a brain save, before LibTorch reads it.
  const std::string layout = archive_layout_problem(bytes);
  if (!layout.empty()) refuse(path, "not a readable torch archive: " + layout);

  torch::IValue root;
  try {
    root = torch::pickle_load(bytes);
  } catch (const std::exception& error) {
    refuse(path,
           "not a readable torch archive (truncated or corrupted file?): " + first_line(error));
  }
  if (!root.isGenericDict()) refuse(path, "the archive does not hold a dict");
  const c10::Dict<torch::IValue, torch::IValue> dict = root.toGenericDict();

  Record record;
  record.list_key = list_key;
  try {
    const torch::IValue fmt = field(dict, "format", path);
    if (!fmt.isString() || fmt.toStringRef() != format) {
      refuse(path, "format is not '" + format + "'");
    }
    for (const std::string& key : scalar_keys) {
      const torch::IValue value = field(dict, key, path);
      if (!(value.isInt() || value.isBool() || value.isString() || value.isDouble())) {
        refuse(path, "field '" + key + "' has the wrong type");
      }
      record.scalars.emplace(key, value);
    }
    const torch::IValue list = field(dict, list_key, path);
    if (!list.isList()) refuse(path, "field '" + list_key + "' is not a list");
    for (const torch::IValue& entry : list.toListRef()) {
      if (!entry.isString()) refuse(path, "field '" + list_key + "' holds a non-string");
      record.entries.push_back(entry.toStringRef());
    }
    const torch::IValue vectors = field(dict, "vectors", path);
    if (!vectors.isTensor() || vectors.toTensor().dim() != 2) {
      refuse(path, "field 'vectors' is not a [N, D] tensor");
    }
    record.vectors = vectors.toTensor().contiguous();
    const torch::IValue digest = field(dict, "digest", path);
    if (!digest.isString()) refuse(path, "field 'digest' is not a string");
    if (digest.toStringRef() != digest_of(record)) {
      refuse(path, "SHA-256 integrity check failed (the file was modified or corrupted)");
    }
  } catch (const c10::Error& error) {
    refuse(path, "malformed content: " + first_line(error));
  }
  if (!record.scalars.at("format_version").isInt() ||
      record.scalars.at("format_version").toInt() != kFormatVersion) {
    refuse(path, "unsupported format_version (this build reads version " +
                     std::to_string(kFormatVersion) + ")");
  }
  if (static_cast<int64_t>(record.entries.size()) != record.vectors.size(0) ||
      !record.scalars.at("dim").isInt() ||
      record.scalars.at("dim").toInt() != record.vectors.size(1)) {
    refuse(path, "vectors do not match the names and dim recorded in the file");
  }
  const torch::IValue& dtype_field = record.scalars.at("dtype");
  const std::string dtype = dtype_field.isString() ? dtype_field.toStringRef() : "?";
  const auto stored = record.vectors.scalar_type();
  if ((stored != torch::kFloat32 && stored != torch::kFloat64) || dtype != dtype_name(stored)) {
    refuse(path, "dtype field '" + dtype + "' does not match the stored tensor");
  }
  return record;
}

torch::Tensor cpu_rows(const torch::Tensor& vectors) { return vectors.detach().cpu().contiguous(); }

std::map<std::string, torch::IValue> common_scalars(const char* format, int64_t dim,
                                                   torch::Dtype dtype) {
  return {{"format", std::string(format)},
          {"format_version", kFormatVersion},
          {"dim", dim},
          {"dtype", dtype_name(dtype)}};
}

void require_int(const Record& r, const std::string& key, const std::string& path) {
  if (!r.scalars.at(key).isInt()) refuse(path, "field '" + key + "' is not an int");
}

}  // namespace

void save_vocabulary(const Vocabulary& vocabulary, const std::string& path) {
  const VocabularyOptions& o = vocabulary->options();
  Record record;
  record.scalars = common_scalars(kVocabularyFormat, o.dim(), o.dtype());
  record.scalars.emplace("seed", std::to_string(o.seed()));
  record.scalars.emplace("unitary", o.unitary());
  record.scalars.emplace("scheme", std::string("sha256-boxmuller-v1"));
  record.list_key = "names";
  record.entries = vocabulary->names();
  record.vectors = cpu_rows(vocabulary->vectors());
  save_record(record, path);
}

Vocabulary load_vocabulary(const std::string& path) {
  Record r = load_record(path, kVocabularyFormat,
                         {"format", "format_version", "dim", "dtype", "seed", "unitary", "scheme"},
                         "names");
  require_int(r, "dim", path);
  if (!r.scalars.at("unitary").isBool() || !r.scalars.at("seed").isString() ||
      !r.scalars.at("scheme").isString()) {
    refuse(path, "fields 'unitary'/'seed'/'scheme' have the wrong type");
  }
  if (r.scalars.at("scheme").toStringRef() != "sha256-boxmuller-v1") {
    refuse(path, "unknown vector scheme '" + r.scalars.at("scheme").toStringRef() + "'");
  }
  std::uint64_t seed = 0;
  try {
    std::size_t used = 0;
    seed = std::stoull(r.scalars.at("seed").toStringRef(), &used);
    if (used != r.scalars.at("seed").toStringRef().size()) throw std::invalid_argument("seed");
  } catch (const std::exception&) {
    refuse(path, "field 'seed' is not an unsigned integer");
  }
  Vocabulary vocabulary(VocabularyOptions(r.scalars.at("dim").toInt())
                            .seed(seed)
                            .unitary(r.scalars.at("unitary").toBool())
                            .dtype(r.vectors.scalar_type()));
  vocabulary->restore(std::move(r.entries), r.vectors);
  return vocabulary;
}

void save_item_memory(const ItemMemory& memory, const std::string& path) {
  const ItemMemoryOptions& o = memory->options();
  Record record;
  record.scalars = common_scalars(kItemMemoryFormat, o.dim(), o.dtype());
  record.scalars.emplace("similarity",
                         std::string(o.similarity() == SimilarityKind::kDot ? "dot" : "cosine"));
  record.scalars.emplace("threshold", o.threshold());
  record.list_key = "labels";
  record.entries = memory->labels();
  record.vectors = cpu_rows(memory->vectors());
  save_record(record, path);
}

ItemMemory load_item_memory(const std::string& path) {
  Record r = load_record(path, kItemMemoryFormat,
                         {"format", "format_version", "dim", "dtype", "similarity", "threshold"},
                         "labels");
  require_int(r, "dim", path);
  const torch::IValue& similarity = r.scalars.at("similarity");
  if (!similarity.isString() ||
      (similarity.toStringRef() != "cosine" && similarity.toStringRef() != "dot")) {
    refuse(path, "field 'similarity' must be \"cosine\" or \"dot\"");
  }
  if (!r.scalars.at("threshold").isDouble()) refuse(path, "field 'threshold' is not a float");
  ItemMemory memory(ItemMemoryOptions(r.scalars.at("dim").toInt())
                        .dtype(r.vectors.scalar_type())
                        .similarity(similarity.toStringRef() == "dot" ? SimilarityKind::kDot
                                                                      : SimilarityKind::kCosine)
                        .threshold(r.scalars.at("threshold").toDouble()));
  if (!r.entries.empty()) memory->add(r.entries, r.vectors);
  if (memory->size() != static_cast<int64_t>(r.entries.size())) {
    refuse(path, "duplicate labels");
  }
  return memory;
}

}  // namespace fieldbrain::hrr
