// libFuzzer target for the user's memory category rules (issue 28): a pattern
// that ruleRegexError accepts must compile, and match any frame name of up to
// 1,024 characters quickly. A slow match is what this looks for: run with
// -timeout (scripts/fuzz.sh sets 10 s). Input: the pattern, a newline, then
// the text to search.
#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>

#include "analysis/snapshot_stacks.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const size_t newline = input.find('\n');
    const std::string pattern = input.substr(0, newline);
    const std::string text =
        newline == std::string::npos ? std::string() : input.substr(newline + 1, 1024);
    if (!ruleRegexError(pattern).empty()) {
        return 0;
    }
    const std::regex compiled(pattern);  // accepted: must compile without throwing
    std::regex_search(text, compiled);
    return 0;
}
