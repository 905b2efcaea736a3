// fieldbrain.Brain and fieldbrain.BrainGroup (docs/python.md).
//
// The hot path (Brain.step): the argument is unpacked without a copy (a contiguous float32
// tensor or numpy array is used as it is), checked, and the cycle runs with the GIL released
// under the brain's own lock (two Python threads stepping one brain take turns; different
// brains run in parallel).
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/extension.h>
#include <torch/python.h>

#include "brain/brain_config.h"
#include "brain/brain_group.h"
#include "brain/field_brain.h"
#include "brain/legacy/legacy_profile.h"
#include "python/csrc/bindings.h"
#include "python/csrc/legacy_state_views.h"
#include "python/csrc/profile_brain.h"
#include "python/csrc/python_values.h"

namespace fieldbrain::python {
namespace {

// The config of Brain(...)/BrainGroup(...): the named arguments under the config file's keys,
// then **config as given; parsed and validated by the brain's own reader (unknown keys and bad
// values raise ValueError naming the keyword).
BrainConfig config_from_arguments(const std::string& profile, py::handle resolution,
                                  py::handle sensors, py::handle motors, py::handle seed,
                                  py::handle device, const py::kwargs& config) {
  nlohmann::json j = nlohmann::json::object();
  for (auto item : config) {
    const auto key = item.first.cast<std::string>();
    j[key] = to_json_value(item.second, key);
  }
  const auto set = [&](const char* keyword, const char* key, py::handle value) {
    if (value.is_none()) return;
    if (j.contains(key)) {
      throw py::value_error(fmt::format("both {}= and {}= given; use {}=", keyword, key, keyword));
    }
    j[key] = to_json_value(value, keyword);
  };
  j["profile"] = profile;
  set("resolution", "resolution", resolution);
  set("sensors", "sensory_dim", sensors);
  set("motors", "motor_dim", motors);
  set("seed", "seed", seed);
  set("device", "device", device);
  try {
    return j.get<BrainConfig>();
  } catch (const std::invalid_argument& e) {
    throw py::value_error(keyword_message(e.what()));
  }
}

std::optional<std::string> optional_string(py::handle value, const char* what) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(fmt::format("{} must be a str", what));
  }
  return value.cast<std::string>();
}

void check_save_exists(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    PyErr_SetString(PyExc_FileNotFoundError, fmt::format("{}: no such file", path).c_str());
    throw py::error_already_set();
  }
}

// Python torch.nn.Module view of a C++ module (fieldbrain/_modules.py).
py::object as_torch_module(std::shared_ptr<torch::nn::Module> module) {
  return py::module::import("fieldbrain._modules").attr("wrap")(py::cast(std::move(module)));
}

class Brain {
 public:
  explicit Brain(std::unique_ptr<ProfileBrain> impl)
      : impl_(std::move(impl)),
        device_(impl_->config().profile == BrainProfile::Legacy ? std::string("cpu")
                                                                : impl_->config().device),
        shape_{impl_->config().sensory_dim} {}

  torch::Tensor step(py::handle sensors, py::handle reward) {
    torch::Tensor x = float32_input(sensors, "sensors", shape_, device_);
    const float r = reward.is_none() ? 0.0f : float_input(reward, "reward");
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    cycle_held_gil_ = PyGILState_Check() != 0;  // a thread-local read: what the tests check
    return impl_->step(x, r);
  }
  bool cycle_held_gil() const { return cycle_held_gil_; }

  // Everything step() does around the cycle (unpacking and checking the arguments, releasing
  // the GIL, the lock, a fresh motors tensor back to Python) without the cycle: the bench's
  // direct measure of what the Python call adds.
  torch::Tensor step_without_cycle(py::handle sensors, py::handle reward) {
    torch::Tensor x = float32_input(sensors, "sensors", shape_, device_);
    const float r = reward.is_none() ? 0.0f : float_input(reward, "reward");
    (void)r;
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    return torch::empty({impl_->config().motor_dim}, torch::kFloat32);
  }

  double time_native(py::handle sensors, int64_t cycles) {
    torch::Tensor x = float32_input(sensors, "sensors", shape_, device_);
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    return impl_->time_native(x, cycles);
  }

  py::object brain_state() {
    nlohmann::json t;
    {
      py::gil_scoped_release no_gil;
      std::lock_guard<std::mutex> lock(mutex_);
      t = impl_->telemetry();
    }
    return to_python(t);
  }

  torch::Tensor field() const { return impl_->field(); }
  int64_t cycle() const { return impl_->cycle(); }
  py::object config() const { return to_python(nlohmann::json(impl_->config())); }
  std::string profile() const { return to_string(impl_->config().profile); }
  std::string device() const { return device_.str(); }
  int64_t sensors() const { return impl_->config().sensory_dim; }
  int64_t motors() const { return impl_->config().motor_dim; }
  int64_t resolution() const { return impl_->config().resolution; }
  py::object module() { return as_torch_module(impl_->module()); }

  void save(const std::string& path) const {
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    impl_->save(path);
  }

  static std::unique_ptr<Brain> load(const std::string& path, const py::kwargs& overrides) {
    check_save_exists(path);
    nlohmann::json o = nlohmann::json::object();
    for (auto item : overrides) {
      const auto key = item.first.cast<std::string>();
      o[key] = to_json_value(item.second, key);
    }
    std::unique_ptr<ProfileBrain> impl;
    try {
      py::gil_scoped_release no_gil;
      impl = load_profile_brain(path, o);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(keyword_message(e.what()));
    }
    return std::make_unique<Brain>(std::move(impl));
  }

 private:
  std::unique_ptr<ProfileBrain> impl_;
  c10::Device device_;
  std::vector<int64_t> shape_;  // [S]
  mutable std::mutex mutex_;
  bool cycle_held_gil_ = true;  // whether the last cycle ran holding the GIL (never, once stepped)
};

// B robots of the fieldbrain profile stepped as one batch: the server's resident group
// (brain/brain_group.h), one claimed row per robot.
class Group {
 public:
  Group(BrainConfig config, const std::vector<std::string>& robots)
      : group_(config), device_(config.device) {
    for (const auto& name : robots) rows_.push_back(group_->claim(robot_key_hash(name)));
    shape_ = {static_cast<int64_t>(rows_.size()), config.sensory_dim};
  }

  torch::Tensor step(py::handle sensors, py::handle reward) {
    torch::Tensor x = float32_input(sensors, "sensors", shape_, device_);
    torch::Tensor r;
    if (reward.is_none()) {
      r = torch::zeros({shape_[0]}, torch::kFloat32);
    } else if (py::isinstance<py::float_>(reward) || py::isinstance<py::int_>(reward)) {
      r = torch::full({shape_[0]}, float_input(reward, "reward"), torch::kFloat32);
    } else {
      r = float32_input(reward, "reward", {shape_[0]}, device_);
    }
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    torch::NoGradGuard no_grad;
    return group_->step(rows_, x, r);
  }

  py::object brain_state(int64_t i) {
    const auto row = row_of(i);
    nlohmann::json t;
    {
      py::gil_scoped_release no_gil;
      std::lock_guard<std::mutex> lock(mutex_);
      torch::NoGradGuard no_grad;
      t = group_->telemetry(row);
    }
    return to_python(t);
  }
  torch::Tensor field(int64_t i) const { return group_->field(row_of(i)); }
  int64_t cycle(int64_t i) const { return group_->cycle(row_of(i)); }
  int64_t size() const { return static_cast<int64_t>(rows_.size()); }
  std::string device() const { return device_.str(); }
  py::object module() { return as_torch_module(group_.ptr()); }

  void save(int64_t i, const std::string& path) {
    const auto row = row_of(i);
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    torch::NoGradGuard no_grad;
    group_->save(row, path);
  }
  void load(int64_t i, const std::string& path) {
    const auto row = row_of(i);
    check_save_exists(path);
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    torch::NoGradGuard no_grad;
    group_->load(row, path);
  }

 private:
  BrainGroupImpl::Row row_of(int64_t i) const {
    if (i < 0 || i >= size()) {
      throw py::index_error(fmt::format("robot {} of a group of {}", i, size()));
    }
    return rows_[static_cast<size_t>(i)];
  }

  BrainGroup group_;
  c10::Device device_;
  std::vector<BrainGroupImpl::Row> rows_;
  std::vector<int64_t> shape_;  // [B, S]
  mutable std::mutex mutex_;
};

// The legacy profile's brain with the original's own call: a list of S (or S+1, the reward
// last) numbers in, M motors out as Python floats (float64, as the original returns them), the
// clock passed in. Backs fieldbrain.em_brain (the em-brain compatible adapter).
class LegacyCore {
 public:
  LegacyCore(int64_t sensors, int64_t motors, int64_t resolution, uint64_t seed)
      : brain_(options(sensors, motors, resolution, seed)) {}

  std::vector<double> process(const std::vector<double>& input, double now_s) {
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    torch::NoGradGuard no_grad;
    return brain_->step(input, now_s);
  }
  py::object brain_state() const { return to_python(brain_->brain_state()); }
  int64_t cycle() const { return brain_->cycle(); }
  torch::Tensor field() const { return brain_->field(); }
  py::object module() { return as_torch_module(legacy_module_tree(*brain_)); }
  // Read-only copies of the topology regions' and the reward shaping's state, for comparing
  // the port with the original part by part (legacy_state_views.h).
  py::dict topology_regions() const { return legacy_topology_regions(saved_state()); }
  py::dict reward_shaping() const { return legacy_reward_shaping(saved_state()); }
  void save(const std::string& path) const { brain_->save(path); }
  void load(const std::string& path) {
    check_save_exists(path);
    torch::NoGradGuard no_grad;
    brain_->load(path);
  }

 private:
  static legacy::LegacyOptions options(int64_t sensors, int64_t motors, int64_t resolution,
                                       uint64_t seed) {
    legacy::LegacyOptions o;
    o.sensory_dim = sensors;
    o.motor_dim = motors;
    o.resolution = resolution;
    o.seed = seed;
    return o;
  }
  // The cycle's whole state as its save writes it, taken between cycles.
  legacy::StateWriter saved_state() const {
    py::gil_scoped_release no_gil;
    std::lock_guard<std::mutex> lock(mutex_);
    return legacy::legacy_saved_state(*brain_);
  }

  legacy::LegacyBrain brain_;
  mutable std::mutex mutex_;
};

// BrainGroup(n=..., robots=[...]): the robots' names, "robot-<i>" for those not named.
std::vector<std::string> group_robot_names(py::object n, py::object robots) {
  std::vector<std::string> names;
  if (!robots.is_none()) {
    for (auto r : robots) {
      if (!py::isinstance<py::str>(r)) throw py::type_error("robots must be strs");
      names.push_back(r.cast<std::string>());
    }
  }
  if (!n.is_none()) {
    if (!py::isinstance<py::int_>(n)) throw py::type_error("n must be an int");
    const auto count = n.cast<int64_t>();
    if (count < 1) throw py::value_error(fmt::format("n = {}: a group needs >= 1 robot", count));
    if (!names.empty() && static_cast<int64_t>(names.size()) != count) {
      throw py::value_error(fmt::format("n = {} but {} robots named", count, names.size()));
    }
    for (int64_t i = static_cast<int64_t>(names.size()); i < count; ++i) {
      names.push_back("robot-" + std::to_string(i));
    }
  }
  if (names.empty()) throw py::value_error("a group needs n >= 1 or robots=[...]");
  return names;
}

void bind_brain_class(py::module& m) {
  py::class_<Brain>(m, "Brain")
      .def(py::init([](const std::string& profile, py::object resolution, py::object sensors,
                       py::object motors, py::object seed, py::object device, py::object robot,
                       const py::kwargs& config) {
             const BrainConfig c =
                 config_from_arguments(profile, resolution, sensors, motors, seed, device, config);
             const auto key = optional_string(robot, "robot");
             std::unique_ptr<ProfileBrain> impl;
             try {
               py::gil_scoped_release no_gil;
               impl = make_profile_brain(c, key);
             } catch (const std::invalid_argument& e) {
               throw py::value_error(keyword_message(e.what()));
             }
             return std::make_unique<Brain>(std::move(impl));
           }),
           py::kw_only(), py::arg("profile") = "fieldbrain", py::arg("resolution") = py::none(),
           py::arg("sensors") = py::none(), py::arg("motors") = py::none(),
           py::arg("seed") = py::none(), py::arg("device") = py::none(),
           py::arg("robot") = py::none())
      .def("step", &Brain::step, py::arg("sensors"), py::arg("reward") = py::none())
      .def("brain_state", &Brain::brain_state)
      .def_property_readonly("field", &Brain::field)
      .def_property_readonly("cycle", &Brain::cycle)
      .def_property_readonly("config", &Brain::config)
      .def_property_readonly("profile", &Brain::profile)
      .def_property_readonly("device", &Brain::device)
      .def_property_readonly("sensors", &Brain::sensors)
      .def_property_readonly("motors", &Brain::motors)
      .def_property_readonly("resolution", &Brain::resolution)
      .def_property_readonly("module", &Brain::module)
      .def("save", &Brain::save, py::arg("path"))
      .def_static("load", &Brain::load, py::arg("path"))
      .def("_time_native", &Brain::time_native, py::arg("sensors"), py::arg("cycles"))
      .def_property_readonly("_cycle_held_gil", &Brain::cycle_held_gil)
      .def("_step_without_cycle", &Brain::step_without_cycle, py::arg("sensors"),
           py::arg("reward") = py::none())
      .def("__repr__", [](const Brain& b) {
        return fmt::format("fieldbrain.Brain(profile='{}', resolution={}, sensors={}, motors={}, "
                           "device='{}', cycle={})",
                           b.profile(), b.resolution(), b.sensors(), b.motors(), b.device(),
                           b.cycle());
      });
}

void bind_group_class(py::module& m) {
  py::class_<Group>(m, "BrainGroup")
      .def(py::init([](py::object n, const std::string& profile, py::object resolution,
                       py::object sensors, py::object motors, py::object seed, py::object device,
                       py::object robots, const py::kwargs& config) {
             const BrainConfig c =
                 config_from_arguments(profile, resolution, sensors, motors, seed, device, config);
             if (c.profile != BrainProfile::Fieldbrain) {
               throw py::value_error(
                   "BrainGroup runs the fieldbrain profile (robots as rows of one batch); the "
                   "legacy profile has no batch: use one fieldbrain.Brain(profile=\"legacy\") per "
                   "robot");
             }
             const std::vector<std::string> names = group_robot_names(n, robots);
             try {
               py::gil_scoped_release no_gil;
               return std::make_unique<Group>(c, names);
             } catch (const std::invalid_argument& e) {
               throw py::value_error(keyword_message(e.what()));
             }
           }),
           py::arg("n") = py::none(), py::kw_only(), py::arg("profile") = "fieldbrain",
           py::arg("resolution") = py::none(), py::arg("sensors") = py::none(),
           py::arg("motors") = py::none(), py::arg("seed") = py::none(),
           py::arg("device") = py::none(), py::arg("robots") = py::none())
      .def("step", &Group::step, py::arg("sensors"), py::arg("reward") = py::none())
      .def("brain_state", &Group::brain_state, py::arg("robot"))
      .def("field", &Group::field, py::arg("robot"))
      .def("cycle", &Group::cycle, py::arg("robot"))
      .def("save", &Group::save, py::arg("robot"), py::arg("path"))
      .def("load", &Group::load, py::arg("robot"), py::arg("path"))
      .def_property_readonly("device", &Group::device)
      .def_property_readonly("module", &Group::module)
      .def("__len__", &Group::size);
}

void bind_legacy_core_class(py::module& m) {
  py::class_<LegacyCore>(m, "LegacyCore")
      .def(py::init<int64_t, int64_t, int64_t, uint64_t>(), py::arg("sensors"), py::arg("motors"),
           py::arg("resolution"), py::arg("seed"))
      .def("process", &LegacyCore::process, py::arg("sensory_input"), py::arg("now_s"))
      .def("brain_state", &LegacyCore::brain_state)
      .def_property_readonly("cycle", &LegacyCore::cycle)
      .def_property_readonly("field", &LegacyCore::field)
      .def_property_readonly("module", &LegacyCore::module)
      .def("topology_regions", &LegacyCore::topology_regions)
      .def("reward_shaping", &LegacyCore::reward_shaping)
      .def("save", &LegacyCore::save, py::arg("path"))
      .def("load", &LegacyCore::load, py::arg("path"));
}

}  // namespace

void bind_brain(py::module& m) {
  // The C++ modules as torch.nn.Module subclasses (fieldbrain.cpp.*; fieldbrain/_modules.py
  // wraps them with their submodules).
  torch::python::bind_module<FieldBrainImpl>(m, "FieldBrainModule");
  torch::python::bind_module<BrainGroupImpl>(m, "BrainGroupModule");
  torch::python::bind_module<legacy::LegacyBrainImpl>(m, "LegacyBrainModule");
  bind_brain_class(m);
  bind_group_class(m);
  bind_legacy_core_class(m);
}

}  // namespace fieldbrain::python
