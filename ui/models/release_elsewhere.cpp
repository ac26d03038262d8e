#include "models/release_elsewhere.h"

namespace stepscope::ui {

namespace {

struct OneThreadPool : QThreadPool {
    OneThreadPool() { setMaxThreadCount(1); }
};

}  // namespace

QThreadPool& releasePool() {
    // Not Qt's global pool: its raster engine fills in that one and waits,
    // so a free queued there could hold up a draw.
    static OneThreadPool pool;
    return pool;
}

}  // namespace stepscope::ui
