// Which profile wrote a brain save: read from the archive's meta (brain/persistence.h) by
// everything that loads a save of either profile (the fieldbrain brain, the server's legacy
// engine, the Python Brain), so a save of the other profile is refused by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fieldbrain {

// The profile a brain archive's meta was saved by: its "profile", else its config's "profile",
// else "fieldbrain" for a fieldbrain brain archive without one (every save made before
// profiles existed); "" when the meta is no brain's.
std::string saved_profile(const nlohmann::json& archive_meta);

}  // namespace fieldbrain
