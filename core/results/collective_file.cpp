#include "results/collective_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "results/json_fields.h"
#include "results/json_text.h"
#include "results/run_file.h"
#include "util/atomic_file.h"

namespace stepscope {

using nlohmann::json;
using namespace json_fields;

double busBandwidthFactor(const std::string& op, int ranks) {
    const double n = std::max(1, ranks);
    if (op == "all_reduce") {
        return 2 * (n - 1) / n;
    }
    if (op == "all_gather" || op == "reduce_scatter") {
        return (n - 1) / n;
    }
    return 1;  // broadcast
}

void collectiveFigures(CollectiveRow& row) {
    row.timeUs = row.minUs = row.maxUs = row.algbwGbps = row.busbwGbps = 0;
    size_t repeats = 0;
    for (const auto& rank : row.timesUs) {
        repeats = std::max(repeats, rank.size());
    }
    // A call ends when its slowest rank's does: the others waited for it.
    std::vector<double> calls(repeats, 0);
    for (const auto& rank : row.timesUs) {
        for (size_t i = 0; i < rank.size(); ++i) {
            calls[i] = std::max(calls[i], rank[i]);
        }
    }
    if (row.status != "ok" || calls.empty()) {
        return;
    }
    std::sort(calls.begin(), calls.end());
    const size_t middle = calls.size() / 2;
    row.timeUs = calls.size() % 2 ? calls[middle] : (calls[middle - 1] + calls[middle]) / 2;
    row.minUs = calls.front();
    row.maxUs = calls.back();
    if (row.timeUs > 0) {
        row.algbwGbps = double(row.sizeBytes) / row.timeUs / 1e3;  // bytes/µs → GB/s
        row.busbwGbps = row.algbwGbps * busBandwidthFactor(row.op, row.ranks);
    }
}

namespace {

constexpr const char* kFormat = "stepscope-collective";

json rowJson(const CollectiveRow& row) {
    return {{"op", row.op},
            {"size_bytes", row.sizeBytes},
            {"requested_bytes", row.requestedBytes},
            {"ranks", row.ranks},
            {"backend", row.backend},
            {"dtype", row.dtype},
            {"device", row.device},
            {"status", row.status},
            {"message", row.message},
            {"time_us", row.timeUs},
            {"min_us", row.minUs},
            {"max_us", row.maxUs},
            {"algbw_gbps", row.algbwGbps},
            {"busbw_gbps", row.busbwGbps},
            {"busbw_factor", busBandwidthFactor(row.op, row.ranks)},
            {"emulated", row.emulated.empty() ? json(nullptr) : json(row.emulated)},
            {"oversubscribed", row.oversubscribed},
            {"times_us", row.timesUs}};
}

CollectiveRow rowFromJson(const json& item, const std::string& where) {
    if (!item.is_object()) {
        throw RunFileError(where + ": expected an object");
    }
    CollectiveRow row;
    row.op = field<std::string>(item, "op", where);
    if (std::find(std::begin(kCollectiveOps), std::end(kCollectiveOps), row.op) ==
        std::end(kCollectiveOps)) {
        throw RunFileError(where + ".op: '" + row.op +
                           "' is none of all_reduce, all_gather, reduce_scatter, broadcast");
    }
    row.sizeBytes = field<int64_t>(item, "size_bytes", where);
    row.requestedBytes = fieldOr<int64_t>(item, "requested_bytes", where, row.sizeBytes);
    row.ranks = int(std::min<int64_t>(field<int64_t>(item, "ranks", where), 1 << 20));
    row.backend = fieldOr<std::string>(item, "backend", where, "");
    row.dtype = fieldOr<std::string>(item, "dtype", where, "");
    row.device = fieldOr<std::string>(item, "device", where, "");
    row.status = field<std::string>(item, "status", where);
    row.message = fieldOr<std::string>(item, "message", where, "");
    row.emulated = optionalField<std::string>(item, "emulated", where).value_or("");
    row.oversubscribed = fieldOr<bool>(item, "oversubscribed", where, false);
    const auto times = item.find("times_us");
    if (times != item.end()) {
        if (!times->is_array() || times->size() > size_t(row.ranks)) {
            throw RunFileError(where + ".times_us: expected an array of at most ranks (" +
                               std::to_string(row.ranks) + ") arrays of times");
        }
        for (size_t r = 0; r < times->size(); ++r) {
            const json& rank = (*times)[r];
            const std::string at = where + ".times_us[" + std::to_string(r) + "]";
            if (!rank.is_array()) {
                throw RunFileError(at + ": expected an array of times (µs)");
            }
            auto& kept = row.timesUs.emplace_back();
            for (const json& time : rank) {
                if (!time.is_number() || !(time.get<double>() >= 0)) {
                    throw RunFileError(at + ": expected times ≥ 0 (µs)");
                }
                kept.push_back(time.get<double>());
            }
        }
    }
    collectiveFigures(row);  // from the times, whatever the file says of them
    return row;
}

}  // namespace

std::string collectiveFileToJson(const CollectiveFile& file) {
    json rows = json::array();
    for (const CollectiveRow& row : file.rows) {
        rows.push_back(rowJson(row));
    }
    return json({{"format", kFormat},
                 {"version", 1},
                 {"torch", file.torchVersion},
                 {"cores", file.cores},
                 {"rows", rows}})
               .dump(2) +
           "\n";
}

CollectiveFile collectiveFileFromJson(const std::string& text) {
    json document;
    try {
        document = json::parse(text);
    } catch (const json::exception& error) {
        throw RunFileError(jsonParseProblem(error, text));
    }
    const auto format = document.is_object() ? document.find("format") : document.end();
    if (format == document.end() || *format != kFormat) {
        throw RunFileError("not a StepScope collective file (format \"stepscope-collective\")");
    }
    const int64_t version = field<int64_t>(document, "version", "collective file");
    if (version != 1) {
        throw RunFileError("collective file version " + std::to_string(version) +
                           " is not supported; this StepScope reads version 1");
    }
    CollectiveFile file;
    file.torchVersion = fieldOr<std::string>(document, "torch", "collective file", "");
    file.cores =
        int(std::min<int64_t>(fieldOr<int64_t>(document, "cores", "collective file", 0), 1 << 20));
    const auto rows = document.find("rows");
    if (rows == document.end() || !rows->is_array()) {
        throw RunFileError("rows: expected an array");
    }
    for (size_t i = 0; i < rows->size(); ++i) {
        file.rows.push_back(rowFromJson((*rows)[i], "rows[" + std::to_string(i) + "]"));
    }
    return file;
}

CollectiveFile readCollectiveFile(const std::string& path) {
    return readFileAs(path, "a StepScope collective file", collectiveFileFromJson);
}

bool looksLikeCollectiveFile(const std::string& text) {
    return text.find(std::string("\"") + kFormat + "\"") != std::string::npos;
}

}  // namespace stepscope
