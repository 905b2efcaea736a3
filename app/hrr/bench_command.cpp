// `bench [--quick] [--device cpu|cuda|auto] [--json PATH]`: bind / unbind / cleanup throughput
// for D x batch, measured here and, in the same run, with the same operations in PyTorch
// (scripts/hrr/bench.py through FIELDBRAIN_PYTHON, same thread count, same device). Prints a
// table with the ratio cpp/python and writes
// {"rows": [{"op", "D", "batch", "device", "cpp_ms", "python_ms"}, ...]}.
// --device auto runs each batch where the device policy puts it, with the policy's threshold
// measured first on this machine (measure_crossover, printed); on CUDA every call is
// synchronised, on both sides, so times are the work's and not its launch's.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "hrr/call_timing.h"
#include "app/hrr/commands.h"
#include "hrr/algebra.h"
#include "hrr/device_policy.h"
#include "hrr/item_memory.h"
#include "hrr/random_vectors.h"

namespace fieldbrain::hrr::cli {
namespace {

struct BenchArgs {
  bool quick = false;
  std::string json_path;
  std::vector<int64_t> dims = {512, 1024, 4096};
  std::vector<int64_t> batches = {1, 100, 10000};
  int64_t items = 1000;
  bool skip_python = false;
  std::string device = "cpu";  // cpu | cuda | auto
  DevicePolicy policy;         // for auto: calibrated before measuring
};

torch::Device device_for(const BenchArgs& args, int64_t batch) {
  if (args.device == "auto") return args.policy.choose(batch);
  return args.device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

std::string device_list(const BenchArgs& args) {
  std::string out;
  for (int64_t batch : args.batches) {
    out += (out.empty() ? "" : ",") + std::string(device_for(args, batch).is_cuda() ? "cuda" : "cpu");
  }
  return out;
}

using Key = std::tuple<std::string, int64_t, int64_t>;  // op, D, batch

struct PythonTiming {
  double ms = 0.0;
  int64_t extrapolated_from_rows = 0;  // 0: measured on the full batch
};

std::string join(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

TimingBudget budget_for(bool quick) {
  return quick ? TimingBudget{1, 1, 200, 0.05} : TimingBudget{1, 3, 1000, 0.5};
}

std::map<Key, double> measure_cpp(const BenchArgs& args) {
  torch::InferenceMode inference;
  torch::Generator gen = make_generator(1);
  std::map<Key, double> ms;
  const std::size_t total = args.dims.size() * args.batches.size();
  std::size_t done = 0;
  for (int64_t d : args.dims) {
    std::vector<std::string> labels;
    for (int64_t i = 0; i < args.items; ++i) labels.push_back(std::to_string(i));
    const torch::Tensor keys = random({args.items, d}, gen);
    std::map<std::string, ItemMemory> memories;  // one per device used
    for (int64_t batch : args.batches) {
      const torch::Device device = device_for(args, batch);
      if (!memories.count(device.str())) {
        ItemMemory memory(ItemMemoryOptions(d).threshold(0.1));
        memory->to(device);
        memory->add(labels, keys.to(device));
        memories.emplace(device.str(), memory);
      }
      const ItemMemory& memory = memories.at(device.str());
      const torch::Tensor a = random({batch, d}, gen).to(device);
      const torch::Tensor b = random({batch, d}, gen).to(device);
      const torch::Tensor c = bind(a, b);
      const TimingBudget budget = budget_for(args.quick);
      auto timed = [&](auto op) {
        return median_call_ms([&] {
          op();
          if (device.is_cuda()) torch::cuda::synchronize();
        }, budget);
      };
      ms[{"bind", d, batch}] = timed([&] { bind(a, b); });
      ms[{"unbind", d, batch}] = timed([&] { unbind(c, b); });
      ms[{"cleanup", d, batch}] = timed([&] { memory->cleanup(a); });
      std::fprintf(stderr, "\r  c++:    %zu/%zu cases", ++done, total);
    }
  }
  std::fprintf(stderr, "\n");
  return ms;
}

std::map<Key, PythonTiming> measure_python(const BenchArgs& args) {
  const std::string command = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                              "/scripts/hrr/bench.py --dims " + join(args.dims) + " --batches " +
                              join(args.batches) + " --items " + std::to_string(args.items) +
                              " --threads " + std::to_string(at::get_num_threads()) +
                              " --devices " + device_list(args) + (args.quick ? " --quick" : "");
  FILE* pipe = popen(command.c_str(), "r");  // stderr (progress) passes through
  if (!pipe) throw std::runtime_error("bench: cannot start " + command);
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) throw std::runtime_error("bench: the Python reference failed: " + command);
  std::map<Key, PythonTiming> ms;
  const nlohmann::json doc = nlohmann::json::parse(output);  // must outlive the loop
  for (const auto& row : doc.at("rows")) {
    ms[{row.at("op").get<std::string>(), row.at("D").get<int64_t>(),
        row.at("batch").get<int64_t>()}] =
        PythonTiming{row.at("ms").get<double>(), row.value("extrapolated_from_rows", int64_t{0})};
  }
  return ms;
}

void report(const BenchArgs& args, const std::map<Key, double>& cpp,
            const std::map<Key, PythonTiming>& python) {
  std::printf("HRR bench: float32, device %s, %d thread(s), cleanup over M=%lld items (top-1 cosine)%s\n",
              args.device.c_str(), at::get_num_threads(), static_cast<long long>(args.items),
              args.quick ? ", --quick" : "");
  std::printf("%-8s %6s %7s %5s %12s %12s %10s\n", "op", "D", "batch", "dev", "c++ ms", "python ms",
              "c++/py");
  nlohmann::json rows = nlohmann::json::array();
  bool extrapolated = false;
  for (const char* op : {"bind", "unbind", "cleanup"}) {
    for (int64_t d : args.dims) {
      for (int64_t batch : args.batches) {
        const Key key{op, d, batch};
        const double c = cpp.at(key);
        const auto py = python.find(key);
        const std::string dev = device_for(args, batch).is_cuda() ? "cuda" : "cpu";
        nlohmann::json row = {{"op", op}, {"D", d}, {"batch", batch}, {"device", dev}, {"cpp_ms", c}};
        if (py != python.end()) {
          const PythonTiming& p = py->second;
          row["python_ms"] = p.ms;
          if (p.extrapolated_from_rows > 0) {
            row["python_extrapolated_from_rows"] = p.extrapolated_from_rows;
            extrapolated = true;
          }
          std::printf("%-8s %6lld %7lld %5s %12.4f %11.4f%s %10.2f\n", op, static_cast<long long>(d),
                      static_cast<long long>(batch), dev.c_str(), c, p.ms,
                      p.extrapolated_from_rows > 0 ? "*" : " ", c / p.ms);
        } else {
          row["python_ms"] = nullptr;
          std::printf("%-8s %6lld %7lld %5s %12.4f %12s %10s\n", op, static_cast<long long>(d),
                      static_cast<long long>(batch), dev.c_str(), c, "-", "-");
        }
        rows.push_back(row);
      }
    }
  }
  std::printf("c++/py < 1 means the C++ library is faster than the PyTorch reference.\n");
  if (extrapolated) {
    std::printf(
        "* --quick: Python cleanup timed on its first 1000 queries and scaled to the "
        "batch (netlib BLAS makes the full batch take minutes).\n");
  }
  if (!args.json_path.empty()) {
    const nlohmann::json doc = {{"rows", rows},
                                {"device", args.device},
                                {"gpu_batch_threshold", args.device == "auto" && args.policy.cuda_available
                                                            ? nlohmann::json(args.policy.gpu_batch_threshold)
                                                            : nlohmann::json()},
                                {"threads", at::get_num_threads()},
                                {"items", args.items},
                                {"quick", args.quick}};
    std::ofstream out(args.json_path);
    if (!out) throw std::runtime_error("bench: cannot write " + args.json_path);
    out << doc.dump(2) << "\n";
    std::printf("wrote %s\n", args.json_path.c_str());
  }
}

// --device auto: measures where CUDA starts to win on this machine and prints it.
void calibrate(BenchArgs& args) {
  if (!torch::cuda::is_available()) {
    args.policy.cuda_available = false;
    std::printf("device policy: no CUDA device, every batch runs on the CPU\n");
    return;
  }
  const int64_t dim = *std::max_element(args.dims.begin(), args.dims.end());
  const Crossover crossover = measure_crossover(dim, args.quick ? 4096 : 16384);
  std::printf("device policy: bind crossover at D=%lld (median ms, synchronised)\n",
              static_cast<long long>(dim));
  std::printf("%7s %10s %10s\n", "batch", "cpu ms", "cuda ms");
  for (const auto& p : crossover.points) {
    std::printf("%7lld %10.4f %10.4f\n", static_cast<long long>(p.batch), p.cpu_ms, p.cuda_ms);
  }
  args.policy.cuda_available = true;
  args.policy.gpu_batch_threshold = crossover.gpu_batch_threshold;
  std::printf("device policy: batches >= %lld go to CUDA (measured above, not a constant)\n\n",
              static_cast<long long>(crossover.gpu_batch_threshold));
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "bind/unbind/cleanup throughput, side by side with PyTorch (scripts/hrr/bench.py)");
  cmd->add_flag("--quick", args->quick, "short timing budget (about a minute in total)");
  cmd->add_option("--json", args->json_path, "write the rows as JSON to this path");
  cmd->add_option("--dims", args->dims, "dimensions D")->delimiter(',')->capture_default_str();
  cmd->add_option("--batches", args->batches, "batch sizes")->delimiter(',')->capture_default_str();
  cmd->add_option("--items", args->items, "clean-up memory size M")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_flag("--no-python", args->skip_python, "skip the PyTorch side");
  cmd->add_option("--device", args->device,
                  "cpu, cuda, or auto (each batch where the measured device policy puts it)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->callback([args]() {
    for (int64_t v : args->dims) {
      if (v < 1) throw std::invalid_argument("bench: dims must be >= 1");
    }
    for (int64_t v : args->batches) {
      if (v < 1) throw std::invalid_argument("bench: batches must be >= 1");
    }
    if (args->device == "cuda" && !torch::cuda::is_available()) {
      throw std::invalid_argument("bench: --device cuda but no CUDA device is available to this "
                                  "LibTorch (CPU-only build, or no GPU)");
    }
    if (args->device == "auto") calibrate(*args);
    const auto cpp = measure_cpp(*args);
    const auto python = args->skip_python ? std::map<Key, PythonTiming>{} : measure_python(*args);
    report(*args, cpp, python);
  });
}

}  // namespace fieldbrain::hrr::cli
