#include "app/server/web/web_assets.h"

namespace fieldbrain::server::web {

const WebAsset* find_web_asset(std::string_view target) {
  const size_t query = target.find_first_of("?#");
  if (query != std::string_view::npos) target = target.substr(0, query);
  if (target == "/") target = "/index.html";
  for (const WebAsset* a = web_assets_begin(); a != web_assets_end(); ++a) {
    if (target == a->path) return a;
  }
  return nullptr;
}

}  // namespace fieldbrain::server::web
