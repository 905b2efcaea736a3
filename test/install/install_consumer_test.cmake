# ctest script: install fieldbrain into a fresh temporary prefix, check that no installed file
# names this source tree, then configure, build and run test/install/consumer against it.
# -D BUILD_DIR=... SOURCE_DIR=... WORK_DIR=... [LAUNCHER=ccache] [GENERATOR=Ninja]
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(required include/fieldbrain/brain/field_brain.h include/fieldbrain/hrr/algebra.h
                 lib/cmake/fieldbrain/fieldbrainConfig.cmake bin/fieldbrain-server bin/fieldbrain-soak
                 share/fieldbrain/configs/default.json share/fieldbrain/config.schema.json
                 share/fieldbrain/deploy/fieldbrain.service)
  if(NOT EXISTS ${prefix}/${required})
    message(FATAL_ERROR "the install has no ${required}")
  endif()
endforeach()

# No installed binary or CMake file may point into the source tree.
file(GLOB_RECURSE installed LIST_DIRECTORIES false ${prefix}/*)
foreach(f ${installed})
  file(STRINGS ${f} hits REGEX "${SOURCE_DIR}/")
  if(hits)
    list(GET hits 0 first)
    message(FATAL_ERROR "${f} names the source tree: ${first}")
  endif()
endforeach()

# The installed executables run from the prefix (their RPATH finds libfieldbrain_ops.so there),
# and the server accepts the installed config.
run("installed fieldbrain-server --version" ${prefix}/bin/fieldbrain-server --version)
if(NOT last_output MATCHES "^fieldbrain-server [0-9]")
  message(FATAL_ERROR "fieldbrain-server --version printed: ${last_output}")
endif()
run("installed fieldbrain-soak --version" ${prefix}/bin/fieldbrain-soak --version)
run("installed fieldbrain-server --print-config" ${prefix}/bin/fieldbrain-server
    --config ${prefix}/share/fieldbrain/configs/picarx.json --print-config)

set(launcher_arg "")
if(LAUNCHER)
  set(launcher_arg -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run("consumer configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/test/install/consumer
    -B ${WORK_DIR}/consumer-build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix} ${launcher_arg})
run("consumer build" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run("consumer run" ${WORK_DIR}/consumer-build/consumer)
message(STATUS "consumer: ${last_output}")
file(REMOVE_RECURSE ${WORK_DIR})
