# harness_add_suite(): registers a harness suite with CTest as two tests, the static tier (no GPU needed)
# and the GPU run (label `gpu`). Included by the harness's package configuration and by the harness's own
# CMakeLists.txt, so it works the same after find_package(harness CONFIG) and after add_subdirectory().
# Documented in docs/cmake.md.
include_guard(GLOBAL)

# What a GPU test does on a machine without a usable GPU: SKIP (reported as not run, the default on a
# workstation) or FAIL (the default where CI is set while configuring: a GPU runner that lost its GPU must
# not turn green by skipping every kernel).
set(_harness_ci_env "$ENV{CI}")
string(TOLOWER "${_harness_ci_env}" _harness_ci_env)
if(_harness_ci_env MATCHES "^(true|1|yes)$")
  set(_harness_without_gpu_default FAIL)
else()
  set(_harness_without_gpu_default SKIP)
endif()
set(HARNESS_GPU_TEST_WITHOUT_GPU ${_harness_without_gpu_default} CACHE STRING
    "What a harness GPU test does without a usable GPU: SKIP or FAIL (default FAIL when CI is set while configuring)")
set_property(CACHE HARNESS_GPU_TEST_WITHOUT_GPU PROPERTY STRINGS SKIP FAIL)
unset(_harness_ci_env)
unset(_harness_without_gpu_default)

# harness_add_suite(NAME <name> SUITE <file>
#                   [BASELINE_DIR <dir>] [ROOT <dir>] [WITHOUT_GPU SKIP|FAIL] [TIMEOUT <seconds>]
#                   [ARCHS <sm_XX>...] [ARGS <arg>...] [STATIC_ARGS <arg>...] [GPU_ARGS <arg>...]
#                   [ENVIRONMENT <VAR=value>...] [LABELS <label>...])
#
# Adds the CTest tests
#   <name>.static  harness run --static --ci <suite> ...: every figure of the static tier must have a baseline
#                  and match it; needs no GPU; labels `harness` and LABELS.
#   <name>.gpu     harness run --require-gpu <suite> ...: compile, verify, time and profile on the GPU;
#                  labels `gpu`, `harness` and LABELS; runs alone (RUN_SERIAL), so timings are not disturbed.
# Reports go to <current binary dir>/harness-reports/<name>/{static,gpu}/<suite>/ (junit.xml among them).
# Relative SUITE, BASELINE_DIR and ROOT are taken from the current source folder; ARGS, STATIC_ARGS and
# GPU_ARGS go to the harness unchanged (ARGS to both tests), and the tests run in the current binary folder.
function(harness_add_suite)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SUITE;BASELINE_DIR;ROOT;WITHOUT_GPU;TIMEOUT"
                        "ARCHS;ARGS;STATIC_ARGS;GPU_ARGS;ENVIRONMENT;LABELS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "harness_add_suite: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required IN ITEMS NAME SUITE)
    if(NOT arg_${required})
      message(FATAL_ERROR "harness_add_suite: ${required} is required")
    endif()
  endforeach()
  if(NOT TARGET harness::harness)
    message(FATAL_ERROR "harness_add_suite(${arg_NAME}): no target harness::harness; use find_package(harness CONFIG) "
                        "or add_subdirectory() of the harness first")
  endif()
  if(NOT arg_WITHOUT_GPU)
    set(arg_WITHOUT_GPU ${HARNESS_GPU_TEST_WITHOUT_GPU})
  endif()
  if(NOT arg_WITHOUT_GPU MATCHES "^(SKIP|FAIL)$")
    message(FATAL_ERROR "harness_add_suite(${arg_NAME}): WITHOUT_GPU is '${arg_WITHOUT_GPU}', not SKIP or FAIL")
  endif()

  cmake_path(ABSOLUTE_PATH arg_SUITE BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
  if(NOT EXISTS ${arg_SUITE})
    message(FATAL_ERROR "harness_add_suite(${arg_NAME}): no suite file ${arg_SUITE}")
  endif()
  set(common ${arg_ARGS})
  if(arg_BASELINE_DIR)
    cmake_path(ABSOLUTE_PATH arg_BASELINE_DIR BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
    list(APPEND common --baseline-dir ${arg_BASELINE_DIR})
  endif()
  if(arg_ROOT)
    cmake_path(ABSOLUTE_PATH arg_ROOT BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
    list(APPEND common --root ${arg_ROOT})
  endif()
  set(archs)
  foreach(arch IN LISTS arg_ARCHS)
    list(APPEND archs --arch ${arch})
  endforeach()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/harness-reports/${arg_NAME})

  # Static tier, in CI mode whatever the environment says: a figure without a baseline fails, so a green
  # test has gated every figure. Exit 0 passes; 1 (regression), 2 (bad input) and 3 (environment) fail.
  add_test(NAME ${arg_NAME}.static
           COMMAND $<TARGET_FILE:harness::harness> run --static --ci ${archs} ${common} ${arg_STATIC_ARGS}
                   --out ${out}/static ${arg_SUITE}
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  # GPU run; CI mode comes from the environment (CI=true), as for any harness run. Exit 3 is an
  # environment problem: without a usable GPU the test is skipped or fails as WITHOUT_GPU says; no
  # counter permission or unwritable reports always fail.
  add_test(NAME ${arg_NAME}.gpu
           COMMAND $<TARGET_FILE:harness::harness> run --require-gpu ${common} ${arg_GPU_ARGS}
                   --out ${out}/gpu ${arg_SUITE}
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

  set(static_labels harness ${arg_LABELS})
  set(gpu_labels gpu harness ${arg_LABELS})
  set_tests_properties(${arg_NAME}.static PROPERTIES LABELS "${static_labels}")
  set_tests_properties(${arg_NAME}.gpu PROPERTIES LABELS "${gpu_labels}" RUN_SERIAL ON)
  if(arg_WITHOUT_GPU STREQUAL "SKIP")
    # The message the harness prints when --require-gpu finds no GPU (harness/cli/suite_runner.cxx).
    set_tests_properties(${arg_NAME}.gpu PROPERTIES
                         SKIP_REGULAR_EXPRESSION "no usable GPU \\(.*\\), and --require-gpu requires one")
  endif()
  foreach(test IN ITEMS ${arg_NAME}.static ${arg_NAME}.gpu)
    if(arg_ENVIRONMENT)
      set_tests_properties(${test} PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
    endif()
    if(arg_TIMEOUT)
      set_tests_properties(${test} PROPERTIES TIMEOUT ${arg_TIMEOUT})
    endif()
  endforeach()
endfunction()
