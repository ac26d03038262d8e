#include "experiments/accumulation_lab.h"

#include <ATen/ops/scalar_tensor.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <sstream>

namespace stepscope {

namespace {

struct Pairing {
    at::ScalarType accumulator;
    at::ScalarType addend;
};

std::string name(at::ScalarType type) {
    return type == at::kFloat ? "fp32" : type == at::kHalf ? "fp16" : "bf16";
}

// Three significant digits: "4", "9.95", "10".
std::string number(double value) {
    std::ostringstream out;
    out.precision(3);
    out << value;
    return out.str();
}

std::string pairing(const AccumulationRow& row) {
    return row.accumulator == row.addend ? row.accumulator + " sum"
                                         : row.accumulator + " sum of " + row.addend;
}

std::string joined(const std::vector<std::string>& parts) {
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i) {
        text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    }
    return text;
}

constexpr double kWithin = 1e-3;  // of the exact sum: "within 0.1%"

double relativeError(const AccumulationRow& row) {
    return row.exact != 0 ? row.absoluteError / std::abs(row.exact) : row.absoluteError;
}

}  // namespace

std::string accumulationNote(const std::vector<AccumulationRow>& rows) {
    if (rows.empty()) {
        return {};
    }
    std::vector<std::string> stalled, drifted, within;
    bool fp32Within = false, fp32Drifts = false, othersWithin = true;
    for (const AccumulationRow& row : rows) {
        const bool close = relativeError(row) <= kWithin;
        if (row.accumulator == "fp32") {
            (close ? fp32Within : fp32Drifts) = true;
        } else {
            othersWithin &= close;
        }
        if (close) {
            within.push_back(pairing(row));
        } else if (row.stalled) {
            stalled.push_back(pairing(row) + " stopped growing at " + number(row.result));
        } else {
            drifted.push_back(pairing(row) + " reached " + number(row.result) + " (" +
                              number(100 * relativeError(row)) + "% off)");
        }
    }
    std::string note = "Exact: " + number(rows.front().exact) + ".";
    if (!stalled.empty()) {
        note += " The " + joined(stalled) +
                ": once a sum's spacing exceeds twice the addend, each addition rounds away.";
    }
    if (!drifted.empty()) {
        note += " The " + joined(drifted) + ": each addition rounds, and the errors add up.";
    }
    if (!within.empty()) {
        note += " Within 0.1%: " + joined(within) + ".";
    }
    if (fp32Within && !fp32Drifts && !othersWithin) {
        note += " Accumulate in fp32.";
    }
    return note;
}

std::vector<AccumulationRow> runAccumulationLab(double addend, int64_t count) {
    c10::InferenceMode guard;
    const Pairing pairings[] = {{at::kFloat, at::kFloat},
                                {at::kHalf, at::kHalf},
                                {at::kBFloat16, at::kBFloat16},
                                {at::kFloat, at::kHalf},
                                {at::kFloat, at::kBFloat16}};
    std::vector<AccumulationRow> rows;
    for (const Pairing& p : pairings) {
        at::Tensor sum = at::scalar_tensor(0.0, at::TensorOptions().dtype(p.accumulator));
        const at::Tensor term = at::scalar_tensor(addend, at::TensorOptions().dtype(p.addend));
        for (int64_t i = 0; i < count; ++i) {
            sum += term;  // in place: the result is rounded to the accumulator's dtype
        }
        AccumulationRow row;
        row.accumulator = name(p.accumulator);
        row.addend = name(p.addend);
        row.result = sum.item<double>();
        row.exact = addend * double(count);
        row.absoluteError = std::abs(row.result - row.exact);
        row.stalled = (sum + term).item<double>() == row.result;
        rows.push_back(row);
    }
    return rows;
}

}  // namespace stepscope
