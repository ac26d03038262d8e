// libFuzzer target for the run file reader (issue 33): any bytes give a
// RunResult or one RunFileError, never a crash, a hang or another
// exception. Seeds: resources/examples' run files. Built by
// tests/fuzz/CMakeLists.txt; a longer run: scripts/fuzz.sh run_file 600.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "results/run_file.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const RunResult result = runResultFromJson(text);
        // What was read writes and reads back.
        runResultFromJson(runResultToJson(result, -1));
    } catch (const RunFileError&) {
    }
    return 0;
}
