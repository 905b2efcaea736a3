# Shared settings for every fieldbrain target.
#
# fieldbrain_target(<target> [TORCH]) applies warnings and, for targets that include LibTorch,
# a precompiled header of brain/torch_pch.h: LibTorch headers cost ~30 s per translation unit,
# the PCH pays that once per target.
function(fieldbrain_target target)
  cmake_parse_arguments(FB "TORCH" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(FIELDBRAIN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE
    FIELDBRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    FIELDBRAIN_PYTHON="${FIELDBRAIN_PYTHON}")
  if(FB_TORCH)
    target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/brain/torch_pch.h)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # Lets ccache cache compiles that use the PCH (with the sloppiness set in build.sh).
      target_compile_options(${target} PRIVATE -fpch-preprocess)
    endif()
  endif()
endfunction()
