// A save that is intact but was made for another configuration (another resolution or
// attractor capacity, other sizes, the other profile): not corrupt, so a server never moves it
// aside or overwrites it. It refuses the robot naming both values instead, and going back to
// the save's configuration resumes the brain (docs/operating.md). Torch-free, so the server's
// torch-free layers can tell it from a damaged file.
#pragma once

#include <stdexcept>
#include <string>

namespace fieldbrain {

class SaveMismatch : public std::runtime_error {
 public:
  // `setting`: the config key that differs ("resolution"); `saved`, `running`: its value in
  // the save and in the brain that tried to load it, as JSON text.
  SaveMismatch(const std::string& what, std::string setting, std::string saved, std::string running)
      : std::runtime_error(what),
        setting_(std::move(setting)),
        saved_(std::move(saved)),
        running_(std::move(running)) {}
  const std::string& setting() const { return setting_; }
  const std::string& saved() const { return saved_; }
  const std::string& running() const { return running_; }

 private:
  std::string setting_, saved_, running_;
};

}  // namespace fieldbrain
