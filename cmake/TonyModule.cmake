# tony_module(NAME DEPS a b c): a static library `tony_NAME` from src/NAME/*.cc (without the
# *_test.cc and *_fuzz.cc files), and, when tests are on, one GoogleTest binary `NAME_test` from the
# module's *_test.cc files, registered with CTest under the label `unit` (TONY_BUILD_UNIT_TESTS).
function(tony_module name)
  cmake_parse_arguments(ARG "" "DIR" "DEPS;SOURCES" ${ARGN})
  if(NOT ARG_DIR)
    set(ARG_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS ${ARG_DIR}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${ARG_DIR}/*_test.cc)
  file(GLOB fuzzers CONFIGURE_DEPENDS ${ARG_DIR}/*_fuzz.cc)
  if(tests)
    list(REMOVE_ITEM srcs ${tests})
  endif()
  if(fuzzers)
    list(REMOVE_ITEM srcs ${fuzzers})
  endif()
  string(REPLACE "/" "_" target ${name})
  add_library(tony_${target} STATIC ${srcs} ${ARG_SOURCES})
  target_include_directories(tony_${target} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
  target_link_libraries(tony_${target} PUBLIC ${ARG_DEPS})
  if(TONY_BUILD_TESTS AND TONY_BUILD_UNIT_TESTS AND tests)
    add_executable(${target}_test ${tests})
    target_link_libraries(${target}_test PRIVATE tony_${target} GTest::gtest GTest::gmock GTest::gtest_main)
    if(TONY_SANITIZE)
      # What the sanitizers watch is the module; the tests' own code compiles unoptimized, in
      # two thirds of the time.
      target_compile_options(${target}_test PRIVATE -O0)
    endif()
    add_test(NAME ${target}_test COMMAND ${target}_test)
    set_tests_properties(${target}_test PROPERTIES LABELS unit TIMEOUT 120)
  endif()
endfunction()

# tony_fuzz_target(NAME SOURCES files... PKG modules... SEEDS dir): a libFuzzer binary built with
# clang (whatever the main compiler is) from the given sources, linked with the pkg-config
# modules, and a CTest test `NAME` (label `fuzz`) that runs it for a bounded 20 s from the seeds.
# Only with TONY_BUILD_TESTS and TONY_BUILD_FUZZERS (the sanitizer builds leave them out: the
# targets carry their own sanitizers).
function(tony_fuzz_target name)
  cmake_parse_arguments(ARG "" "SEEDS" "SOURCES;PKG;DEPENDS" ${ARGN})
  find_program(CLANGXX clang++)
  if(NOT CLANGXX OR NOT TONY_BUILD_TESTS OR NOT TONY_BUILD_FUZZERS)
    return()
  endif()
  pkg_check_modules(${name}_PKG REQUIRED ${ARG_PKG})
  set(fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_custom_command(
    OUTPUT ${fuzz_bin}
    COMMAND ${CLANGXX} -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined
            -I${PROJECT_SOURCE_DIR}/src -I${PROJECT_BINARY_DIR}/src ${ARG_SOURCES}
            -o ${fuzz_bin} ${${name}_PKG_LDFLAGS}
    DEPENDS ${ARG_SOURCES} ${ARG_DEPENDS}
    COMMENT "Building the fuzz target ${name} with clang and libFuzzer")
  add_custom_target(build_${name} ALL DEPENDS ${fuzz_bin})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
  add_test(NAME ${name}
           COMMAND ${fuzz_bin} -max_total_time=20 -timeout=5 -rss_limit_mb=2048
                   ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus ${ARG_SEEDS})
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 120)
endfunction()
