#include "brain/saved_profile.h"

#include "brain/brain_config.h"

namespace fieldbrain {

std::string saved_profile(const nlohmann::json& archive_meta) {
  if (!archive_meta.is_object()) return "";
  const auto named = [](const nlohmann::json& j) {
    const auto it = j.find("profile");
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (std::string p = named(archive_meta); !p.empty()) return p;
  const auto config = archive_meta.find("config");
  if (config != archive_meta.end() && config->is_object()) {
    if (std::string p = named(*config); !p.empty()) return p;
  }
  if (archive_meta.value("format", "") == "fieldbrain-brain")
    return to_string(BrainProfile::Fieldbrain);
  return "";
}

}  // namespace fieldbrain
