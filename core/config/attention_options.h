#pragma once

#include <cstdint>

namespace stepscope {

// Settings some attention backends take; others ignore them. Plain data, so
// the CLI and the app can carry it without LibTorch headers.
struct AttentionOptions {
    int64_t queryTile = 128;  // tiled: query rows per tile (at least 16)
    int64_t keyTile = 128;    // tiled: key rows per tile (at least 16)
};

}  // namespace stepscope
