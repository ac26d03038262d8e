# stepscope_warnings(target): -Wall -Wextra for our own code, never for
# third-party headers (those come in as SYSTEM includes).
function(stepscope_warnings target)
    target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
        $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
    if(STEPSCOPE_WARNINGS_AS_ERRORS)
        target_compile_options(${target} PRIVATE
            $<$<COMPILE_LANGUAGE:CXX>:-Werror>
            $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
    endif()
endfunction()
