// libFuzzer harness: a robot's brain save as the server loads it (brain/persistence.h
// load_archive, then FieldBrainImpl::load) from a file of fuzzer-chosen bytes. Two kinds of
// input, chosen by the first byte:
//   even: the rest is the file, as it is (zip, pickle and checksum checks; the seeds are
//         small archives: a whole save is 700 KB and would slow every mutation of it);
//   odd:  the rest mutates a real save of a small brain (metadata keys and values, tensors
//         removed, reshaped, retyped, their values changed or added) that is then written
//         with a valid checksum, so the brain's own checks are reached.
// Either the load succeeds, or it throws std::runtime_error naming the file and leaves the
// brain as it was. Links LibTorch and the GCC-built brain library (see CMakeLists.txt).
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include <c10/util/Logging.h>

#include "brain/field_brain.h"
#include "brain/persistence.h"

using namespace fieldbrain;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Fixture {
  FieldBrain brain{nullptr};
  ArchiveContents pristine;
  std::string path;

  Fixture() {
    torch::NoGradGuard no_grad;
    at::set_num_threads(1);
    BrainConfig c;
    c.sensory_dim = 3;
    c.motor_dim = 2;
    c.resolution = 8;
    c.attractor_capacity = 2;
    c.field_step = "reference";
    brain = FieldBrain(c, std::vector<uint64_t>{7});
    for (int i = 0; i < 4; ++i) {  // some cycles, and a strong reward that stores an attractor
      brain->step(torch::full({1, 3}, 0.1f * float(i)), torch::full({1}, i == 2 ? 0.9f : 0.0f));
    }
    pristine = brain->archive_contents();
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path = std::string(dir) + "/fieldbrain-fuzz-brain-save-" + std::to_string(getpid()) + ".pt";
  }
};

Fixture& fixture() {
  static Fixture* f = new Fixture();
  return *f;
}

nlohmann::json fuzzed_value(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0:
      return in.ConsumeIntegral<int64_t>();
    case 1:
      return in.ConsumeIntegralInRange<int64_t>(-2, 300);
    case 2:
      return in.ConsumeRandomLengthString(16);
    case 3:
      return nullptr;
    case 4:
      return in.ConsumeFloatingPoint<double>();
    case 5:
      return nlohmann::json::object();
    default:
      return nlohmann::json::array({in.ConsumeIntegral<int8_t>()});
  }
}

// A mutated copy of the pristine save.
ArchiveContents mutate(FuzzedDataProvider& in, const ArchiveContents& pristine) {
  ArchiveContents a;
  a.meta = pristine.meta;
  for (const auto& [name, t] : pristine.tensors) a.tensors[name] = t;  // clones on write
  static const char* const meta_keys[] = {"format", "version", "config", "robot_keys", "extra"};
  static const char* const config_keys[] = {"sensory_dim", "motor_dim", "resolution",
                                            "attractor_capacity", "seed"};
  static const torch::ScalarType dtypes[] = {torch::kFloat,  torch::kLong, torch::kInt,
                                             torch::kDouble, torch::kBool, torch::kByte};
  const int ops = in.ConsumeIntegralInRange<int>(1, 6);
  for (int op = 0; op < ops && in.remaining_bytes() > 0; ++op) {
    auto pick = [&]() -> std::map<std::string, torch::Tensor>::iterator {
      if (a.tensors.empty()) return a.tensors.end();
      auto it = a.tensors.begin();
      std::advance(it, in.ConsumeIntegralInRange<size_t>(0, a.tensors.size() - 1));
      return it;
    };
    switch (in.ConsumeIntegralInRange<int>(0, 8)) {
      case 0: {  // the metadata as text
        a.meta = nlohmann::json::parse(in.ConsumeRandomLengthString(256), nullptr, false);
        break;
      }
      case 1:
        a.meta[meta_keys[in.ConsumeIntegralInRange<int>(0, 4)]] = fuzzed_value(in);
        break;
      case 2:
        if (a.meta.is_object() && a.meta["config"].is_object()) {
          a.meta["config"][config_keys[in.ConsumeIntegralInRange<int>(0, 4)]] = fuzzed_value(in);
        }
        break;
      case 3: {
        auto it = pick();
        if (it != a.tensors.end()) a.tensors.erase(it);
        break;
      }
      case 4: {  // another shape
        auto it = pick();
        if (it == a.tensors.end()) break;
        std::vector<int64_t> shape(in.ConsumeIntegralInRange<size_t>(0, 3));
        for (auto& d : shape) d = in.ConsumeIntegralInRange<int64_t>(0, 5);
        it->second = torch::zeros(shape, it->second.scalar_type());
        break;
      }
      case 5: {  // another dtype
        auto it = pick();
        if (it != a.tensors.end())
          it->second = it->second.to(dtypes[in.ConsumeIntegralInRange<int>(0, 5)]);
        break;
      }
      case 6: {  // a value (packed attractor indices, cycle counts, noise keys...)
        auto it = pick();
        if (it == a.tensors.end() || it->second.numel() == 0) break;
        torch::Tensor t = it->second.clone().contiguous();
        const int64_t at = in.ConsumeIntegralInRange<int64_t>(0, t.numel() - 1);
        const int64_t v = in.ConsumeBool() ? in.ConsumeIntegral<int64_t>()
                                           : in.ConsumeIntegralInRange<int64_t>(-2, 3);
        t.view({-1})[at] = (t.is_floating_point() ? torch::Scalar(double(v)) : torch::Scalar(v));
        it->second = t;
        break;
      }
      case 7:
        a.tensors[in.ConsumeRandomLengthString(24)] =
            torch::zeros({in.ConsumeIntegralInRange<int64_t>(0, 4)});
        break;
      default: {  // more packed attractor rows than slots
        auto it = a.tensors.find("packed.attractors.bank.index");
        if (it != a.tensors.end()) it->second = torch::cat({it->second, it->second});
        break;
      }
    }
  }
  return a;
}

}  // namespace

// FIELDBRAIN_FUZZ_WRITE_SEED=PATH writes the pristine save as a raw-file input (the seed in
// test/fuzz/seeds/brain_save/ was made so) and exits.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // LibTorch builds a symbolised stack trace into every c10::Error it throws (dladdr per frame):
  // most inputs are refused by such a throw, and the trace, never read here, cost more than the
  // load itself.
  c10::SetStackTraceFetcher([] { return std::string(); });
  if (const char* out = std::getenv("FIELDBRAIN_FUZZ_WRITE_SEED")) {
    // Whole: the pristine save. Small: a valid archive with a brain's metadata and one small
    // tensor, a cheap start for the raw-file inputs.
    const bool small = std::getenv("FIELDBRAIN_FUZZ_SMALL_SEED") != nullptr;
    if (small) {
      save_archive(fixture().path, {{"state.cycles", torch::tensor({int64_t{4}})}},
                   {{"format", "fieldbrain-brain"},
                    {"version", 3},
                    {"config", fixture().pristine.meta["config"]},
                    {"robot_keys", {7}}});
    } else {
      fixture().pristine.save(fixture().path);
    }
    std::ifstream in(fixture().path, std::ios::binary);
    std::ofstream(out, std::ios::binary) << '\0' << in.rdbuf();
    std::remove(fixture().path.c_str());
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Fixture& f = fixture();
  torch::NoGradGuard no_grad;
  if (data[0] % 2 == 0) {
    std::ofstream(f.path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data + 1), std::streamsize(size - 1));
  } else {
    FuzzedDataProvider in(data + 1, size - 1);
    try {
      mutate(in, f.pristine).save(f.path);
    } catch (const std::exception&) {
      // Not an input a brain could meet: metadata it never writes (invalid UTF-8 strings), a
      // value the mutated dtype cannot hold.
      return 0;
    }
  }
  const int64_t cycle = f.brain->cycle();
  const torch::Tensor field = f.brain->named_buffers()["field"].clone();
  try {
    f.brain->load(f.path);
  } catch (const std::runtime_error& e) {
    check(std::string(e.what()).find(f.path) != std::string::npos);
    check(f.brain->cycle() == cycle);
    check(torch::equal(f.brain->named_buffers()["field"], field));
  }
  std::remove(f.path.c_str());
  return 0;
}
