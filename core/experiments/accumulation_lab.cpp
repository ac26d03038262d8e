#include "experiments/accumulation_lab.h"

#include <ATen/ops/scalar_tensor.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

namespace stepscope {

namespace {

struct Pairing {
    at::ScalarType accumulator;
    at::ScalarType addend;
};

std::string name(at::ScalarType type) {
    return type == at::kFloat ? "fp32" : type == at::kHalf ? "fp16" : "bf16";
}

}  // namespace

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
        rows.push_back(row);
    }
    return rows;
}

}  // namespace stepscope
