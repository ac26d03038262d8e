#include "experiments/collective_benchmark.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>

#include "engines/python_worker.h"
#include "util/atomic_file.h"
#include "util/child_process.h"
#include "util/temporary_directory.h"

namespace stepscope {

using nlohmann::json;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr int64_t kMostBytes = int64_t(1) << 40;

std::string joined(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& value : values) {
        out += (out.empty() ? "" : ", ") + value;
    }
    return out;
}

std::optional<std::string> notOneOf(const std::string& flag, const std::string& value,
                                    const std::vector<std::string>& allowed) {
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) {
        return std::nullopt;
    }
    return flag + ": '" + value + "' is not one of " + joined(allowed);
}

CollectiveRow rowFrom(const json& event) {
    CollectiveRow row;
    row.op = event.at("op").get<std::string>();
    row.sizeBytes = event.at("size_bytes").get<int64_t>();
    row.requestedBytes = event.value("requested_bytes", row.sizeBytes);
    row.ranks = event.at("ranks").get<int>();
    row.backend = event.value("backend", "");
    row.dtype = event.value("dtype", "");
    row.device = event.value("device", "");
    row.status = event.at("status").get<std::string>();
    row.message = event.value("message", "");
    row.timesUs = event.value("times_us", std::vector<std::vector<double>>{});
    const auto emulated = event.find("emulated");
    row.emulated = emulated != event.end() && emulated->is_string() ? emulated->get<std::string>()
                                                                    : std::string();
    row.oversubscribed = event.value("oversubscribed", false);
    collectiveFigures(row);
    return row;
}

// One torchrun of `ranks` ranks: its rows into `file` as they come.
class RankCountRun {
public:
    RankCountRun(const CollectiveSpec& spec, int ranks, CollectiveFile& file,
                 const std::atomic<bool>* cancel, const CollectiveObserver& observer)
        : spec_(spec), ranks_(ranks), file_(file), cancel_(cancel), observer_(observer) {}

    void run() {
        TemporaryDirectory folder("stepscope-collective");
        const std::string request = folder.file("request.json");
        writeFileAtomically(request, requestJson().dump() + "\n");
        std::string python, whyNot;
        auto child = startPythonModule(
            {"stepscope.distributed.collective_bench", "--ranks", std::to_string(ranks_), "--nodes",
             std::to_string(spec_.nodes), request},
            spec_.python, python, whyNot);
        if (!child) {
            throw std::runtime_error(whyNot);
        }
        std::optional<std::chrono::steady_clock::time_point> stopAsked;
        while (!child->atEnd()) {
            if (const auto line = child->readLine(kPoll)) {
                handle(*line);
            }
            if (cancel_ && cancel_->load()) {
                if (!stopAsked) {
                    stopAsked = std::chrono::steady_clock::now();
                    child->terminate();
                } else if (std::chrono::steady_clock::now() - *stopAsked > kStopGrace) {
                    child->kill();
                }
            }
        }
        child->wait(std::chrono::seconds(10));
        if (stopAsked || status_ == "cancelled") {
            return;
        }
        if (status_ != "ok") {
            std::string why = message_.empty() ? "the ranks ended (" + child->exitDescription() +
                                                     ") without finishing"
                                               : message_;
            if (const std::string tail = child->stderrTail(8); !tail.empty()) {
                why += "; their last output:\n" + tail;
            }
            throw std::runtime_error("collective benchmark on " + std::to_string(ranks_) +
                                     " ranks: " + why);
        }
    }

private:
    json requestJson() const {
        return {{"ops", spec_.ops},         {"sizes_bytes", spec_.sizesBytes},
                {"backend", spec_.backend}, {"dtype", spec_.dtype},
                {"device", spec_.device},   {"warmup", spec_.warmup},
                {"repeats", spec_.repeats}};
    }

    void handle(const std::string& line) {
        json event;
        try {
            event = json::parse(line);
        } catch (const json::exception&) {
            return;  // not ours: a print that reached stdout
        }
        if (!event.is_object()) {
            return;
        }
        const std::string kind = event.value("event", "");
        try {
            if (kind == "started") {
                file_.torchVersion = event.value("torch", "");
                file_.cores = event.value("usable_cores", event.value("cores", 0));
            } else if (kind == "row") {
                file_.rows.push_back(rowFrom(event));
                if (observer_.onRow) {
                    observer_.onRow(file_.rows.back());
                }
            } else if (kind == "progress" && observer_.onProgress) {
                observer_.onProgress({ranks_, event.value("done", 0), event.value("total", 0)});
            } else if (kind == "finished") {
                status_ = event.value("status", "failed");
                message_ = event.value("message", "");
            }
        } catch (const json::exception& error) {
            status_ = "failed";
            message_ = std::string("the ranks sent a line StepScope cannot read (") + error.what() +
                       "): " + line.substr(0, 200);
        }
    }

    const CollectiveSpec& spec_;
    int ranks_;
    CollectiveFile& file_;
    const std::atomic<bool>* cancel_;
    const CollectiveObserver& observer_;
    std::string status_;
    std::string message_;
};

}  // namespace

std::optional<int64_t> parseByteSize(const std::string& text) {
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
        ++digits;
    }
    if (digits == 0 || digits > 13) {
        return std::nullopt;
    }
    std::string unit = text.substr(digits);
    std::transform(unit.begin(), unit.end(), unit.begin(),
                   [](unsigned char c) { return char(std::toupper(c)); });
    int shift = 0;
    if (!unit.empty() && unit != "B") {
        const std::string prefix = unit.substr(0, 1);
        const std::string rest = unit.substr(1);
        shift = prefix == "K" ? 10 : prefix == "M" ? 20 : prefix == "G" ? 30 : -1;
        if (shift < 0 || !(rest.empty() || rest == "B" || rest == "IB")) {
            return std::nullopt;
        }
    }
    const int64_t number = std::stoll(text.substr(0, digits));
    if (number <= 0 || number > (kMostBytes >> shift)) {
        return std::nullopt;
    }
    return number << shift;
}

std::optional<std::string> collectiveSpecProblem(const CollectiveSpec& spec) {
    if (spec.ops.empty()) {
        return "--op: give one or more of all_reduce, all_gather, reduce_scatter, broadcast";
    }
    for (const auto& op : spec.ops) {
        if (auto problem =
                notOneOf("--op", op, {std::begin(kCollectiveOps), std::end(kCollectiveOps)})) {
            return problem;
        }
    }
    if (spec.sizesBytes.empty()) {
        return "--sizes: give one or more sizes, like 1MB,10MB,100MB";
    }
    if (spec.ranks.empty()) {
        return "--ranks: give one or more rank counts, like 2,4";
    }
    for (const int ranks : spec.ranks) {
        if (ranks < 2 || ranks > 256) {
            return "--ranks: " + std::to_string(ranks) +
                   " is outside 2..256 (a collective needs two ranks)";
        }
    }
    if (spec.nodes < 1 || spec.nodes > 1024) {
        return "--nodes: " + std::to_string(spec.nodes) + " is outside 1..1024";
    }
    for (const int ranks : spec.ranks) {
        if (ranks % spec.nodes != 0) {
            return "--nodes: ranks " + std::to_string(ranks) + " do not divide by nodes " +
                   std::to_string(spec.nodes) + " (each node runs ranks / nodes)";
        }
    }
    if (auto problem = notOneOf("--backend", spec.backend, {"gloo", "nccl"})) {
        return problem;
    }
    if (auto problem = notOneOf("--dtype", spec.dtype, {"fp32", "bf16", "fp16"})) {
        return problem;
    }
    if (auto problem = notOneOf("--device", spec.device, {"cpu", "cuda"})) {
        return problem;
    }
    if (spec.backend == "nccl" && spec.device != "cuda") {
        return "--backend: nccl runs on CUDA tensors only: give --device cuda, or --backend gloo";
    }
    if (spec.warmup < 0 || spec.warmup > 1000) {
        return "--warmup: " + std::to_string(spec.warmup) + " is outside 0..1000";
    }
    if (spec.repeats < 1 || spec.repeats > 10000) {
        return "--repeats: " + std::to_string(spec.repeats) + " is outside 1..10000";
    }
    return std::nullopt;
}

void runCollectiveBenchmark(const CollectiveSpec& spec, CollectiveFile& file,
                            const std::atomic<bool>* cancel, const CollectiveObserver& observer) {
    if (const auto problem = collectiveSpecProblem(spec)) {
        throw std::invalid_argument(*problem);
    }
    for (const int ranks : spec.ranks) {
        if (cancel && cancel->load()) {
            return;
        }
        RankCountRun(spec, ranks, file, cancel, observer).run();
    }
}

}  // namespace stepscope
