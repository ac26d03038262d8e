#pragma once

#include <QThreadPool>

#include <memory>

namespace stepscope::ui {

// The thread that lets go of what the UI thread no longer shows.
QThreadPool& releasePool();

// Lets go of `owner` on releasePool()'s thread instead of this one: when it
// is the last reference to a million events' trace or index, freeing them
// takes 5-15 ms the window need not wait for. Only for plain data (no
// QObjects): it is destroyed on another thread.
template <typename T>
void releaseElsewhere(std::shared_ptr<T> owner) {
    if (owner) {
        releasePool().start([owner = std::move(owner)]() mutable { owner.reset(); });
    }
}

}  // namespace stepscope::ui
