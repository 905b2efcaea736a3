// The one translation unit that holds Catch2 v2's main(); every suite links it. (Catch2 v3
// brings its own: Catch2::Catch2WithMain, see test/CMakeLists.txt.)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
