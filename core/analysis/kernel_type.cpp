#include "analysis/kernel_type.h"
#include "util/strings.h"

namespace stepscope {

std::string_view toString(KernelType type) {
    switch (type) {
        case KernelType::Computation:
            return "COMPUTATION";
        case KernelType::Communication:
            return "COMMUNICATION";
        case KernelType::Memory:
            return "MEMORY";
        case KernelType::Other:
            return "OTHER";
    }
    return "OTHER";
}

namespace {

// Python's re.match with ".*": the match stays on the first line.
std::string_view firstLine(std::string_view name) {
    return name.substr(0, name.find('\n'));
}

}  // namespace

// HTA: COMMUNICATION ^nccl.*Kernel, MEMORY ^Memcpy|^Memset|^dma, and
// COMPUTATION for what does not match (^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync).
KernelType kernelTypeOf(std::string_view name) {
    const std::string_view line = firstLine(name);
    const bool communication = line.starts_with("nccl") && line.find("Kernel", 4) != line.npos;
    if (communication) {
        return KernelType::Communication;
    }
    if (name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma")) {
        return KernelType::Memory;
    }
    // HTA's (Memset) alternative here is met above: a name starting with it is Memory.
    if (contains(line, "Memcpy") || contains(line, "Sync")) {
        return KernelType::Other;
    }
    return KernelType::Computation;
}

}  // namespace stepscope
