#include "brain/persistence.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <boost/crc.hpp>
#include <caffe2/serialize/versions.h>

#include "brain/archive_layout.h"
#include "brain/plain_pickle.h"
#include "hrr/sha256.h"

namespace fieldbrain {
namespace {

std::string errno_text() { return std::strerror(errno); }

constexpr const char* kFormat = "fieldbrain-archive";
// Version 1: the dicts carried TorchScript type tags (torch.load(weights_only=True) refused
// them). Version 2: plain dicts. Both are read; only version 2 is written.
constexpr int64_t kVersion = 2;
constexpr int64_t kOldestReadableVersion = 1;

std::string digest_domain(int64_t version) {
  return "fieldbrain-archive-v" + std::to_string(version);
}

// The whole file in one read (an istreambuf_iterator copy costs ~10 ns a byte).
std::vector<char> read_whole_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("load '" + path + "': cannot open: " + errno_text());
  std::vector<char> bytes;
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size > 0 && ::lseek(fd, 0, SEEK_SET) == 0) bytes.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The archive digest hashes each string with its terminating '\0' (so "ab"+"c" and "a"+"bc"
// differ); the SHA-256 itself is hrr::Sha256, the project's one wrapper over libcrypto.
void update_with_nul(hrr::Sha256& sha, const std::string& s) { sha.update(s.data(), s.size() + 1); }

// The name of the first tensor holding a NaN or an Inf ("" when none). A brain's state is
// finite by construction; a non-finite value means the state was poisoned (issue 36), and
// such a state must neither replace a good save nor be loaded into a robot.
std::string first_non_finite(const std::map<std::string, torch::Tensor>& tensors) {
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined() || !tensor.is_floating_point() || tensor.numel() == 0) continue;
    if (!torch::isfinite(tensor).all().item<bool>()) return name;
  }
  return "";
}

}  // namespace

std::string archive_digest(const std::map<std::string, torch::Tensor>& tensors,
                           const std::string& meta_dump, int64_t version) {
  hrr::Sha256 sha;
  update_with_nul(sha, digest_domain(version));
  update_with_nul(sha, meta_dump);
  for (const auto& [name, tensor] : tensors) {  // std::map: name order
    torch::Tensor t = tensor.to(torch::kCPU).contiguous();
    update_with_nul(sha, name);
    update_with_nul(sha, std::string(c10::toString(t.scalar_type())));
    sha.update_u64_le(static_cast<uint64_t>(t.dim()));
    for (int64_t d : t.sizes()) sha.update_u64_le(static_cast<uint64_t>(d));
    sha.update(t.data_ptr(), t.numel() * t.element_size());
  }
  return hrr::to_hex(sha.finish());
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("save '" + path + "': cannot create temp file: " + errno_text());
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("save '" + path + "': write failed: " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    std::string why = errno_text();
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error("save '" + path + "': fsync failed: " + why);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw std::runtime_error("save '" + path + "': rename failed: " + why);
  }
  // Make the rename itself durable.
  int dfd = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void save_archive(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const nlohmann::json& meta) {
  const std::string meta_dump = meta.dump();
  std::map<std::string, torch::Tensor> host;
  for (const auto& [name, tensor] : tensors)
    host.emplace(name, tensor.detach().to(torch::kCPU).contiguous());
  // Checked before anything is written: the file at `path` (the last good save) stays as it is.
  if (const std::string bad = first_non_finite(host); !bad.empty()) {
    throw std::runtime_error("save '" + path + "' refused: tensor '" + bad +
                             "' holds NaN or Inf (a brain whose state is not finite is never "
                             "saved; the file there is kept)");
  }
  c10::impl::GenericDict tensor_dict(c10::StringType::get(), c10::TensorType::get());
  for (const auto& [name, tensor] : host) tensor_dict.insert(name, tensor);
  c10::impl::GenericDict top(c10::StringType::get(), c10::AnyType::get());
  top.insert("format", std::string(kFormat));
  top.insert("version", kVersion);
  top.insert("meta", meta_dump);
  top.insert("tensors", tensor_dict);
  top.insert("sha256", archive_digest(host, meta_dump, kVersion));
  write_file_atomically(path, pickle_save_plain(top));
}

Archive load_archive(const std::string& path) {
  const std::vector<char> bytes = read_whole_file(path);
  if (bytes.empty()) throw std::runtime_error("load '" + path + "': file is empty");

  const std::string layout = archive_layout_problem(bytes);
  if (!layout.empty()) {
    throw std::runtime_error("load '" + path + "': truncated or corrupt archive (" + layout + ")");
  }
  c10::IValue root;
  try {
    root = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw std::runtime_error("load '" + path + "': truncated or corrupt archive (" + what + ")");
  }
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("load '" + path + "': " + why);
  };
  if (!root.isGenericDict()) fail("not a fieldbrain archive (top level is not a dict)");
  auto top = root.toGenericDict();
  for (const char* key : {"format", "version", "meta", "tensors", "sha256"})
    if (!top.contains(key)) fail(std::string("not a fieldbrain archive (missing '") + key + "')");
  if (!top.at("format").isString() || top.at("format").toStringRef() != kFormat)
    fail("not a fieldbrain archive (format is not '" + std::string(kFormat) + "')");
  if (!top.at("version").isInt()) fail("malformed archive (version is not an integer)");
  const int64_t version = top.at("version").toInt();
  if (version < kOldestReadableVersion || version > kVersion)
    fail("unsupported archive version " + std::to_string(version) + " (this build reads versions " +
         std::to_string(kOldestReadableVersion) + " to " + std::to_string(kVersion) + ")");
  if (!top.at("meta").isString() || !top.at("tensors").isGenericDict() ||
      !top.at("sha256").isString())
    fail("malformed archive (wrong field types)");

  Archive archive;
  archive.version = version;
  const std::string meta_dump = top.at("meta").toStringRef();
  for (const auto& item : top.at("tensors").toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) fail("malformed tensor table");
    archive.tensors.emplace(item.key().toStringRef(), item.value().toTensor());
  }
  const std::string expected = top.at("sha256").toStringRef();
  const std::string actual = archive_digest(archive.tensors, meta_dump, version);
  if (expected != actual)
    fail("checksum mismatch (stored " + expected.substr(0, 16) + "..., computed " +
         actual.substr(0, 16) + "...): the file was modified or corrupted");
  try {
    archive.meta = nlohmann::json::parse(meta_dump);
  } catch (const std::exception& e) {
    fail(std::string("metadata is not valid JSON: ") + e.what());
  }
  if (const std::string bad = first_non_finite(archive.tensors); !bad.empty()) {
    fail("tensor '" + bad + "' holds NaN or Inf: the saved state is not finite and is not loaded");
  }
  return archive;
}

PackedSlots pack_live_slots(const torch::Tensor& bank, const torch::Tensor& live) {
  TORCH_CHECK(bank.dim() >= 2 && live.dim() == 2 && bank.size(0) == live.size(0) &&
                  bank.size(1) == live.size(1),
              "pack_live_slots: bank ", bank.sizes(), " and live flags ", live.sizes(), " differ");
  // [L, 2] (robot, slot) pairs in row-major order of the flags.
  const torch::Tensor index = torch::nonzero(live.to(torch::kCPU)).to(torch::kLong).contiguous();
  const torch::Tensor flat_slot =
      (index.select(1, 0) * bank.size(1) + index.select(1, 1)).to(bank.device());
  const torch::Tensor rows = bank.detach().flatten(0, 1).index_select(0, flat_slot);
  return {rows.to(torch::kCPU).contiguous(), index};
}

void check_packed_slots(const torch::Tensor& bank, const torch::Tensor& rows,
                        const torch::Tensor& index) {
  const int64_t B = bank.size(0), A = bank.size(1);
  auto fail = [](const std::string& why) { throw std::runtime_error("packed slots: " + why); };
  if (index.dim() != 2 || index.size(1) != 2 || index.scalar_type() != torch::kLong)
    fail("index must be int64 [L, 2]");
  if (rows.dim() != bank.dim() - 1 || rows.size(0) != index.size(0) ||
      rows.sizes().slice(1) != bank.sizes().slice(2) || rows.scalar_type() != bank.scalar_type())
    fail("rows must be [L, ...] with the bank's slot shape and dtype");
  const torch::Tensor idx = index.to(torch::kCPU).contiguous();
  const auto pairs = idx.accessor<int64_t, 2>();
  for (int64_t i = 0; i < idx.size(0); ++i) {
    if (pairs[i][0] < 0 || pairs[i][0] >= B || pairs[i][1] < 0 || pairs[i][1] >= A)
      fail("slot (" + std::to_string(pairs[i][0]) + ", " + std::to_string(pairs[i][1]) +
           ") outside the bank's " + std::to_string(B) + " x " + std::to_string(A));
  }
}

void unpack_live_slots(torch::Tensor& bank, const torch::Tensor& rows, const torch::Tensor& index) {
  check_packed_slots(bank, rows, index);
  const int64_t B = bank.size(0), A = bank.size(1);
  const torch::Tensor idx = index.to(torch::kCPU).contiguous();
  torch::NoGradGuard no_grad;
  // Zero only the slots the file does not fill (a bank is 64 MiB per robot at R = 32: writing
  // it whole twice would cost more than reading the file).
  torch::Tensor filled = torch::zeros({B * A}, torch::kBool);
  const torch::Tensor flat_slot = idx.select(1, 0) * A + idx.select(1, 1);
  if (idx.size(0) > 0) filled.index_fill_(0, flat_slot, true);
  const torch::Tensor empty_slots = torch::nonzero(filled.logical_not()).flatten().to(bank.device());
  torch::Tensor slots = bank.view({B * A, -1});
  if (empty_slots.numel() > 0) slots.index_fill_(0, empty_slots, 0);
  if (idx.size(0) == 0) return;
  slots.index_copy_(0, flat_slot.to(bank.device()),
                    rows.to(bank.device()).reshape({idx.size(0), -1}));
}

}  // namespace fieldbrain
