#pragma once

// Fields of a JSON file read with checks, for the small file formats
// (attention, collective): a missing key, a wrong kind or a number that is
// no whole count says which field, as RunFileError, never a cast.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "results/json_text.h"
#include "results/run_file.h"
#include "util/atomic_file.h"

namespace stepscope::json_fields {

using nlohmann::json;

// Whether `value` holds a T: a string, a bool, an integer that fits, a number.
template <typename T>
bool holds(const json& value) {
    if constexpr (std::is_same_v<T, std::string>) {
        return value.is_string();
    } else if constexpr (std::is_same_v<T, bool>) {
        return value.is_boolean();
    } else if constexpr (std::is_integral_v<T>) {
        return value.is_number_integer() &&
               (value.is_number_unsigned() ? value.get<uint64_t>() <= uint64_t(INT64_MAX) : true);
    } else {
        return value.is_number();
    }
}

template <typename T>
const char* kindOf() {
    if constexpr (std::is_same_v<T, std::string>) {
        return "a string";
    } else if constexpr (std::is_same_v<T, bool>) {
        return "true or false";
    } else if constexpr (std::is_integral_v<T>) {
        return "an integer";
    } else {
        return "a number";
    }
}

// `object[key]` as a T, or RunFileError naming `where`.`key`. Every integer
// of the file is a count or a size: a whole number ≥ 0, checked as such.
template <typename T>
T field(const json& object, const char* key, const std::string& where) {
    const auto found = object.find(key);
    if (found == object.end()) {
        throw RunFileError(where + "." + key + ": missing");
    }
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        std::string problem;
        const auto value = jsonInteger(*found, problem, 0, std::numeric_limits<T>::max());
        if (!value) {
            throw RunFileError(where + "." + key + ": " + problem);
        }
        return T(*value);
    }
    if (!holds<T>(*found)) {
        throw RunFileError(where + "." + key + ": expected " + kindOf<T>());
    }
    return found->get<T>();
}

template <typename T>
T fieldOr(const json& object, const char* key, const std::string& where, T fallback) {
    return object.contains(key) ? field<T>(object, key, where) : fallback;
}

template <typename T>
std::optional<T> optionalField(const json& object, const char* key, const std::string& where) {
    const auto found = object.find(key);
    if (found == object.end() || found->is_null()) {
        return std::nullopt;
    }
    return field<T>(object, key, where);
}

// The file at `path` parsed by `parse` (its text in, the file's contents
// out), every failure a RunFileError naming the path: a folder where the
// file was expected, a file that cannot be read, or what `parse` refused.
template <typename Parse>
auto readFileAs(const std::string& path, const std::string& what, Parse parse) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
        throw RunFileError("'" + path + "': a folder, not " + what);
    }
    try {
        return parse(readFile(path));
    } catch (const std::runtime_error& failure) {
        throw RunFileError("'" + path + "': " + failure.what());
    }
}

}  // namespace stepscope::json_fields
