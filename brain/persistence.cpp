#include "brain/persistence.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <openssl/evp.h>

namespace fieldbrain {
namespace {

constexpr const char* kFormat = "fieldbrain-archive";
constexpr int64_t kVersion = 1;

std::string errno_text() { return std::strerror(errno); }

std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// RAII over an OpenSSL digest context.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("sha256: OpenSSL digest initialisation failed");
  }
  void update(const void* data, size_t n) {
    if (n > 0 && EVP_DigestUpdate(ctx_.get(), data, n) != 1)
      throw std::runtime_error("sha256: OpenSSL digest update failed");
  }
  void update(const std::string& s) { update(s.data(), s.size() + 1); }  // with its '\0'
  std::string hex() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), out, &n) != 1)
      throw std::runtime_error("sha256: OpenSSL digest finalisation failed");
    static const char* digits = "0123456789abcdef";
    std::string h;
    for (unsigned int i = 0; i < n; ++i) {
      h += digits[out[i] >> 4];
      h += digits[out[i] & 15];
    }
    return h;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

void put_int64(Sha256& sha, int64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  sha.update(b, 8);
}

}  // namespace

std::string archive_digest(const std::map<std::string, torch::Tensor>& tensors,
                           const std::string& meta_dump) {
  Sha256 sha;
  sha.update(std::string("fieldbrain-archive-v1"));
  sha.update(meta_dump);
  for (const auto& [name, tensor] : tensors) {  // std::map: name order
    torch::Tensor t = tensor.to(torch::kCPU).contiguous();
    sha.update(name);
    sha.update(std::string(c10::toString(t.scalar_type())));
    put_int64(sha, t.dim());
    for (int64_t d : t.sizes()) put_int64(sha, d);
    sha.update(t.data_ptr(), t.numel() * t.element_size());
  }
  return sha.hex();
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
  c10::Dict<std::string, torch::Tensor> tensor_dict;
  for (const auto& [name, tensor] : tensors)
    tensor_dict.insert(name, tensor.detach().to(torch::kCPU).contiguous());
  c10::impl::GenericDict top(c10::StringType::get(), c10::AnyType::get());
  top.insert("format", std::string(kFormat));
  top.insert("version", kVersion);
  top.insert("meta", meta_dump);
  top.insert("tensors", tensor_dict);
  top.insert("sha256", archive_digest(tensors, meta_dump));
  std::vector<char> bytes = torch::pickle_save(top);
  write_file_atomically(path, std::string(bytes.begin(), bytes.end()));
}

Archive load_archive(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("load '" + path + "': cannot open: " + errno_text());
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw std::runtime_error("load '" + path + "': file is empty");

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
  if (!top.at("version").isInt() || top.at("version").toInt() != kVersion)
    fail("unsupported archive version");
  if (!top.at("meta").isString() || !top.at("tensors").isGenericDict() ||
      !top.at("sha256").isString())
    fail("malformed archive (wrong field types)");

  Archive archive;
  const std::string meta_dump = top.at("meta").toStringRef();
  for (const auto& item : top.at("tensors").toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) fail("malformed tensor table");
    archive.tensors.emplace(item.key().toStringRef(), item.value().toTensor());
  }
  const std::string expected = top.at("sha256").toStringRef();
  const std::string actual = archive_digest(archive.tensors, meta_dump);
  if (expected != actual)
    fail("checksum mismatch (stored " + expected.substr(0, 16) + "..., computed " +
         actual.substr(0, 16) + "...): the file was modified or corrupted");
  try {
    archive.meta = nlohmann::json::parse(meta_dump);
  } catch (const std::exception& e) {
    fail(std::string("metadata is not valid JSON: ") + e.what());
  }
  return archive;
}

}  // namespace fieldbrain
