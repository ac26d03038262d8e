#include "experiments/attention_benchmark.h"

#include <ATen/DeviceAccelerator.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randn_like.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <regex>

#include "attention/attention_backend.h"
#include "attention/attention_registry.h"
#include "attention/sdpa_attention.h"
#include "attention/tiled_attention.h"
#include "config/limits.h"
#include "engines/cpu_threads.h"
#include "engines/environment.h"
#include "engines/python_worker.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "profile/memory_watermark.h"
#include "util/checked_math.h"
#include "util/strings.h"

namespace stepscope {

namespace {

at::ScalarType dtypeOf(Precision precision) {
    return precision == Precision::Bf16   ? at::kBFloat16
           : precision == Precision::Fp16 ? at::kHalf
                                          : at::kFloat;
}

void synchronize(const at::Device& device) {
    if (device.is_cuda()) {
        torch::cuda::synchronize(device.index());
    }
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// What a point needs at most, for the CPU pre-flight: inputs, output and
// their gradients in fp32, plus three score matrices for naive-like backends.
int64_t estimatePointBytes(const AttentionPoint& p) {
    const int64_t element = 4;
    const int64_t tensors = 8 * p.batch * p.heads * p.seq * p.d * element;
    const bool quadratic = p.backend == "naive" || p.backend == "sdpa-math";
    return tensors + (quadratic ? 3 * p.scoreMatrixBytes : 0);
}

}  // namespace

std::vector<Precision> parsePrecisionNames(const std::vector<std::string>& names) {
    std::vector<Precision> precisions;
    std::vector<ConfigError> errors;
    for (const auto& name : names) {
        if (const auto precision = parsePrecision(name)) {
            precisions.push_back(*precision);
        } else {
            errors.push_back({"precision", "'" + name + "' is not allowed; allowed: " +
                                               joinNames(precisionNames())});
        }
    }
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
    return precisions;
}

namespace {

bool containsName(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The grid's engine and the backends it has.
void validateBackends(const AttentionBenchSpec& spec, std::vector<ConfigError>& errors) {
    if (spec.engine == Engine::PyTorchCompile) {
        errors.push_back({"engine",
                          "the grid runs with libtorch or pytorch; allowed: libtorch, "
                          "pytorch (the backend compiled is torch.compile's, in either)"});
        return;
    }
    const auto known = attentionGridBackendNames(spec.engine);
    const std::string user = userAttentionName(spec);
    for (const auto& backend : spec.backends) {
        if (containsName(known, backend) || (!user.empty() && backend == user)) {
            continue;
        }
        const bool libtorchOnly =
            containsName(attentionGridBackendNames(Engine::LibTorch), backend);
        errors.push_back(
            {"backends", "unknown backend '" + backend + "'" +
                             (libtorchOnly ? " with --engine " + toString(spec.engine) +
                                                 " (it is LibTorch's: --engine libtorch)"
                                           : std::string()) +
                             "; allowed: " + joinNames(known) +
                             (spec.engine == Engine::PyTorch ? ", and yours with --py-attention"
                                                             : std::string())});
    }
}

// The user's attention: a target the worker can import, in the worker, under
// a name of its own.
void validateUserAttention(const AttentionBenchSpec& spec, std::vector<ConfigError>& errors) {
    if (spec.pyAttention.empty()) {
        if (!spec.pyPath.empty() || !spec.pyAttentionName.empty()) {
            errors.push_back({spec.pyPath.empty() ? "py-attention-name" : "py-path",
                              "applies to your attention; give it with --py-attention"});
        }
        return;
    }
    // Any engine: the user's points run in the worker, as compiled's do.
    if (!isPythonTarget(spec.pyAttention)) {
        errors.push_back({"py-attention", "'" + spec.pyAttention +
                                              "' is not MODULE:NAME with Python names (for "
                                              "example my_flash:FlashAttention)"});
        return;
    }
    const std::string name = userAttentionName(spec);
    static const std::regex backendName("[A-Za-z_][A-Za-z0-9_.-]{0,63}");
    auto ours = attentionGridBackendNames(Engine::LibTorch);
    const auto worker = attentionGridBackendNames(Engine::PyTorch);
    ours.insert(ours.end(), worker.begin(), worker.end());
    if (containsName(ours, name)) {
        errors.push_back({spec.pyAttentionName.empty() ? "py-attention" : "py-attention-name",
                          "the backend name '" + name +
                              "' is StepScope's own; give yours another with "
                              "--py-attention-name"});
    } else if (!std::regex_match(name, backendName)) {
        errors.push_back({"py-attention-name",
                          "'" + name +
                              "' is not a backend name; allowed: letters, digits, _ . -, at most "
                              "64, starting with a letter or _"});
    }
}

}  // namespace

namespace {

// Upper bounds from the world (config/limits.h), and one score matrix's
// elements multiplied without overflow: a batch of 2^62 otherwise wraps the
// memory pre-flight into "fits".
void validateGridSize(const AttentionBenchSpec& spec, std::vector<ConfigError>& errors) {
    auto atMost = [&](const char* field, int64_t value, int64_t max) {
        if (value > max) {
            errors.push_back({field, "must be ≤ " + std::to_string(max) + ", got " +
                                         std::to_string(value) + "; " + allowedRange(1, max)});
        }
        return value <= max;
    };
    bool inRange = atMost("batch", spec.batch, kBatchLimit.max);
    inRange = atMost("heads", spec.heads, kHeadsLimit.max) && inRange;
    for (int64_t d : spec.headDims) {
        inRange = atMost("d", d, kDModelLimit.max) && inRange;
    }
    for (int64_t s : spec.seqLens) {
        inRange = atMost("seq", s, kContextLimit.max) && inRange;
    }
    if (!inRange || spec.seqLens.empty()) {
        return;
    }
    const int64_t longest = *std::max_element(spec.seqLens.begin(), spec.seqLens.end());
    const auto scores = checkedProduct(
        {std::max<int64_t>(spec.batch, 1), std::max<int64_t>(spec.heads, 1), longest, longest});
    if (!scores || *scores > kMaxTensorElements) {
        errors.push_back({"seq", "batch × heads × seq² is over 2^50 elements at seq " +
                                     std::to_string(longest) +
                                     ": no machine holds one score matrix that large"});
    }
}

}  // namespace

void validateAttentionSpec(const AttentionBenchSpec& spec) {
    std::vector<ConfigError> errors;
    validateBackends(spec, errors);
    validateUserAttention(spec, errors);
    for (int64_t d : spec.headDims) {
        if (d <= 0) {
            errors.push_back({"d", "head dims must be positive, got " + std::to_string(d)});
        }
    }
    for (int64_t s : spec.seqLens) {
        if (s <= 0) {
            errors.push_back(
                {"seq", "sequence lengths must be positive, got " + std::to_string(s)});
        }
    }
    if (spec.batch <= 0) {
        errors.push_back({"batch", "must be positive, got " + std::to_string(spec.batch)});
    }
    if (spec.heads <= 0) {
        errors.push_back({"heads", "must be positive, got " + std::to_string(spec.heads)});
    }
    validateGridSize(spec, errors);
    if (spec.repeats < 1) {
        errors.push_back({"repeats", "must be at least 1, got " + std::to_string(spec.repeats)});
    }
    if (spec.warmup < 0) {
        errors.push_back({"warmup", "must be 0 or more, got " + std::to_string(spec.warmup)});
    }
    if (spec.options.queryTile < TiledAttention::kMinTile ||
        spec.options.keyTile < TiledAttention::kMinTile) {
        errors.push_back({"tile", "tiled's tiles must be at least " +
                                      std::to_string(TiledAttention::kMinTile) + " rows"});
    }
    if (attentionGridBackends(spec).empty() || spec.headDims.empty() || spec.precisions.empty()) {
        errors.push_back({"attention", "backends, head dims and precisions need a value each"});
    }
    if (spec.device == DeviceKind::Cuda && !validationContext().cudaAvailable) {
        errors.push_back(
            {"device", "'cuda' was asked for, but no CUDA device is available here; allowed: cpu"});
    }
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
}

namespace {

void measure(AttentionPoint& point, AttentionBackend& backend, const at::Device& device,
             const AttentionBenchSpec& spec) {
    const auto options = at::TensorOptions().device(device).dtype(dtypeOf(point.precision));
    MemoryWatermark watermark(device);
    auto input = [&] {
        return at::randn({point.batch, point.heads, point.seq, point.d}, options)
            .requires_grad_(true);
    };
    const at::Tensor q = input(), k = input(), v = input();
    if (const auto reason = backend.unavailableReason(q)) {
        point.status = "unavailable";
        point.message = *reason;
        return;
    }
    const at::Tensor gradOut = at::randn({point.batch, point.heads, point.seq, point.d}, options);
    std::vector<double> forwardTimes, backwardTimes;
    for (int i = 0; i < spec.warmup + spec.repeats; ++i) {
        for (at::Tensor t : {q, k, v}) {
            t.mutable_grad().reset();  // each repeat starts with no gradient
        }
        synchronize(device);
        auto start = std::chrono::steady_clock::now();
        const at::Tensor out = backend.forward(q, k, v, point.causal);
        synchronize(device);
        const double forwardMs = millisecondsSince(start);
        if (i == 0) {
            point.memBeforeBackwardBytes = watermark.currentBytes();
        }
        start = std::chrono::steady_clock::now();
        out.backward(gradOut);
        synchronize(device);
        const double backwardMs = millisecondsSince(start);
        if (i >= spec.warmup) {
            forwardTimes.push_back(forwardMs);
            backwardTimes.push_back(backwardMs);
        }
    }
    point.peakBytes = watermark.peakBytes();
    point.forwardMs = median(forwardTimes);
    point.backwardMs = median(backwardTimes);
    const double flops =
        attentionForwardFlops(point.batch, point.heads, point.seq, point.d, point.causal);
    point.forwardTflops = flops / (*point.forwardMs / 1000) / 1e12;
    point.backwardTflops = 2.5 * flops / (*point.backwardMs / 1000) / 1e12;
    if (auto* sdpa = dynamic_cast<SdpaAttention*>(&backend)) {
        point.kernel = sdpa->lastChoice();
    }
    point.status = "ok";
}

}  // namespace

std::vector<std::string> attentionGridBackendNames(Engine engine) {
    if (engine == Engine::PyTorch) {
        return defaultAttentionBackends(engine);
    }
    auto names = attentionBackendNames();
    names.push_back(kCompiledAttention);
    names.insert(names.end(), pythonAttentionBackends().begin(), pythonAttentionBackends().end());
    return names;
}

std::vector<std::string> defaultAttentionBackends(Engine engine) {
    if (engine == Engine::PyTorch) {
        std::vector<std::string> names{"naive", "sdpa"};
        names.insert(names.end(), pythonAttentionBackends().begin(),
                     pythonAttentionBackends().end());
        names.push_back(kCompiledAttention);
        return names;
    }
    return {"naive", "tiled", "sdpa"};
}

std::vector<std::string> attentionGridBackends(const AttentionBenchSpec& spec) {
    std::vector<std::string> names = spec.backends;
    const std::string user = userAttentionName(spec);
    if (!user.empty() && !containsName(names, user)) {
        names.push_back(user);
    }
    return names;
}

bool runsInPythonWorker(const AttentionBenchSpec& spec, const std::string& backend) {
    return spec.engine != Engine::LibTorch || backend == kCompiledAttention ||
           containsName(pythonAttentionBackends(), backend) ||
           (!spec.pyAttention.empty() && backend == userAttentionName(spec));
}

std::vector<int64_t> defaultSeqLens(DeviceKind device) {
    if (device == DeviceKind::Cuda) {
        return {256, 1024, 4096, 8192, 16384};
    }
    return {256, 512, 1024, 2048};
}

std::vector<AttentionPoint> attentionGridPoints(const AttentionBenchSpec& spec) {
    const std::vector<int64_t> seqLens =
        spec.seqLens.empty() ? defaultSeqLens(spec.device) : spec.seqLens;
    std::vector<AttentionPoint> grid;
    for (Precision precision : spec.precisions) {
        for (int64_t d : spec.headDims) {
            for (int64_t seq : seqLens) {
                for (const auto& name : attentionGridBackends(spec)) {
                    AttentionPoint point;
                    point.backend = name;
                    point.kernel = name;
                    point.d = d;
                    point.seq = seq;
                    point.batch = spec.batch;
                    point.heads = spec.heads;
                    point.precision = precision;
                    point.causal = spec.causal;
                    point.scoreMatrixBytes = spec.batch * spec.heads * seq * seq *
                                             int64_t(c10::elementSize(dtypeOf(precision)));
                    grid.push_back(std::move(point));
                }
            }
        }
    }
    return grid;
}

namespace {

// One in-process point, measured on LibTorch; what it throws is its result.
void measureInProcess(AttentionPoint& point, const at::Device& device,
                      const AttentionBenchSpec& spec) {
    at::manual_seed(spec.seed);
    try {
        auto backend = makeAttentionBackend(point.backend, spec.options);
        measure(point, *backend, device, spec);
    } catch (const c10::OutOfMemoryError& error) {
        point.status = "oom";
        point.message = error.what_without_backtrace();
    } catch (const c10::Error& error) {
        point.status = "failed";
        point.message = error.what_without_backtrace();
    } catch (const std::exception& error) {
        point.status = "failed";
        point.message = error.what();
    }
    if (device.is_cuda()) {
        at::accelerator::emptyCache();
    }
}

// On CPU, where running out of memory ends the process, a point that will
// not fit is not run: it is recorded as oom. Returns whether it was refused.
bool refuseIfTooLarge(AttentionPoint& point, const at::Device& device, int64_t available) {
    const int64_t needed = estimatePointBytes(point);
    if (device.is_cuda() || available <= 0 || needed <= available) {
        return false;
    }
    point.status = "oom";
    point.message = "not run: needs about " + formatBytes(double(needed)) + ", only " +
                    formatBytes(double(available)) +
                    " is available (running out of memory on CPU ends the process)";
    return true;
}

}  // namespace

std::vector<AttentionPoint> runAttentionBenchmark(const AttentionBenchSpec& spec,
                                                  const AttentionBenchControl& control) {
    validateAttentionSpec(spec);
    std::vector<AttentionPoint> points = attentionGridPoints(spec);
    applyThreadCount(0);  // the grid asks for no count: LibTorch's default, not the last run's
    const at::Device device(spec.device == DeviceKind::Cuda ? at::kCUDA : at::kCPU, 0);
    const int64_t available = control.availableMemoryBytes.value_or(availableSystemMemory());
    const int total = int(points.size());
    std::vector<bool> refused(points.size());
    for (size_t i = 0; i < points.size(); ++i) {
        refused[i] = refuseIfTooLarge(points[i], device, available);
    }
    size_t reported = 0;  // points before this one are reported, in grid order
    auto reportUpTo = [&](size_t end) {
        for (; reported < end; ++reported) {
            if (control.onPoint) {
                control.onPoint(points[reported], int(reported), total);
            }
        }
    };

    // The worker's points run first, all in one worker (one Python start-up),
    // while nothing else runs; where every point is the worker's they are
    // reported as they arrive, else in grid order below.
    std::vector<size_t> inWorker;
    std::vector<AttentionPoint> toWorker;
    for (size_t i = 0; i < points.size(); ++i) {
        if (runsInPythonWorker(spec, points[i].backend) && !refused[i]) {
            inWorker.push_back(i);
            toWorker.push_back(points[i]);
        }
    }
    const bool allInWorker = std::all_of(points.begin(), points.end(), [&](const auto& p) {
        return runsInPythonWorker(spec, p.backend);
    });
    size_t arrived = 0;
    std::function<void(const AttentionPoint&)> onArrival;
    if (allInWorker) {
        onArrival = [&](const AttentionPoint& point) {
            const size_t index = inWorker[arrived++];
            points[index] = point;
            reportUpTo(index + 1);
        };
    }
    toWorker = measureAttentionInPythonWorker(std::move(toWorker), spec, control.cancel, onArrival);
    for (size_t k = 0; k < inWorker.size(); ++k) {
        points[inWorker[k]] = toWorker[k];
    }

    for (size_t i = reported; i < points.size(); ++i) {
        if (control.cancel && control.cancel->load()) {
            break;
        }
        if (!refused[i] && !runsInPythonWorker(spec, points[i].backend)) {
            measureInProcess(points[i], device, spec);
        }
        reportUpTo(i + 1);
    }
    points.resize(reported);  // a cancelled grid keeps what it measured
    return points;
}

}  // namespace stepscope
