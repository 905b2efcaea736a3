# Shared settings for every fieldbrain target.
#
# fieldbrain_target(<target> [TORCH]) applies warnings and the compile-time strategy for LibTorch:
# its headers cost ~25 s to parse per translation unit, and even a precompiled header (600 MB)
# costs ~6 s to load plus ~9 s of template instantiation that every TU repeats. Measured on one
# core: the 16 brain/*.cpp take 16 x 15 s with a PCH, but 55 s as one unity TU without it.
# So by default each target is compiled as unity batches (FIELDBRAIN_UNITY_BATCH sources per
# TU) without a PCH; with FIELDBRAIN_UNITY_BUILD=OFF (handy when editing one file) every TU is
# compiled on its own against a per-target PCH of brain/torch_pch.h.
option(FIELDBRAIN_UNITY_BUILD "Compile each target as unity batches (fast clean builds)" ON)
set(FIELDBRAIN_UNITY_BATCH 8 CACHE STRING "Sources per unity translation unit")

#
# INSTALLED marks a target that `cmake --install` ships (cmake/FieldbrainInstall.cmake): it gets
# no FIELDBRAIN_SOURCE_DIR / FIELDBRAIN_PYTHON (an installed library must not depend on this
# checkout), and its headers are found under <prefix>/include/fieldbrain once installed.
function(fieldbrain_target target)
  cmake_parse_arguments(FB "TORCH;INSTALLED" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(FIELDBRAIN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # __FILE__ (LibTorch's TORCH_CHECK messages) names files relative to the repository, so no
  # binary carries this machine's checkout path.
  target_compile_options(${target} PRIVATE -ffile-prefix-map=${PROJECT_SOURCE_DIR}/=)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:include/fieldbrain>
                                              $<INSTALL_INTERFACE:include>)
  if(NOT FB_INSTALLED)
    target_compile_definitions(${target} PRIVATE
      FIELDBRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      FIELDBRAIN_PYTHON="${FIELDBRAIN_PYTHON}")
  endif()
  if(FIELDBRAIN_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${FIELDBRAIN_UNITY_BATCH})
  endif()
  if(FB_TORCH)
    target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
  endif()
  if(FB_TORCH AND FIELDBRAIN_UNITY_BUILD)
    # Every TU sees LibTorch first, as with the PCH. The order matters: LibTorch pulls in
    # glog, whose CHECK macro would silently replace Catch2's CHECK in any test source that
    # includes catch.hpp before a torch header (the assertions would stop being counted and
    # reported).
    target_compile_options(${target} PRIVATE -include ${PROJECT_SOURCE_DIR}/brain/torch_pch.h)
  endif()
  if(FB_TORCH AND NOT FIELDBRAIN_UNITY_BUILD)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/brain/torch_pch.h)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # Lets ccache cache compiles that use the PCH (with the sloppiness set in build.sh).
      target_compile_options(${target} PRIVATE -fpch-preprocess)
    endif()
  endif()
endfunction()
