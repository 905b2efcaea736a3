// `vector`: prints the SHA-256 of a named vector's float32 bytes, so two processes (or two
// machines) can be compared cheaply; the [hrr] suite runs it twice.
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <string>

#include "app/hrr/commands.h"
#include "hrr/random_vectors.h"
#include "hrr/sha256.h"

namespace fieldbrain::hrr::cli {

void add_vector_command(CLI::App& app) {
  struct Args {
    std::uint64_t seed = 0;
    std::string name;
    int64_t dim = 512;
    bool unitary = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("vector", "Print the digest of the vector of (seed, name)");
  cmd->add_option("--seed", args->seed, "vocabulary seed")->required();
  cmd->add_option("--name", args->name, "symbol name")->required();
  cmd->add_option("--dim", args->dim, "dimension D")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cmd->add_flag("--unitary", args->unitary, "unitary symbol");
  cmd->callback([args]() {
    const torch::Tensor v = named_vector(args->seed, args->name, args->dim, args->unitary);
    const std::string digest =
        to_hex(Sha256().update(v.data_ptr(), v.numel() * v.element_size()).finish());
    std::cout << "sha256:" << digest << "  D=" << args->dim << " first=" << std::setprecision(9);
    for (int64_t i = 0; i < std::min<int64_t>(4, args->dim); ++i) {
      std::cout << (i ? "," : "") << v[i].item<float>();
    }
    std::cout << "\n";
  });
}

}  // namespace fieldbrain::hrr::cli
