#include "profile/recompute_scope.h"

namespace stepscope {

namespace {
thread_local int recomputeDepth = 0;
}

RecomputeScope::RecomputeScope() {
    ++recomputeDepth;
}

RecomputeScope::~RecomputeScope() {
    --recomputeDepth;
}

bool RecomputeScope::active() {
    return recomputeDepth > 0;
}

}  // namespace stepscope
