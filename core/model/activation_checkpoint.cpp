#include "model/activation_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "profile/recompute_scope.h"

namespace stepscope {

namespace {

// What backward needs to run a segment again: its forward and the autocast
// state it ran under (backward runs outside the forward's autocast scope).
struct Segment : torch::CustomClassHolder {
    SegmentForward forward;
    at::DeviceType deviceType = at::kCPU;
    bool autocast = false;
    at::ScalarType autocastDtype = at::kFloat;
};

// The forward's autocast state while alive. Like leaving torch.autocast, it
// drops the low-precision weight copies it cached when it switched autocast on.
class AutocastRestore {
public:
    explicit AutocastRestore(const Segment& segment)
        : deviceType_(segment.deviceType),
          previousEnabled_(at::autocast::is_autocast_enabled(deviceType_)),
          previousDtype_(at::autocast::get_autocast_dtype(deviceType_)) {
        at::autocast::set_autocast_dtype(deviceType_, segment.autocastDtype);
        at::autocast::set_autocast_enabled(deviceType_, segment.autocast);
    }
    ~AutocastRestore() {
        const bool switchedOn = !previousEnabled_ && at::autocast::is_autocast_enabled(deviceType_);
        at::autocast::set_autocast_enabled(deviceType_, previousEnabled_);
        at::autocast::set_autocast_dtype(deviceType_, previousDtype_);
        if (switchedOn) {
            at::autocast::clear_cache();
        }
    }
    AutocastRestore(const AutocastRestore&) = delete;
    AutocastRestore& operator=(const AutocastRestore&) = delete;

private:
    at::DeviceType deviceType_;
    bool previousEnabled_;
    at::ScalarType previousDtype_;
};

class RecomputedSegment : public torch::autograd::Function<RecomputedSegment> {
public:
    // Function::apply runs this without grad: the segment's operations save nothing.
    static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& input,
                              const c10::intrusive_ptr<Segment>& segment) {
        context->save_for_backward({input});
        context->saved_data["segment"] = c10::IValue::make_capsule(segment);
        return segment->forward(input);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                   torch::autograd::variable_list gradOutputs) {
        const auto segment = c10::static_intrusive_pointer_cast<Segment>(
            context->saved_data.at("segment").toCapsule());
        const at::Tensor saved = context->get_saved_variables().front();
        const at::Tensor input = saved.detach().requires_grad_(saved.requires_grad());
        at::Tensor output;
        {
            const RecomputeScope recomputing;
            const AutocastRestore autocast(*segment);
            const c10::AutoGradMode grad(true);
            output = segment->forward(input);
        }
        if (gradOutputs.front().defined() && output.requires_grad()) {
            torch::autograd::backward({output}, {gradOutputs.front()});
        }
        return {input.requires_grad() ? input.grad() : at::Tensor(), at::Tensor()};
    }
};

}  // namespace

at::Tensor recomputedInBackward(const at::Tensor& input, SegmentForward forward) {
    if (!c10::GradMode::is_enabled()) {
        return forward(input);
    }
    auto segment = c10::make_intrusive<Segment>();
    segment->forward = std::move(forward);
    segment->deviceType = input.device().type();
    segment->autocast = at::autocast::is_autocast_enabled(segment->deviceType);
    segment->autocastDtype = at::autocast::get_autocast_dtype(segment->deviceType);
    return RecomputedSegment::apply(input, segment);
}

}  // namespace stepscope
