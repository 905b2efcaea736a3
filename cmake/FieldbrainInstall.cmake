# `cmake --install` and the exported CMake package: find_package(fieldbrain) gives
#   fieldbrain::brain  the field brain (static; brings fieldbrain::ops along)
#   fieldbrain::hrr    the HRR library (static)
#   fieldbrain::ops    libfieldbrain_ops.so, the custom operators (shared: its registration
#                      runs when it loads, also from TorchScript or Python)
# with Torch, nlohmann_json, fmt, spdlog, OpenSSL and Threads found by the package config. Headers go under
# <prefix>/include/fieldbrain/{brain,hrr}: include them as <fieldbrain/brain/field_brain.h>.
# The same names exist in the build tree (ALIAS targets) for add_subdirectory users.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FIELDBRAIN_INSTALLED_TARGETS fieldbrain_brain fieldbrain_hrr fieldbrain_ops)
foreach(target ${FIELDBRAIN_INSTALLED_TARGETS})
  string(REPLACE "fieldbrain_" "" short ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${short})
  target_compile_features(${target} PUBLIC cxx_std_17)
  add_library(fieldbrain::${short} ALIAS ${target})
endforeach()
# The installed operator library finds LibTorch where it found it at build time.
set_target_properties(fieldbrain_ops PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ${FIELDBRAIN_INSTALLED_TARGETS} EXPORT fieldbrainTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The headers keep their repository paths below include/fieldbrain, so the library's own
# includes ("brain/...", "hrr/...") resolve against <prefix>/include/fieldbrain.
foreach(dir brain hrr)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fieldbrain/${dir}
          FILES_MATCHING PATTERN "*.h")
endforeach()

set(FIELDBRAIN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fieldbrain)
install(EXPORT fieldbrainTargets NAMESPACE fieldbrain:: DESTINATION ${FIELDBRAIN_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fieldbrainConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/fieldbrainConfig.cmake
                              INSTALL_DESTINATION ${FIELDBRAIN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fieldbrainConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fieldbrainConfig.cmake
              ${PROJECT_BINARY_DIR}/fieldbrainConfigVersion.cmake
        DESTINATION ${FIELDBRAIN_CMAKE_DIR})

# What an operator runs: the server and its load test (the other executables compare against
# the Python reference in this checkout, so they stay in build/bin), the shipped configs, the
# config schema and the systemd unit. The executables find libfieldbrain_ops.so beside them.
set(FIELDBRAIN_INSTALLED_EXECUTABLES "")
foreach(exe fieldbrain-server fieldbrain-soak)
  if(TARGET ${exe})
    list(APPEND FIELDBRAIN_INSTALLED_EXECUTABLES ${exe})
    set_target_properties(${exe} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
                                            INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()
install(TARGETS ${FIELDBRAIN_INSTALLED_EXECUTABLES} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/configs/default.json ${PROJECT_SOURCE_DIR}/configs/picarx.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fieldbrain/configs)
install(FILES ${PROJECT_SOURCE_DIR}/docs/config.schema.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fieldbrain)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/fieldbrain.service
              ${PROJECT_SOURCE_DIR}/deploy/prometheus-alerts.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fieldbrain/deploy)
