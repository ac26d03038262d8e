#pragma once

// A rank trace's communication: its collectives, and the compute that can
// run under them. On a device trace those are the communication kernels
// and the computation kernels (HTA's get_comm_comp_overlap). On a gloo trace,
// where HTA gives NaN, they are the gloo:* spans gloo records on its worker
// threads and the operators on the rank's other threads. The collectives
// are numbered in start order: the traces carry no sequence number we read,
// so ranks are matched by order (analyzeCommunication).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "interop/kineto_trace.h"
#include "results/rank_communication.h"

namespace stepscope {

enum class CommunicationSource : uint8_t { None, DeviceKernels, GlooThreads };
std::string_view toString(CommunicationSource source);  // "none", "device kernels", "gloo threads"

struct TraceCommunication {
    CommunicationSource source = CommunicationSource::None;
    RankSpans spans;
};

// The collective an NCCL kernel runs, from its name:
// ncclDevKernel_AllReduce_Sum_f32_RING_LL(...) -> "AllReduce".
std::string ncclOperation(std::string_view kernelName);

// keep: the events analysed, by index (HTA's set, trace_analysis);
// onDevice: the communication kernels' collectives and the computation
// kernels' intervals, as trace_analysis's one walk over the kernels found
// them. Where there are no collectives on the device, the gloo threads'.
TraceCommunication traceCommunication(const KinetoTrace& trace, const std::vector<char>& keep,
                                      RankSpans onDevice);

}  // namespace stepscope
