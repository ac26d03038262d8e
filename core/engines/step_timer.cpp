#include "engines/step_timer.h"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace stepscope {

namespace {

class SteadyClockTimer final : public StepTimer {
public:
    void start() override {
        marks_.clear();
        marks_.push_back(Clock::now());
    }
    void mark() override { marks_.push_back(Clock::now()); }
    std::vector<double> finish() override {
        std::vector<double> phases;
        for (size_t i = 1; i < marks_.size(); ++i) {
            phases.push_back(milliseconds(marks_[i - 1], marks_[i]));
        }
        phases.push_back(milliseconds(marks_.front(), marks_.back()));
        return phases;
    }

private:
    using Clock = std::chrono::steady_clock;
    static double milliseconds(Clock::time_point from, Clock::time_point to) {
        return std::chrono::duration<double, std::milli>(to - from).count();
    }
    std::vector<Clock::time_point> marks_;
};

class DeviceEventTimer final : public StepTimer {
public:
    explicit DeviceEventTimer(const at::Device& device) : device_(device), guard_(device.type()) {}
    void start() override {
        events_.clear();
        mark();
    }
    void mark() override {
        events_.emplace_back(device_.type(), c10::EventFlag::BACKEND_DEFAULT);  // timing on
        events_.back().record(guard_.getStream(device_));
    }
    std::vector<double> finish() override {
        events_.back().synchronize();
        std::vector<double> phases;
        for (size_t i = 1; i < events_.size(); ++i) {
            phases.push_back(events_[i - 1].elapsedTime(events_[i]));
        }
        phases.push_back(events_.front().elapsedTime(events_.back()));
        return phases;
    }

private:
    at::Device device_;
    c10::impl::VirtualGuardImpl guard_;
    std::vector<c10::Event> events_;
};

}  // namespace

std::unique_ptr<StepTimer> makeStepTimer(const at::Device& device) {
    if (device.is_cuda()) {
        return std::make_unique<DeviceEventTimer>(device);
    }
    return std::make_unique<SteadyClockTimer>();
}

}  // namespace stepscope
