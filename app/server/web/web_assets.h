// The web monitor's static files (page, script, style, the vendored uPlot), compiled into the
// server by embed_assets.cmake.
#pragma once

#include <cstddef>
#include <string_view>

namespace fieldbrain::server::web {

struct WebAsset {
  const char* path;          // URL path, "/index.html"
  const char* content_type;  // "text/html; charset=utf-8"
  const unsigned char* data;
  size_t size;
};

const WebAsset* web_assets_begin();
const WebAsset* web_assets_end();

// The asset for a request target ("/" is "/index.html"; a query string is ignored), or
// nullptr when there is none.
const WebAsset* find_web_asset(std::string_view target);

}  // namespace fieldbrain::server::web
