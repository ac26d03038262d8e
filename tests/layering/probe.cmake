# cmake -DBUILD_DIR=... -P probe.cmake: builds the two probe targets of
# tests/CMakeLists.txt. The downward one must compile; the upward one must
# fail because the engines header is not found from core/config.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target layering_probe_downward
                RESULT_VARIABLE downward OUTPUT_VARIABLE downward_output ERROR_VARIABLE downward_output)
if(NOT downward EQUAL 0)
    message(FATAL_ERROR "config including its own layer and util did not compile:\n${downward_output}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target layering_probe_upward
                RESULT_VARIABLE upward OUTPUT_VARIABLE upward_output ERROR_VARIABLE upward_output)
if(upward EQUAL 0)
    message(FATAL_ERROR "core/config including engines/runner.h compiled: the layers do not hold")
endif()
if(NOT upward_output MATCHES "engines/runner.h: No such file or directory")
    message(FATAL_ERROR "the upward include failed for another reason:\n${upward_output}")
endif()
message(STATUS "layering: core/config cannot include engines/runner.h, and can include util/")
