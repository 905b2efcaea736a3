#include "brain/brain_module.h"

#include <map>
#include <stdexcept>

namespace fieldbrain {

std::vector<BrainModule*> brain_modules(torch::nn::Module& brain) {
  std::vector<BrainModule*> out;
  for (const auto& m : brain.modules(/*include_self=*/false)) {
    if (auto* bm = dynamic_cast<BrainModule*>(m.get())) out.push_back(bm);
  }
  return out;
}

std::vector<torch::Tensor> module_scratch(const torch::nn::Module& brain) {
  std::vector<torch::Tensor> out;
  auto add = [&](const torch::nn::Module& m) {
    if (const auto* bm = dynamic_cast<const BrainModule*>(&m)) {
      out.insert(out.end(), bm->scratch().begin(), bm->scratch().end());
    }
  };
  add(brain);  // (modules(true) would need the brain to be held by a shared_ptr)
  for (const auto& m : brain.modules(/*include_self=*/false)) add(*m);
  return out;
}

std::vector<int64_t> live_slot_index(const torch::nn::Module& brain) {
  const auto buffers = brain.named_buffers(true);
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < buffers.size(); ++i) index[buffers[i].key()] = static_cast<int64_t>(i);
  std::vector<int64_t> live(buffers.size(), -1);
  for (const auto& item : brain.named_modules("", /*include_self=*/false)) {
    const auto* bm = dynamic_cast<const BrainModule*>(item.value().get());
    if (bm == nullptr) continue;
    for (const auto& [slots, flags] : bm->live_slots()) {
      const auto s = index.find(item.key() + "." + slots), f = index.find(item.key() + "." + flags);
      if (s == index.end() || f == index.end()) {
        throw std::logic_error("brain module " + item.key() + ": live slots " + slots + "/" + flags +
                               " are not both registered buffers");
      }
      live[s->second] = f->second;
    }
  }
  return live;
}

}  // namespace fieldbrain
