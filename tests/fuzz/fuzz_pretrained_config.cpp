// libFuzzer target for the from_pretrained folder's model_config.json reader
// (issue 33): any bytes give the model's dimensions within the limits or one
// std::runtime_error naming the field, never a crash or another exception,
// and in our words: no "[json.exception…]" tag of the parser's (issue 45).
// Seeds: tests/fuzz/seeds/pretrained_config.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "config/limits.h"
#include "model/pretrained_folder.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const ModelDims dims = pretrainedConfigDims(
            std::string(reinterpret_cast<const char*>(data), size), "model_config.json");
        // What the reader returns, the limits accept: a model StepScope can build.
        if (!modelLimitProblems(dims).empty() || !(dims.ropeTheta > 0)) {
            __builtin_trap();
        }
    } catch (const std::runtime_error& error) {
        // The tag, unless the bytes themselves hold it (a message may quote them).
        const std::string_view bytes(reinterpret_cast<const char*>(data), size);
        if (std::string(error.what()).find("[json.exception") != std::string::npos &&
            bytes.find("json.exception") == std::string_view::npos) {
            __builtin_trap();
        }
    }
    return 0;
}
