#pragma once

namespace stepscope {

// Marks the current thread as recomputing a forward inside backward
// (activation checkpointing, the chunked loss) while alive, so that the
// memory tracker can show what recomputation allocates as its own category.
// Nests.
class RecomputeScope {
public:
    RecomputeScope();
    ~RecomputeScope();
    RecomputeScope(const RecomputeScope&) = delete;
    RecomputeScope& operator=(const RecomputeScope&) = delete;

    static bool active();  // on this thread
};

}  // namespace stepscope
