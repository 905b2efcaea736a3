# fieldbrain_version: a small static library defining fieldbrain::version()
# (app/version/version.h). Its source is written at build time by cmake/WriteVersion.cmake
# from PROJECT_VERSION and `git describe`, and only rewritten when the text changes, so a new
# commit relinks the executables without recompiling anything but that one file.
set(FIELDBRAIN_VERSION_CPP ${PROJECT_BINARY_DIR}/generated/fieldbrain_version.cpp)
set(FIELDBRAIN_VERSION_ARGS -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUT=${FIELDBRAIN_VERSION_CPP}
    -DPROJECT_VERSION=${PROJECT_VERSION})
# Once now, so the file exists for the first build's dependency scan.
execute_process(COMMAND ${CMAKE_COMMAND} ${FIELDBRAIN_VERSION_ARGS}
                        -P ${PROJECT_SOURCE_DIR}/cmake/WriteVersion.cmake)
add_custom_target(fieldbrain_version_stamp
  COMMAND ${CMAKE_COMMAND} ${FIELDBRAIN_VERSION_ARGS} -P ${PROJECT_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${FIELDBRAIN_VERSION_CPP}
  COMMENT "Checking the version (git describe)"
  VERBATIM)
add_library(fieldbrain_version STATIC ${FIELDBRAIN_VERSION_CPP})
add_dependencies(fieldbrain_version fieldbrain_version_stamp)
target_include_directories(fieldbrain_version PUBLIC ${PROJECT_SOURCE_DIR})
