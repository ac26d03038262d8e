#include "profile/memory_watermark.h"

#include <ATen/DeviceAccelerator.h>
#include <c10/core/Allocator.h>

#include <algorithm>
#include <atomic>

namespace stepscope {

struct MemoryWatermark::Listener final : public c10::MemoryReportingInfoBase {
    explicit Listener(c10::DeviceType type) : type(type) {}
    void reportMemoryUsage(void*, int64_t size, size_t, size_t, c10::Device device) override {
        if (device.type() != type) {
            return;
        }
        const int64_t now = current.fetch_add(size) + size;
        int64_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
    }
    bool memoryProfilingEnabled() const override { return true; }

    c10::DeviceType type;
    std::atomic<int64_t> current{0};
    std::atomic<int64_t> peak{0};
};

namespace {
constexpr size_t kAggregate = 0;  // StatType::AGGREGATE
}

MemoryWatermark::MemoryWatermark(const c10::Device& device) : device_(device) {
    if (device.is_cuda()) {
        at::accelerator::synchronizeDevice(device.index());
        at::accelerator::resetPeakStats(device.index());
        baseline_ =
            at::accelerator::getDeviceStats(device.index()).allocated_bytes[kAggregate].current;
    } else {
        listener_ = std::make_shared<Listener>(device.type());
        guard_ =
            std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, listener_);
    }
}

MemoryWatermark::~MemoryWatermark() = default;

int64_t MemoryWatermark::currentBytes() const {
    if (listener_) {
        return listener_->current.load();
    }
    return at::accelerator::getDeviceStats(device_.index()).allocated_bytes[kAggregate].current -
           baseline_;
}

int64_t MemoryWatermark::peakBytes() const {
    if (listener_) {
        return listener_->peak.load();
    }
    return at::accelerator::getDeviceStats(device_.index()).allocated_bytes[kAggregate].peak -
           baseline_;
}

}  // namespace stepscope
