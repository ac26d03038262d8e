// A tiny driver of the FlashAttention-2 kernels, without LibTorch, for
// compute-sanitizer (memcheck, racecheck) in scripts/gpu-check.sh: forward
// and backward on small ragged cases for every dtype and head dim, outputs
// poisoned with NaN first; every launch must succeed and every output element
// must be overwritten with a finite value. The numbers themselves are checked
// against a float64 reference in tests/tst_flash_attention.cpp.
//
//   flash_attention_smoke [head_dim]   (all four when none is named)
//
// Exits 0 when all pass, 1 on a failure, 77 when there is no CUDA device.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "stepscope/kernels/fill.h"
#include "stepscope/kernels/flash_attention.h"

namespace {

using stepscope::kernels::AttentionDtype;
namespace kn = stepscope::kernels;

struct Case {
    bool causal;
    int64_t sq, sk;
};

const char* dtypeName(AttentionDtype t) {
    return t == AttentionDtype::BFloat16 ? "bf16" : t == AttentionDtype::Float16 ? "fp16" : "fp32";
}

std::size_t elementBytes(AttentionDtype t) {
    return t == AttentionDtype::Float32 ? 4 : 2;
}

uint32_t nanPattern(AttentionDtype t) {
    return t == AttentionDtype::Float32    ? 0x7FC00000u
           : t == AttentionDtype::BFloat16 ? 0x7FC07FC0u
                                           : 0x7E007E00u;
}

std::vector<unsigned char> randomValues(std::size_t count, AttentionDtype t, std::mt19937& rng) {
    std::normal_distribution<float> normal;
    std::vector<unsigned char> bytes(count * elementBytes(t));
    for (std::size_t i = 0; i < count; ++i) {
        const float x = normal(rng);
        if (t == AttentionDtype::Float32) {
            std::memcpy(&bytes[i * 4], &x, 4);
        } else if (t == AttentionDtype::BFloat16) {
            uint32_t bits;
            std::memcpy(&bits, &x, 4);
            const uint16_t top = static_cast<uint16_t>(bits >> 16);
            std::memcpy(&bytes[i * 2], &top, 2);
        } else {
            const __half h = __float2half(x);
            std::memcpy(&bytes[i * 2], &h, 2);
        }
    }
    return bytes;
}

bool allFinite(const void* device, std::size_t count, AttentionDtype t) {
    std::vector<unsigned char> bytes(count * elementBytes(t));
    if (cudaMemcpy(bytes.data(), device, bytes.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
        return false;
    }
    for (std::size_t i = 0; i < count; ++i) {
        float x;
        if (t == AttentionDtype::Float32) {
            std::memcpy(&x, &bytes[i * 4], 4);
        } else if (t == AttentionDtype::BFloat16) {
            uint16_t top;
            std::memcpy(&top, &bytes[i * 2], 2);
            const uint32_t bits = static_cast<uint32_t>(top) << 16;
            std::memcpy(&x, &bits, 4);
        } else {
            __half h;
            std::memcpy(&h, &bytes[i * 2], 2);
            x = __half2float(h);
        }
        if (!std::isfinite(x)) {
            return false;
        }
    }
    return true;
}

bool runCase(AttentionDtype dtype, int64_t d, const Case& c, kn::DqStrategy dq, std::mt19937& rng) {
    const int64_t batch = 1, heads = 2;
    const std::size_t qCount = batch * heads * c.sq * d, kCount = batch * heads * c.sk * d;
    const std::size_t bytes = elementBytes(dtype);
    kn::FlashShape shape;
    shape.batch = batch;
    shape.heads = heads;
    shape.queryLength = c.sq;
    shape.keyLength = c.sk;
    shape.headDim = d;
    shape.softmaxScale = 1.f / std::sqrt(static_cast<float>(d));
    shape.causal = c.causal;
    shape.dtype = dtype;

    std::vector<void*> buffers;
    auto allocate = [&](std::size_t size) {
        void* p = nullptr;
        if (cudaMalloc(&p, size) != cudaSuccess) {
            return static_cast<void*>(nullptr);
        }
        buffers.push_back(p);
        return p;
    };
    void* q = allocate(qCount * bytes);
    void* k = allocate(kCount * bytes);
    void* v = allocate(kCount * bytes);
    void* o = allocate(qCount * bytes);
    void* dO = allocate(qCount * bytes);
    void* dQ = allocate(qCount * bytes);
    void* dK = allocate(kCount * bytes);
    void* dV = allocate(kCount * bytes);
    auto* lse = static_cast<float*>(allocate(batch * heads * c.sq * sizeof(float)));
    void* workspace = allocate(kn::flashAttentionBackwardWorkspaceBytes(shape));
    bool ok = workspace != nullptr && lse != nullptr;
    for (auto [pointer, count] : {std::pair{q, qCount}, std::pair{k, kCount}, std::pair{v, kCount},
                                  std::pair{dO, qCount}}) {
        const auto values = randomValues(count, dtype, rng);
        ok = ok && cudaMemcpy(pointer, values.data(), values.size(), cudaMemcpyHostToDevice) ==
                       cudaSuccess;
    }
    for (auto [pointer, size] : {std::pair{o, qCount * bytes}, std::pair{dQ, qCount * bytes},
                                 std::pair{dK, kCount * bytes}, std::pair{dV, kCount * bytes}}) {
        ok = ok && kn::fillWords(pointer, size / 4, nanPattern(dtype), nullptr).empty();
    }
    ok = ok && kn::fillWords(lse, batch * heads * c.sq, 0x7FC00000u, nullptr).empty();

    const kn::Strides qs{heads * c.sq * d, c.sq * d, d}, ks{heads * c.sk * d, c.sk * d, d};
    const kn::Strides ls{heads * c.sq, c.sq, 1};
    std::string failure;
    if (ok) {
        kn::FlashForwardParams f;
        f.shape = shape;
        f.q = q, f.qStrides = qs, f.k = k, f.kStrides = ks, f.v = v, f.vStrides = ks;
        f.o = o, f.oStrides = qs, f.logsumexp = lse, f.lseStrides = ls;
        if (const kn::FlashResult r = kn::flashAttentionForward(f); !r.ok()) {
            failure = r.message;
        }
    }
    if (ok && failure.empty()) {
        kn::FlashBackwardParams b;
        b.shape = shape;
        b.q = q, b.qStrides = qs, b.k = k, b.kStrides = ks, b.v = v, b.vStrides = ks;
        b.o = o, b.oStrides = qs, b.logsumexp = lse, b.lseStrides = ls;
        b.dO = dO, b.dOStrides = qs, b.dQ = dQ, b.dQStrides = qs;
        b.dK = dK, b.dKStrides = ks, b.dV = dV, b.dVStrides = ks;
        b.workspace = workspace;
        b.dqStrategy = dq;
        if (const kn::FlashResult r = kn::flashAttentionBackward(b); !r.ok()) {
            failure = r.message;
        }
    }
    if (ok && failure.empty()) {
        const cudaError_t status = cudaDeviceSynchronize();
        if (status != cudaSuccess) {
            failure = std::string("kernel error: ") + cudaGetErrorString(status);
        }
    }
    if (ok && failure.empty()) {
        for (auto [name, pointer, count, t] :
             {std::tuple{"O", static_cast<const void*>(o), qCount, dtype},
              std::tuple{"L", static_cast<const void*>(lse),
                         static_cast<std::size_t>(batch * heads * c.sq), AttentionDtype::Float32},
              std::tuple{"dQ", static_cast<const void*>(dQ), qCount, dtype},
              std::tuple{"dK", static_cast<const void*>(dK), kCount, dtype},
              std::tuple{"dV", static_cast<const void*>(dV), kCount, dtype}}) {
            if (!allFinite(pointer, count, t)) {
                failure += std::string(failure.empty() ? "" : ", ") + name +
                           " has NaN/inf or unwritten elements";
            }
        }
    }
    if (!ok) {
        failure = "allocation, copy or poisoning failed";
    }
    for (void* p : buffers) {
        cudaFree(p);
    }
    std::printf("%-4s d%-3lld %-6s %4lld x %-4lld dQ %-8s %s\n", dtypeName(dtype),
                static_cast<long long>(d), c.causal ? "causal" : "full",
                static_cast<long long>(c.sq), static_cast<long long>(c.sk),
                dq == kn::DqStrategy::Atomics ? "atomics" : "pass",
                failure.empty() ? "ok" : ("FAILED: " + failure).c_str());
    return failure.empty();
}

}  // namespace

int main(int argc, char** argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("no CUDA device: skipped\n");
        return 77;
    }
    std::vector<int64_t> dims = {16, 32, 64, 128};
    if (argc > 1) {
        dims = {std::atoll(argv[1])};
    }
    std::mt19937 rng(20261123);
    bool all = true;
    for (AttentionDtype dtype :
         {AttentionDtype::BFloat16, AttentionDtype::Float16, AttentionDtype::Float32}) {
        for (int64_t d : dims) {
            for (const Case& c : {Case{true, 70, 70}, Case{false, 33, 50}, Case{true, 20, 45}}) {
                for (kn::DqStrategy dq : {kn::DqStrategy::Atomics, kn::DqStrategy::SeparatePass}) {
                    if (dtype == AttentionDtype::Float32 && dq == kn::DqStrategy::Atomics) {
                        continue;  // fp32 always takes its separate pass
                    }
                    all = runCase(dtype, d, c, dq, rng) && all;
                }
            }
        }
    }
    std::printf("%s\n", all ? "all ok" : "FAILURES");
    return all ? 0 : 1;
}
