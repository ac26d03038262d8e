#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

// Names as small integers, so that recorded events stay plain records and a
// name seen again costs a lookup, not an allocation. Not thread-safe: the
// tracers call it under their own lock.
class NameTable {
public:
    int32_t intern(std::string_view name) {
        const auto found = ids_.find(name);
        if (found != ids_.end()) {
            return found->second;
        }
        names_.emplace_back(name);
        return ids_[names_.back()] = int32_t(names_.size() - 1);
    }
    const std::string& operator[](int32_t id) const { return names_[size_t(id)]; }
    const std::vector<std::string>& names() const { return names_; }

private:
    std::vector<std::string> names_;
    std::map<std::string, int32_t, std::less<>> ids_;
};

}  // namespace stepscope
