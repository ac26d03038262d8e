#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

namespace stepscope::ui {

// Work off the UI thread whose result only the latest request wants, as
// hotspot's JobTracker does it: each start is a new job id; a result comes
// back through a queued call on `context`'s thread, and is dropped there when
// a newer job has started since (or `reset()` was called), or when `context`
// is gone. The work may ask `superseded()` to stop early. The tracker is a
// member of `context`; destroying it waits for work under way, so nothing
// outlives its owner.
class JobTracker final {
public:
    explicit JobTracker(QObject* context, int threads = 2) : context_(context) {
        pool_.setMaxThreadCount(threads);
    }
    ~JobTracker() {
        reset();
        pool_.waitForDone();
    }
    JobTracker(const JobTracker&) = delete;
    JobTracker& operator=(const JobTracker&) = delete;

    // `work(superseded)` runs on a pool thread and returns the result by
    // value; on `context`'s thread, `deliver(job, result)` receives it while
    // the job is the latest, and `dropped(job)` is called when it is not.
    // Returns the job's id.
    template <typename Work, typename Deliver, typename Dropped>
    int start(Work work, Deliver deliver, Dropped dropped) {
        const int job = ++latest_;
        const QPointer<QObject> guard(context_);
        std::atomic<int>* latest = &latest_;
        auto superseded = [latest, job] { return latest->load() != job; };
        pool_.start([guard, job, latest, superseded, work = std::move(work),
                     deliver = std::move(deliver), dropped = std::move(dropped)]() mutable {
            using Result = decltype(work(std::function<bool()>(superseded)));
            // Shared, so that the queued call copies a pointer, never the result.
            auto result = std::make_shared<Result>(work(std::function<bool()>(superseded)));
            QMetaObject::invokeMethod(
                guard.data(),
                [guard, job, latest, result, deliver = std::move(deliver),
                 dropped = std::move(dropped)]() mutable {
                    if (!guard) {
                        return;  // the window closed meanwhile: touch nothing
                    }
                    if (latest->load() != job) {
                        dropped(job);
                        return;
                    }
                    deliver(job, std::move(*result));
                },
                Qt::QueuedConnection);
        });
        return job;
    }

    // Results of every job started so far are dropped from now on.
    void reset() { ++latest_; }
    int latestJob() const { return latest_.load(); }

private:
    QPointer<QObject> context_;
    std::atomic<int> latest_{0};
    QThreadPool pool_;
};

}  // namespace stepscope::ui
