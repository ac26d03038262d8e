// libFuzzer target for the collective file reader: any bytes give the file's
// rows (their figures worked out again from the times) or one RunFileError
// naming the field, never a crash or another exception, and in our words
// (no "[json.exception…]" tag). Seeds: tests/fuzz/seeds/collective_file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "results/collective_file.h"
#include "results/run_file.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const CollectiveFile file =
            collectiveFileFromJson(std::string(reinterpret_cast<const char*>(data), size));
        collectiveFileToJson(file);
    } catch (const RunFileError& error) {
        const std::string_view bytes(reinterpret_cast<const char*>(data), size);
        if (std::string(error.what()).find("[json.exception") != std::string::npos &&
            bytes.find("json.exception") == std::string_view::npos) {
            __builtin_trap();
        }
    }
    return 0;
}
