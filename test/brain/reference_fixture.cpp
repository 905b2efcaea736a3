#include "test/brain/reference_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace fieldbrain::test {

ReferenceFixture::ReferenceFixture(const std::vector<std::string>& args) {
  std::string templ = (std::filesystem::temp_directory_path() / "fieldbrain-fixture-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;
  std::string cmd = fmt::format("{} {}/scripts/reference/fieldbrain_ref.py fixture --quiet --out {}",
                                FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, dir_);
  for (const auto& a : args) cmd += " " + a;
  const int rc = std::system(cmd.c_str());
  if (rc != 0) throw std::runtime_error(fmt::format("reference failed (status {}): {}", rc, cmd));
  std::ifstream in(dir_ + "/manifest.json");
  if (!in) throw std::runtime_error("reference wrote no manifest.json: " + cmd);
  manifest_ = nlohmann::json::parse(in);
}

ReferenceFixture::~ReferenceFixture() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

torch::Tensor ReferenceFixture::read(const std::string& file) const {
  const auto shape = manifest_.at("files").at(file).get<std::vector<int64_t>>();
  auto t = torch::empty(shape, torch::kFloat);
  std::ifstream in(dir_ + "/" + file, std::ios::binary);
  if (!in) throw std::runtime_error("fixture file missing: " + file);
  in.read(reinterpret_cast<char*>(t.data_ptr<float>()), static_cast<std::streamsize>(t.numel() * 4));
  if (in.gcount() != static_cast<std::streamsize>(t.numel() * 4)) {
    throw std::runtime_error("fixture file truncated: " + file);
  }
  return t;
}

}  // namespace fieldbrain::test
