#include "interop/snapshot_builder.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace stepscope {

SnapshotAction actionOf(std::string_view text) {
    static constexpr SnapshotAction kKnown[] = {
        SnapshotAction::Alloc,      SnapshotAction::FreeRequested, SnapshotAction::FreeCompleted,
        SnapshotAction::Free,       SnapshotAction::SegmentAlloc,  SnapshotAction::SegmentFree,
        SnapshotAction::SegmentMap, SnapshotAction::SegmentUnmap,  SnapshotAction::Oom,
        SnapshotAction::Snapshot};
    // Their names measured once: every event asks.
    static const auto kNames = [] {
        std::array<std::string_view, std::size(kKnown)> names;
        for (size_t i = 0; i < names.size(); ++i) {
            names[i] = toString(kKnown[i]);
        }
        return names;
    }();
    for (size_t i = 0; i < kNames.size(); ++i) {
        if (text == kNames[i]) {
            return kKnown[i];
        }
    }
    return SnapshotAction::Other;
}

SnapshotBlockState blockStateOf(std::string_view text) {
    if (text == "active_allocated") {
        return SnapshotBlockState::ActiveAllocated;
    }
    if (text == "active_pending_free" || text == "active_awaiting_free") {
        return SnapshotBlockState::ActivePendingFree;
    }
    if (text == "inactive") {
        return SnapshotBlockState::Inactive;
    }
    return SnapshotBlockState::Other;
}

bool eventNeedsAddress(SnapshotAction action) {
    return action != SnapshotAction::Oom && action != SnapshotAction::Snapshot &&
           action != SnapshotAction::Other;
}

bool eventNeedsSize(SnapshotAction action) {
    return eventNeedsAddress(action) || action == SnapshotAction::Oom;
}

void appendEvent(SnapshotDeviceTrace& trace, SnapshotAction action, uint64_t address, int64_t bytes,
                 int64_t stream, std::optional<double> timeUs, uint32_t stack, uint16_t category) {
    if (!timeUs) {
        ++trace.missingTimes;
    }
    const double time = timeUs ? *timeUs : trace.timeUs.empty() ? 0.0 : trace.timeUs.back();
    trace.action.push_back(action);
    trace.address.push_back(address);
    trace.bytes.push_back(bytes);
    trace.stream.push_back(stream);
    trace.timeUs.push_back(time);
    trace.stack.push_back(stack);
    if (category != 0 || !trace.category.empty()) {  // a column only once one event has one
        trace.category.resize(trace.action.size(), 0);
        trace.category.back() = category;
    }
}

std::optional<uint16_t> eventCategoryId(std::vector<std::string>& categories,
                                        std::string_view name) {
    const std::string text = utf8(name);
    for (size_t i = 0; i < categories.size(); ++i) {
        if (categories[i] == text) {
            return static_cast<uint16_t>(i + 1);
        }
    }
    if (categories.size() + 1 > kMaxEventCategories) {
        return std::nullopt;
    }
    categories.push_back(text);
    return static_cast<uint16_t>(categories.size());
}

namespace {

bool isValidUtf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t length = 0;
        uint32_t code = 0;
        if ((c & 0xe0) == 0xc0) {
            length = 2;
            code = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            length = 3;
            code = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            length = 4;
            code = c & 0x07;
        } else {
            return false;
        }
        if (i + length > text.size()) {
            return false;
        }
        for (size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xc0) != 0x80) {
                return false;
            }
            code = (code << 6) | (next & 0x3f);
        }
        const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
            return false;
        }
        i += length;
    }
    return true;
}

}  // namespace

std::string utf8(std::string_view text) {
    if (isValidUtf8(text)) {
        return std::string(text);
    }
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        // The longest valid sequence starting here, else one replaced byte.
        size_t length = 0;
        for (size_t n = 1; n <= 4 && i + n <= text.size(); ++n) {
            if (isValidUtf8(text.substr(i, n))) {
                length = n;
                break;
            }
        }
        if (length == 0) {
            out += "\xEF\xBF\xBD";
        } else {
            out += text.substr(i, length);
            i += length - 1;
        }
    }
    return out;
}
Interner::Interner(MemorySnapshot& out) : out_(out), stacks_(64, StackHash{this}, StackEq{this}) {
    out_.stackStart.push_back(0);
}

uint32_t Interner::string(std::string_view text) {
    if (const auto found = strings_.find(text); found != strings_.end()) {
        return found->second;
    }
    storage_.push_back(utf8(text));
    const auto id = static_cast<uint32_t>(storage_.size() - 1);
    // Keyed by the file's bytes (kept alongside), so a repeat is found.
    keys_.emplace_back(text);
    strings_.emplace(keys_.back(), id);
    return id;
}

uint32_t Interner::frame(uint32_t filename, uint32_t name, int64_t line) {
    const FrameKey key{filename, name, line};
    if (const auto found = frames_.find(key); found != frames_.end()) {
        return found->second;
    }
    out_.frames.push_back({filename, name, line});
    const auto id = static_cast<uint32_t>(out_.frames.size() - 1);
    frames_.emplace(key, id);
    return id;
}

uint32_t Interner::stack(const std::vector<uint32_t>& candidate) {
    candidate_ = &candidate;
    if (const auto found = stacks_.find(kCandidate); found != stacks_.end()) {
        return *found;
    }
    if (candidate.size() > UINT32_MAX - 1 - out_.stackFrames.size()) {
        throw SnapshotError(SnapshotError::Kind::TooLarge,
                            out_.source + ": more than 4 Gi frames in distinct stacks");
    }
    out_.stackFrames.insert(out_.stackFrames.end(), candidate.begin(), candidate.end());
    out_.stackStart.push_back(static_cast<uint32_t>(out_.stackFrames.size()));
    const auto id = static_cast<uint32_t>(out_.stackStart.size() - 2);
    stacks_.insert(id);
    return id;
}

void Interner::finish() {
    out_.strings.reserve(storage_.size());
    strings_.clear();
    for (std::string& text : storage_) {
        out_.strings.push_back(std::move(text));
    }
    storage_.clear();
    keys_.clear();
}

std::span<const uint32_t> Interner::frames(uint32_t id) const {
    if (id == kCandidate) {
        return *candidate_;
    }
    return std::span<const uint32_t>(out_.stackFrames)
        .subspan(out_.stackStart[id], out_.stackStart[id + 1] - out_.stackStart[id]);
}

size_t Interner::StackHash::operator()(uint32_t id) const {
    uint64_t hash = 1469598103934665603ull;
    for (const uint32_t frame : self->frames(id)) {
        hash = (hash ^ frame) * 1099511628211ull;
    }
    return static_cast<size_t>(hash);
}

bool Interner::StackEq::operator()(uint32_t a, uint32_t b) const {
    const auto x = self->frames(a);
    const auto y = self->frames(b);
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin());
}

}  // namespace stepscope
