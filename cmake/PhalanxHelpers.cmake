# One library per component, one test executable per component. Warnings are errors on our own
# targets only; third-party headers come in as SYSTEM includes through their imported targets.
include(GoogleTest)

set(PHALANX_WARNINGS -Wall -Wextra -Werror -Wno-missing-field-initializers)

# phalanx_library(NAME SRCS a.cc b.cc DEPS PUBLIC x PRIVATE y)
function(phalanx_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  if(ARG_SRCS)
    add_library(${name} STATIC ${ARG_SRCS})
    target_compile_options(${name} PRIVATE ${PHALANX_WARNINGS})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} ${ARG_DEPS})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# phalanx_test(NAME SRCS a_test.cc DEPS lib... [LABELS unit] [DEFINITIONS X="y" ...]
#              [PROPERTIES RUN_SERIAL TRUE ...])
# Builds one gtest executable and registers each test case with ctest (LABELS, default unit, and
# any further test PROPERTIES). Every test executable is also a dependency of the target
# phalanx_test_binaries, which hack/sanitize.sh builds.
function(phalanx_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS;DEFINITIONS;PROPERTIES" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_compile_options(${name} PRIVATE ${PHALANX_WARNINGS})
  target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} phalanx_testing GTest::gmock_main)
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" ${ARG_PROPERTIES}
                       DISCOVERY_TIMEOUT 60)
  set_property(GLOBAL APPEND PROPERTY PHALANX_TEST_TARGETS ${name})
  foreach(src ${ARG_SRCS})
    get_filename_component(src ${src} ABSOLUTE)
    set_property(GLOBAL APPEND PROPERTY PHALANX_DECLARED_TESTS ${src})
  endforeach()
endfunction()

# phalanx_benchmark(NAME SRCS a_bench.cc DEPS lib...)
function(phalanx_benchmark name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  if(NOT PHALANX_BUILD_BENCHMARKS)
    return()
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_compile_options(${name} PRIVATE ${PHALANX_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
endfunction()

# phalanx_binary(NAME SRCS main.cc DEPS lib...)
function(phalanx_binary name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_compile_options(${name} PRIVATE ${PHALANX_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
endfunction()

# phalanx_script_test(NAME SCRIPT path/relative/to/this/dir_test.sh TIMEOUT seconds
#                     [LABELS e2e ...] [NO_BUILD_DIR])
# Registers a shell test. It gets PHALANX_BUILD_DIR (this build) unless NO_BUILD_DIR: the
# scripts that start a private cluster run the binaries built here. A missing script fails the
# configure step instead of becoming a test that cannot run.
function(phalanx_script_test name)
  cmake_parse_arguments(ARG "NO_BUILD_DIR" "SCRIPT;TIMEOUT" "LABELS" ${ARGN})
  set(script ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_SCRIPT})
  if(NOT EXISTS ${script})
    message(FATAL_ERROR "phalanx_script_test(${name}): ${script} does not exist")
  endif()
  set_property(GLOBAL APPEND PROPERTY PHALANX_DECLARED_TESTS ${script})
  add_test(NAME ${name} COMMAND ${script})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
  if(NOT ARG_NO_BUILD_DIR)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "PHALANX_BUILD_DIR=${PROJECT_BINARY_DIR}")
  endif()
endfunction()

# phalanx_check_every_test_declared(): every *_test.cc and *_test.sh under tests/ belongs to a
# test registered above, and every directory under tests/ with a CMakeLists.txt was added. A test
# file nobody registered would otherwise never run, and nothing would say so.
function(phalanx_check_every_test_declared)
  get_property(declared GLOBAL PROPERTY PHALANX_DECLARED_TESTS)
  file(GLOB_RECURSE files ${PROJECT_SOURCE_DIR}/tests/*_test.cc
                          ${PROJECT_SOURCE_DIR}/tests/*_test.sh)
  set(missing "")
  foreach(f ${files})
    if(NOT f IN_LIST declared)
      list(APPEND missing ${f})
    endif()
  endforeach()
  file(GLOB_RECURSE lists ${PROJECT_SOURCE_DIR}/tests/*/CMakeLists.txt)
  get_property(dirs GLOBAL PROPERTY PHALANX_TEST_DIRS)
  foreach(f ${lists})
    get_filename_component(dir ${f} DIRECTORY)
    if(NOT dir IN_LIST dirs)
      list(APPEND missing ${f})
    endif()
  endforeach()
  if(missing)
    list(JOIN missing "\n  " text)
    message(FATAL_ERROR "tests that no CMakeLists.txt registers (add them to a phalanx_test / "
                        "phalanx_script_test, or their directory to tests/CMakeLists.txt):"
                        "\n  ${text}")
  endif()
endfunction()
