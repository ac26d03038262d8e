#pragma once

#include <cstddef>
#include <vector>

namespace stepscope {

// Append-only storage in large blocks: growing it never moves or copies the
// records, and never interleaves small allocations with the tensors'.
template <typename T>
class BlockLog {
public:
    void push(const T& value) {
        if (blocks_.empty() || blocks_.back().size() == kBlock) {
            blocks_.emplace_back();
            blocks_.back().reserve(kBlock);
        }
        blocks_.back().push_back(value);
        ++size_;
    }
    size_t size() const { return size_; }
    template <typename F>
    void forEach(F&& visit) const {
        for (const auto& block : blocks_) {
            for (const T& value : block) {
                visit(value);
            }
        }
    }

private:
    static constexpr size_t kBlock = 16384;
    std::vector<std::vector<T>> blocks_;
    size_t size_ = 0;
};

}  // namespace stepscope
