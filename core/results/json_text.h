#pragma once

// What every JSON reader of files says about the JSON itself, in our words:
// nlohmann's messages carry a "[json.exception.parse_error.101] " tag that
// says nothing to a user, and its get<int64_t>() on a number with a fraction
// or past int64 is a cast, not a check (docs/hostile-files.md).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace stepscope {

// nlohmann's message without its "[json.exception.…] " tag.
std::string jsonErrorText(const nlohmann::json::exception& error);

// Why `text` did not parse (`error` is what json::parse threw): "a number is
// out of range: number overflow parsing '1e309'", "empty, not JSON",
// "not valid JSON: syntax error while parsing value - …".
std::string jsonParseProblem(const nlohmann::json::exception& error, std::string_view text);

// `value` as a whole number in min..max, through util/checked_math.h's one
// conversion: an integer as written, or a number with an exponent or ".0"
// that is whole (1e3, 7.0). nullopt where it is not one, with `problem` set
// to why ("expected an integer" for a string, "expected an integer, got
// 1.5", "must be ≥ 0, got -3").
std::optional<int64_t> jsonInteger(const nlohmann::json& value, std::string& problem,
                                   int64_t min = std::numeric_limits<int64_t>::min(),
                                   int64_t max = std::numeric_limits<int64_t>::max());

}  // namespace stepscope
