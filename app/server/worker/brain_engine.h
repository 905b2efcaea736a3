// What the server needs from a brain, in plain vectors: the seam between the socket side
// (which knows nothing of tensors) and fieldbrain::FieldBrain (torch_brain_engine.*). Tests
// plug in a small deterministic engine to exercise the network code without LibTorch.
//
// Every method is called from the brain worker thread only, never concurrently, except
// load_detached (the loader thread) and the writers snapshot returns (the state writer
// thread): those run beside the ticks, so saves and loads never make a tick wait.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fieldbrain::server {

class BrainEngine {
 public:
  using Slot = int64_t;  // one robot's brain
  virtual ~BrainEngine() = default;

  // A fresh brain for one robot of the given sizes; `robot_key` seeds its Philox streams. Throws
  // std::exception with a readable message when the brain cannot be built.
  virtual Slot create(const std::string& robot_key, int sensory_dim, int motor_dim) = 0;
  virtual void destroy(Slot slot) = 0;

  // One cycle for robots that share (S, M): sensors row-major [k*S], rewards [k], all finite
  // and within input_limits(). Writes motors row-major [k*M] into `motors` (resized to that):
  // the worker keeps one vector across ticks, so a steady tick allocates none. One call is one
  // batched brain call. Throws on failure (what `motors` then holds is unspecified). A robot
  // whose brain state stopped being finite in this cycle gets NaN motors: its brain is then
  // unusable and the worker replaces it (docs/operating.md "A brain that stops being finite").
  virtual void step_group_into(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                               const std::vector<float>& rewards, std::vector<float>& motors) = 0;
  // The same cycle, its motors in a new vector (tools, tests, the start-up check).
  std::vector<float> step_group(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                                const std::vector<float>& rewards) {
    std::vector<float> motors;
    step_group_into(slots, sensors, rewards, motors);
    return motors;
  }

  virtual int64_t cycle(Slot slot) const = 0;

  // The largest magnitude a sensor value and a reward may have for this engine's profile: the
  // session refuses a frame beyond them (7001) before it reaches the brain. A static fact, like
  // describe(), read once when the server starts. Unbounded unless an engine says otherwise.
  struct InputLimits {
    float max_sensor = std::numeric_limits<float>::max();
    float max_reward = std::numeric_limits<float>::max();
  };
  virtual InputLimits input_limits() const { return {}; }

  // Atomic save; load throws std::runtime_error on a corrupt/mismatched file and then leaves
  // the brain untouched. Synchronous (tools); the server uses snapshot and load_detached.
  virtual void save(Slot slot, const std::string& path) = 0;
  virtual void load(Slot slot, const std::string& path) = 0;

  // A robot's brain built outside the engine (on the loader thread), then adopted.
  class Detached {
   public:
    virtual ~Detached() = default;
  };
  // Any thread, beside the brain thread's calls: the brain of `robot_key` (as create() would
  // make it) with the state saved at `path`. Throws std::exception with a readable message
  // when the file does not load; nothing in the engine changes either way.
  virtual std::unique_ptr<Detached> load_detached(const std::string& robot_key, int sensory_dim,
                                                  int motor_dim, const std::string& path) = 0;
  // Brain thread: the built brain joins the engine.
  virtual Slot adopt(std::unique_ptr<Detached> brain) = 0;
  // Brain thread: a writer that saves the slot's state as of now atomically to a path, from
  // another thread (the state writer), throwing on failure; it may be dropped unrun (a newer
  // one replaced it). It writes a copy taken here, so the slot may be stepped, destroyed or
  // snapshotted again while it waits or runs.
  using StateWriterFn = std::function<void(const std::string& path)>;
  virtual StateWriterFn snapshot(Slot slot) = 0;

  virtual nlohmann::json telemetry(Slot slot) = 0;
  // {"resolution":R,"channel":c,"z":z,"values":[[...R...]...R rows]}; throws on bad indices.
  virtual nlohmann::json field_slice(Slot slot, int64_t channel, int64_t z) = 0;

  // Static facts for the monitor and the handshake: {"resolution":R,"device":..,...}.
  virtual nlohmann::json describe() const = 0;
  virtual bool on_gpu() const = 0;
  virtual std::string state_extension() const = 0;  // ".pt"
};

}  // namespace fieldbrain::server
