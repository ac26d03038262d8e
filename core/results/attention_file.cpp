#include "results/attention_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include "estimate/cost_model.h"
#include "results/json_fields.h"
#include "results/json_text.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope {

using nlohmann::json;
using namespace json_fields;

json attentionPointCoordinates(const AttentionPoint& p) {
    return {{"backend", p.backend}, {"d", p.d},         {"seq", p.seq},
            {"batch", p.batch},     {"heads", p.heads}, {"precision", toString(p.precision)},
            {"causal", p.causal}};
}

namespace {

template <typename T>
json optional(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

json gateJson(const std::optional<AttentionGate>& gate) {
    if (!gate) {
        return nullptr;
    }
    return {{"ok", gate->ok},
            {"max_rel_error", optional(gate->maxRelError)},
            {"tolerance", gate->tolerance},
            {"message", gate->message}};
}

json pointJson(const AttentionPoint& p) {
    json point = attentionPointCoordinates(p);
    point.update({{"kernel", p.kernel},
                  {"status", p.status},
                  {"message", p.message},
                  {"forward_ms", optional(p.forwardMs)},
                  {"backward_ms", optional(p.backwardMs)},
                  {"mem_before_backward_bytes", optional(p.memBeforeBackwardBytes)},
                  {"peak_bytes", optional(p.peakBytes)},
                  {"forward_tflops", optional(p.forwardTflops)},
                  {"backward_tflops", optional(p.backwardTflops)},
                  {"score_matrix_bytes", p.scoreMatrixBytes},
                  {"gate", gateJson(p.gate)}});
    return point;
}

std::string cell(const std::optional<double>& value, int decimals) {
    return value ? fixedDecimals(*value, decimals) : std::string();
}

// "4.1e-01": relative errors and tolerances span many decades.
std::string scientific(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1e", value);
    return text;
}

// The shortest text that reads back as the same double: 0.0001, 2.3482355908756896.
std::string shortestDouble(double value) {
    return json(value).dump();
}

std::optional<AttentionGate> gateFromJson(const json& item, const std::string& where) {
    const auto found = item.find("gate");
    if (found == item.end() || found->is_null()) {
        return std::nullopt;  // no gate, or a file from before the gate
    }
    const std::string at = where + ".gate";
    if (!found->is_object()) {
        throw RunFileError(at + ": expected an object");
    }
    AttentionGate gate;
    gate.ok = field<bool>(*found, "ok", at);
    gate.maxRelError = optionalField<double>(*found, "max_rel_error", at);
    gate.tolerance = fieldOr<double>(*found, "tolerance", at, 0.0);
    gate.message = fieldOr<std::string>(*found, "message", at, "");
    return gate;
}

EnvironmentInfo environmentFromJson(const json& object) {
    EnvironmentInfo env;
    const std::string where = "environment";
    env.libtorchVersion = fieldOr<std::string>(object, "libtorch_version", where, "");
    env.cudaVersion = fieldOr<std::string>(object, "cuda_version", where, "");
    env.deviceName = fieldOr<std::string>(object, "device_name", where, "");
    env.cpuThreads = fieldOr<int>(object, "cpu_threads", where, 0);
    env.startedAt = fieldOr<std::string>(object, "started_at", where, "");
    if (const auto slurm = object.find("slurm"); slurm != object.end() && slurm->is_object()) {
        const std::string at = "environment.slurm";
        env.slurmJobId = fieldOr<std::string>(*slurm, "job_id", at, "");
        env.slurmArrayJobId = fieldOr<std::string>(*slurm, "array_job_id", at, "");
        env.slurmArrayTaskId = fieldOr<std::string>(*slurm, "array_task_id", at, "");
        env.slurmNode = fieldOr<std::string>(*slurm, "node", at, "");
    }
    return env;
}

json pointsJson(const std::vector<AttentionPoint>& points) {
    json list = json::array();
    for (const auto& point : points) {
        list.push_back(pointJson(point));
    }
    return list;
}

}  // namespace

std::string attentionPointsToJson(const std::vector<AttentionPoint>& points) {
    return pointsJson(points).dump(2) + "\n";
}

std::string attentionResultToJson(const std::vector<AttentionPoint>& points,
                                  const EnvironmentInfo& env) {
    const json list = pointsJson(points);
    const json document = {{"format", "stepscope-attention"},
                           {"version", 1},
                           {"environment",
                            {{"libtorch_version", env.libtorchVersion},
                             {"cuda_version", env.cudaVersion},
                             {"device_name", env.deviceName},
                             {"cpu_threads", env.cpuThreads},
                             {"started_at", env.startedAt},
                             {"slurm", slurmEnvironmentJson(env)}}},
                           {"points", list}};
    return document.dump(2) + "\n";
}

std::vector<AttentionPoint> attentionResultFromJson(const std::string& text) {
    return attentionFileFromJson(text).points;
}

namespace {

// The format and version, which say whether the rest can be read at all.
void checkAttentionHeader(const json& document) {
    const auto format = document.is_object() ? document.find("format") : document.end();
    if (!document.is_object() || format == document.end() || *format != "stepscope-attention") {
        throw RunFileError("not a StepScope attention file (format \"stepscope-attention\")");
    }
    const int64_t version = fieldOr<int64_t>(document, "version", "attention file", 0);
    if (version != 1) {
        throw RunFileError("attention file version " + std::to_string(version) +
                           " is not supported; this StepScope reads version 1");
    }
}

AttentionPoint pointFromJson(const json& item, const std::string& where) {
    if (!item.is_object()) {
        throw RunFileError(where + ": expected an object");
    }
    AttentionPoint p;
    p.backend = field<std::string>(item, "backend", where);
    p.kernel = fieldOr<std::string>(item, "kernel", where, p.backend);
    p.d = field<int64_t>(item, "d", where);
    p.seq = field<int64_t>(item, "seq", where);
    p.batch = field<int64_t>(item, "batch", where);
    p.heads = field<int64_t>(item, "heads", where);
    p.precision =
        parsePrecision(field<std::string>(item, "precision", where)).value_or(Precision::Fp32);
    p.causal = field<bool>(item, "causal", where);
    p.status = field<std::string>(item, "status", where);
    p.message = fieldOr<std::string>(item, "message", where, "");
    p.forwardMs = optionalField<double>(item, "forward_ms", where);
    p.backwardMs = optionalField<double>(item, "backward_ms", where);
    p.memBeforeBackwardBytes = optionalField<int64_t>(item, "mem_before_backward_bytes", where);
    p.peakBytes = optionalField<int64_t>(item, "peak_bytes", where);
    p.forwardTflops = optionalField<double>(item, "forward_tflops", where);
    p.backwardTflops = optionalField<double>(item, "backward_tflops", where);
    p.scoreMatrixBytes = fieldOr<int64_t>(item, "score_matrix_bytes", where, 0);
    p.gate = gateFromJson(item, where);
    return p;
}

}  // namespace

AttentionFile attentionFileFromJson(const std::string& text) {
    json document;
    try {
        document = json::parse(text);
    } catch (const json::exception& error) {
        throw RunFileError(jsonParseProblem(error, text));
    }
    checkAttentionHeader(document);
    AttentionFile file;
    const json environment = document.value("environment", json::object());
    if (!environment.is_object()) {
        throw RunFileError("environment: expected an object");
    }
    file.environment = environmentFromJson(environment);
    const auto list = document.find("points");
    if (list == document.end() || !list->is_array()) {
        throw RunFileError("points: expected an array");
    }
    for (size_t i = 0; i < list->size(); ++i) {
        file.points.push_back(pointFromJson((*list)[i], "points[" + std::to_string(i) + "]"));
    }
    return file;
}

AttentionFile readAttentionFile(const std::string& path) {
    return readFileAs(path, "a StepScope attention file", attentionFileFromJson);
}

std::string formatAttentionCsv(const std::vector<AttentionPoint>& points) {
    std::ostringstream out;
    out << "backend,kernel,d,seq,batch,heads,precision,causal,status,forward_ms,backward_ms,"
           "mem_before_backward_bytes,peak_bytes,forward_tflops,backward_tflops,"
           "score_matrix_bytes,gate_ok,gate_max_rel_error,gate_tolerance\n";
    for (const auto& p : points) {
        out << p.backend << ',' << p.kernel << ',' << p.d << ',' << p.seq << ',' << p.batch << ','
            << p.heads << ',' << toString(p.precision) << ',' << (p.causal ? "true" : "false")
            << ',' << p.status << ',' << cell(p.forwardMs, 4) << ',' << cell(p.backwardMs, 4) << ','
            << (p.memBeforeBackwardBytes ? std::to_string(*p.memBeforeBackwardBytes) : "") << ','
            << (p.peakBytes ? std::to_string(*p.peakBytes) : "") << ',' << cell(p.forwardTflops, 4)
            << ',' << cell(p.backwardTflops, 4) << ',' << p.scoreMatrixBytes << ',';
        if (p.gate) {
            // Full figures here, for a reader's own analysis; the tables round.
            out << (p.gate->ok ? "true" : "false") << ','
                << (p.gate->maxRelError ? shortestDouble(*p.gate->maxRelError) : "") << ','
                << shortestDouble(p.gate->tolerance);
        } else {
            out << ",,";
        }
        out << '\n';
    }
    return out.str();
}

std::vector<AttentionGateRow> attentionGateRows(const std::vector<AttentionPoint>& points) {
    std::vector<AttentionGateRow> rows;
    for (const auto& p : points) {
        if (!p.gate) {
            continue;
        }
        auto row = std::find_if(rows.begin(), rows.end(), [&](const AttentionGateRow& r) {
            return r.backend == p.backend && r.precision == p.precision;
        });
        if (row == rows.end()) {
            rows.push_back({p.backend, p.precision, *p.gate});
            continue;
        }
        // One gate per backend and precision on one device; points of
        // several files or devices keep the worst.
        AttentionGate& kept = row->gate;
        const bool worse = (kept.ok && !p.gate->ok) ||
                           (kept.ok == p.gate->ok && p.gate->maxRelError &&
                            (!kept.maxRelError || *p.gate->maxRelError > *kept.maxRelError));
        if (worse) {
            kept = *p.gate;
        }
    }
    return rows;
}

std::string gateText(const std::optional<AttentionGate>& gate) {
    if (!gate) {
        return {};
    }
    if (gate->ok) {
        return "ok " + (gate->maxRelError ? scientific(*gate->maxRelError) : std::string());
    }
    if (gate->maxRelError) {
        return "incorrect " + scientific(*gate->maxRelError) + " > " + scientific(gate->tolerance);
    }
    // No error to show: it raised, gave NaN or inf, or a wrong shape.
    return gate->message.find(" raised ") != std::string::npos ? "raised" : "incorrect";
}

namespace {

// The first line of a message: tables keep one line per point.
std::string firstLine(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

void writeGateTable(std::ostream& out, const std::vector<AttentionPoint>& points) {
    const auto rows = attentionGateRows(points);
    if (rows.empty()) {
        return;
    }
    out << "\nCorrectness gate of the Python backends (worst max|x − ref| / max|ref| against "
           "float64 over O, L, dQ, dK, dV; an incorrect backend is not timed):\n\n"
        << "| backend | precision | gate | worst relative error | tolerance | message |\n"
        << "|---|---|---|---:|---:|---|\n";
    for (const auto& row : rows) {
        const AttentionGate& g = row.gate;
        out << "| " << row.backend << " | " << toString(row.precision) << " | "
            << (g.ok ? "ok" : "**" + gateText(g).substr(0, gateText(g).find(' ')) + "**") << " | "
            << (g.maxRelError ? scientific(*g.maxRelError) : std::string("–")) << " | "
            << scientific(g.tolerance) << " | " << firstLine(g.message) << " |\n";
    }
}

// Why points were not measured, once per backend, precision, status and message.
void writeNotes(std::ostream& out, const std::vector<AttentionPoint>& points) {
    std::vector<std::string> notes;
    for (const auto& p : points) {
        if (p.status == "ok" || p.message.empty() || p.status == "incorrect") {
            continue;  // an incorrect backend's message is its gate's, in the table above
        }
        const std::string note = "- " + p.backend + " " + toString(p.precision) + ", " + p.status +
                                 ": " + firstLine(p.message);
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
            notes.push_back(note);
        }
    }
    if (!notes.empty()) {
        out << "\nNot measured:\n\n";
        for (const auto& note : notes) {
            out << note << "\n";
        }
    }
}

}  // namespace

std::string formatAttentionTable(const std::vector<AttentionPoint>& points) {
    std::ostringstream out;
    out << "| backend | precision | d | seq | status | gate | forward ms | backward ms | mem "
           "before backward | peak | fwd TFLOP/s | bwd TFLOP/s | one score matrix |\n"
        << "|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    auto bytes = [](const std::optional<int64_t>& value) {
        return value ? formatBytes(double(*value)) : std::string("–");
    };
    for (const auto& p : points) {
        const bool incorrect = p.status == "incorrect";
        // An incorrect backend has no times: struck out, never a result.
        auto number = [incorrect](const std::optional<double>& value, int decimals) {
            return incorrect ? std::string("~~not timed~~")
                   : value   ? cell(value, decimals)
                             : std::string("–");
        };
        std::string backend = p.backend;
        if (p.kernel != p.backend && !p.kernel.empty()) {
            backend += " (" + p.kernel + ")";
        }
        const std::string gate = gateText(p.gate);
        out << "| " << backend << " | " << toString(p.precision) << " | " << p.d << " | " << p.seq
            << " | " << (incorrect ? "**incorrect**" : p.status) << " | "
            << (gate.empty() ? "–" : gate) << " | " << number(p.forwardMs, 3) << " | "
            << number(p.backwardMs, 3) << " | " << bytes(p.memBeforeBackwardBytes) << " | "
            << bytes(p.peakBytes) << " | " << number(p.forwardTflops, 4) << " | "
            << number(p.backwardTflops, 4) << " | " << formatBytes(double(p.scoreMatrixBytes))
            << " |\n";
    }
    writeGateTable(out, points);
    writeNotes(out, points);
    return out.str();
}

}  // namespace stepscope
