#include "attention/attention_backend.h"

#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attention/attention_registry.h"
#include "attention/naive_attention.h"

namespace stepscope {

namespace {
using Factory = std::function<std::unique_ptr<AttentionBackend>()>;

// Later backends (tiled, sdpa, cuda-flash) add one line here.
const std::vector<std::pair<std::string, Factory>>& factories() {
    static const std::vector<std::pair<std::string, Factory>> table = {
        {"naive", [] { return std::make_unique<NaiveAttention>(); }},
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

std::unique_ptr<AttentionBackend> makeAttentionBackend(const std::string& name) {
    std::string allowed;
    for (const auto& [candidate, factory] : factories()) {
        if (candidate == name) {
            return factory();
        }
        allowed += (allowed.empty() ? "" : ", ") + candidate;
    }
    throw std::invalid_argument("attention: unknown backend '" + name + "'; allowed: " + allowed);
}

}  // namespace stepscope
