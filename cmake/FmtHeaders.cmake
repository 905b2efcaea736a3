# One fmt for every translation unit, whatever LibTorch is used.
#
# LibTorch 2.x installs its own fmt headers (fmt 11/12) in its include directory, which comes
# first on the include path of every target linking torch. Code compiled against those headers
# but linked with the distribution's libfmt (fmt 9) fails to link (undefined fmt::v12::vprint),
# and spdlog 1.10 (compiled against fmt 9) cannot be used with them either. So:
#  - every target sees the fmt headers of the fmt package found by find_package(fmt) first,
#    through a forwarding directory in the build tree given with -I (searched before LibTorch's
#    -isystem directories; GCC would ignore -I/usr/include itself);
#  - fmt is header-only everywhere (FMT_HEADER_ONLY), so no translation unit references a
#    compiled fmt symbol; spdlog (SPDLOG_FMT_EXTERNAL, from its package) uses the same headers.
# With Debian's LibTorch 1.13, which bundles no fmt, this changes nothing but the header-only
# mode.
get_target_property(_fieldbrain_fmt_dirs fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(FIELDBRAIN_FMT_INCLUDE_DIR fmt/format.h HINTS ${_fieldbrain_fmt_dirs} NO_DEFAULT_PATH)
if(NOT FIELDBRAIN_FMT_INCLUDE_DIR)
  find_path(FIELDBRAIN_FMT_INCLUDE_DIR fmt/format.h)
endif()
if(NOT FIELDBRAIN_FMT_INCLUDE_DIR)
  message(FATAL_ERROR "fmt headers not found (fmt::fmt include directories: ${_fieldbrain_fmt_dirs})")
endif()
set(_fieldbrain_fmt_forward ${CMAKE_BINARY_DIR}/fmt-include)
file(MAKE_DIRECTORY ${_fieldbrain_fmt_forward})
file(CREATE_LINK ${FIELDBRAIN_FMT_INCLUDE_DIR}/fmt ${_fieldbrain_fmt_forward}/fmt SYMBOLIC)
include_directories(BEFORE ${_fieldbrain_fmt_forward})
add_compile_definitions(FMT_HEADER_ONLY=1)
message(STATUS "fmt: header-only, headers from ${FIELDBRAIN_FMT_INCLUDE_DIR}/fmt")
