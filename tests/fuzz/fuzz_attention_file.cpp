// libFuzzer target for the attention file reader (issue 33): any bytes give
// the file's points or one RunFileError naming the field, never a crash or
// another exception, and in our words: no "[json.exception…]" tag of the
// parser's (issue 45). Seeds: resources/examples/attention-cpu.json.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "results/attention_file.h"
#include "results/run_file.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const AttentionFile file =
            attentionFileFromJson(std::string(reinterpret_cast<const char*>(data), size));
        formatAttentionCsv(file.points);
    } catch (const RunFileError& error) {
        // The tag, unless the bytes themselves hold it (a message may quote them).
        const std::string_view bytes(reinterpret_cast<const char*>(data), size);
        if (std::string(error.what()).find("[json.exception") != std::string::npos &&
            bytes.find("json.exception") == std::string_view::npos) {
            __builtin_trap();
        }
    }
    return 0;
}
