#include "results/json_text.h"

#include "util/checked_math.h"

namespace stepscope {

using nlohmann::json;

std::string jsonErrorText(const json::exception& error) {
    const std::string text = error.what();
    const size_t end = text.rfind("] ", text.find(' '));
    return text.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? text.substr(end + 2)
                                                                              : text;
}

std::string jsonParseProblem(const json::exception& error, std::string_view text) {
    if (dynamic_cast<const json::out_of_range*>(&error)) {  // 1e999
        return "a number is out of range: " + jsonErrorText(error);
    }
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        return text.empty() ? "empty, not JSON" : "only white space, not JSON";
    }
    return "not valid JSON: " + jsonErrorText(error);
}

std::optional<int64_t> jsonInteger(const json& value, std::string& problem, int64_t min,
                                   int64_t max) {
    if (value.is_number_unsigned()) {
        const auto unsignedValue = value.get<uint64_t>();
        if (unsignedValue > uint64_t(std::numeric_limits<int64_t>::max())) {
            problem = "must be ≤ " + std::to_string(max) + ", got " +
                      std::to_string(unsignedValue);  // past int64, so past any max
            return std::nullopt;
        }
        problem = integerRangeProblem(int64_t(unsignedValue), min, max);
    } else if (value.is_number_integer()) {
        problem = integerRangeProblem(value.get<int64_t>(), min, max);
    } else if (value.is_number_float()) {
        problem = integerProblem(value.get<double>(), min, max);
        if (problem.empty()) {
            return integerFromDouble(value.get<double>());
        }
    } else {
        problem = "expected an integer";
    }
    if (!problem.empty()) {
        return std::nullopt;
    }
    return value.is_number_unsigned() ? int64_t(value.get<uint64_t>()) : value.get<int64_t>();
}

}  // namespace stepscope
