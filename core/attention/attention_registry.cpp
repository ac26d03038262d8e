#include "attention/attention_registry.h"

#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attention/cuda_flash_attention.h"
#include "attention/naive_attention.h"
#include "attention/sdpa_attention.h"
#include "attention/tiled_attention.h"

namespace stepscope {

namespace {
using Factory = std::function<std::unique_ptr<AttentionBackend>(const AttentionOptions&)>;

// A new backend is one line here.
const std::vector<std::pair<std::string, Factory>>& factories() {
    using Choice = SdpaAttention::Choice;
    static const std::vector<std::pair<std::string, Factory>> table = {
        {"naive", [](const auto&) { return std::make_unique<NaiveAttention>(); }},
        {"tiled",
         [](const AttentionOptions& o) {
             return std::make_unique<TiledAttention>(o.queryTile, o.keyTile);
         }},
        {"sdpa", [](const auto&) { return std::make_unique<SdpaAttention>(Choice::Auto); }},
        {"sdpa-flash", [](const auto&) { return std::make_unique<SdpaAttention>(Choice::Flash); }},
        {"sdpa-efficient",
         [](const auto&) { return std::make_unique<SdpaAttention>(Choice::Efficient); }},
        {"sdpa-math", [](const auto&) { return std::make_unique<SdpaAttention>(Choice::Math); }},
        {"sdpa-cudnn", [](const auto&) { return std::make_unique<SdpaAttention>(Choice::CuDnn); }},
        {"cuda-flash", [](const auto&) { return std::make_unique<CudaFlashAttention>(); }},
    };
    return table;
}
}  // namespace

std::vector<std::string> attentionBackendNames() {
    std::vector<std::string> names;
    for (const auto& [name, factory] : factories()) {
        names.push_back(name);
    }
    return names;
}

std::unique_ptr<AttentionBackend> makeAttentionBackend(const std::string& name,
                                                       const AttentionOptions& options) {
    std::string allowed;
    for (const auto& [candidate, factory] : factories()) {
        if (candidate == name) {
            return factory(options);
        }
        allowed += (allowed.empty() ? "" : ", ") + candidate;
    }
    throw std::invalid_argument("attention: unknown backend '" + name + "'; allowed: " + allowed);
}

}  // namespace stepscope
