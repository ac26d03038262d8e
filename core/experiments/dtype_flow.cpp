#include "experiments/dtype_flow.h"

#include <ATen/ops/randint.h>

#include <map>

#include "attention/attention_registry.h"
#include "engines/autocast_scope.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "model/transformer.h"

namespace stepscope {

namespace {

// Records each module output's dtype under the module's path.
class DtypeRecorder final : public ForwardTap {
public:
    explicit DtypeRecorder(const TransformerLM& model) {
        for (const auto& item : model->named_modules("model")) {
            paths_[item.value().get()] = item.key();
        }
    }
    void onOutput(const torch::nn::Module& module, const char* role,
                  const at::Tensor& output) override {
        const auto found = paths_.find(&module);
        std::string what = found != paths_.end() ? found->second : "?";
        if (role[0] != '\0') {
            what += std::string(" (") + role + ")";
        }
        rows.push_back({what, kindOf(module), std::string(c10::toString(output.scalar_type()))});
    }
    std::vector<DtypeRow> rows;

private:
    static std::string kindOf(const torch::nn::Module& module) {
        std::string name = module.name();  // "stepscope::LinearImpl"
        const auto colon = name.rfind(':');
        if (colon != std::string::npos) {
            name = name.substr(colon + 1);
        }
        if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0) {
            name.resize(name.size() - 4);
        }
        return name;
    }
    std::map<const torch::nn::Module*, std::string> paths_;
};

std::string dtypesOf(const std::vector<at::Tensor>& tensors) {
    std::map<std::string, int> counts;
    for (const auto& tensor : tensors) {
        ++counts[tensor.defined() ? c10::toString(tensor.scalar_type()) : "none"];
    }
    std::string out;
    for (const auto& [dtype, count] : counts) {
        out += (out.empty() ? "" : ", ") + dtype;
    }
    return out;
}

}  // namespace

std::vector<DtypeRow> inspectDtypeFlow(const RunConfig& config) {
    auto errors = validate(config, validationContext());
    if (config.precision == Precision::Fp32) {
        errors.push_back({"precision", "the dtype inspector shows autocast; allowed: bf16, fp16"});
    }
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
    const at::Device device(config.device == DeviceKind::Cuda ? at::kCUDA : at::kCPU, 0);
    at::manual_seed(config.seed);
    TransformerLM model(config.model, makeAttentionBackend(config.attention),
                        at::TensorOptions().device(device).dtype(at::kFloat));
    const at::Tensor tokens =
        at::randint(config.model.vocabSize, {config.batchSize, config.contextLength + 1},
                    at::TensorOptions().device(device).dtype(at::kLong));
    std::vector<DtypeRow> rows;
    rows.push_back({"parameters", "", dtypesOf(model->parameters())});

    DtypeRecorder recorder(model);
    at::Tensor loss;
    {
        const ForwardTapScope tap(&recorder);
        const AutocastScope autocast(device, config.precision);
        const at::Tensor logits = model->forward(tokens.narrow(1, 0, config.contextLength));
        loss = crossEntropyLoss(logits, tokens.narrow(1, 1, config.contextLength));
    }
    rows.insert(rows.end(), recorder.rows.begin(), recorder.rows.end());
    rows.push_back({"loss", "cross-entropy", std::string(c10::toString(loss.scalar_type()))});
    loss.backward();
    std::vector<at::Tensor> grads;
    for (const auto& parameter : model->parameters()) {
        grads.push_back(parameter.grad());
    }
    rows.push_back({"gradients", "", dtypesOf(grads)});
    return rows;
}

}  // namespace stepscope
