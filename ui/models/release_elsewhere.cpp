#include "models/release_elsewhere.h"

namespace stepscope::ui {

QThreadPool& releasePool() {
    // Not Qt's global pool: its raster engine fills in that one and waits,
    // so a free queued there could hold up a draw.
    static QThreadPool pool;
    static const bool once = [] {
        pool.setMaxThreadCount(1);
        return true;
    }();
    (void)once;
    return pool;
}

}  // namespace stepscope::ui
