#include "attention/tiled_attention.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/zeros.h>

#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace stepscope {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Tile {
    int64_t start;
    int64_t size;
};

std::vector<Tile> tiles(int64_t length, int64_t tile) {
    std::vector<Tile> out;
    for (int64_t start = 0; start < length; start += tile) {
        out.push_back({start, std::min(tile, length - start)});
    }
    return out;
}

// Causal attention aligns the last query with the last key (offset = Sk -
// Sq): query row r sees keys up to r + offset.
bool tileAboveDiagonal(const Tile& queries, const Tile& keys, int64_t offset) {
    return keys.start > queries.start + queries.size - 1 + offset;
}

bool tileCrossesDiagonal(const Tile& queries, const Tile& keys, int64_t offset) {
    return keys.start + keys.size - 1 > queries.start + offset;
}

// True where key column c is hidden from query row r within the tile pair.
at::Tensor futureMask(const Tile& queries, const Tile& keys, int64_t offset,
                      const at::TensorOptions& options) {
    return at::triu(at::ones({queries.size, keys.size}, options.dtype(at::kBool)),
                    queries.start + offset - keys.start + 1);
}

}  // namespace

at::Tensor TiledAttentionFunction::forward(AutogradContext* ctx, const at::Tensor& q,
                                           const at::Tensor& k, const at::Tensor& v, bool causal,
                                           int64_t queryTile, int64_t keyTile) {
    // The tiles compute in fp32 on purpose; autocast must not turn them to half.
    const c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    const int64_t batch = q.size(0), heads = q.size(1), sq = q.size(2), d = q.size(3);
    const int64_t sk = k.size(2);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const int64_t offset = sk - sq;
    // (B·H, S, D) in fp32: the online softmax and accumulations stay in fp32.
    const at::Tensor q3 = q.reshape({batch * heads, sq, d});
    const at::Tensor k3 = k.reshape({batch * heads, sk, d});
    const at::Tensor v3 = v.reshape({batch * heads, sk, d});
    const auto fp32 = q.options().dtype(at::kFloat);
    at::Tensor out = at::empty({batch * heads, sq, d}, fp32);
    at::Tensor logsumexp = at::empty({batch * heads, sq}, fp32);

    for (const Tile& qt : tiles(sq, queryTile)) {
        const at::Tensor qi = q3.narrow(1, qt.start, qt.size).to(at::kFloat);
        at::Tensor rowMax =
            at::full({batch * heads, qt.size, 1}, -std::numeric_limits<float>::infinity(), fp32);
        at::Tensor rowSum = at::zeros({batch * heads, qt.size, 1}, fp32);
        at::Tensor acc = at::zeros({batch * heads, qt.size, d}, fp32);
        for (const Tile& kt : tiles(sk, keyTile)) {
            if (causal && tileAboveDiagonal(qt, kt, offset)) {
                break;  // every later key tile is above the diagonal too
            }
            const at::Tensor kj = k3.narrow(1, kt.start, kt.size).to(at::kFloat);
            const at::Tensor vj = v3.narrow(1, kt.start, kt.size).to(at::kFloat);
            at::Tensor scores = at::matmul(qi, kj.transpose(1, 2)).mul_(scale);
            if (causal && tileCrossesDiagonal(qt, kt, offset)) {
                scores.masked_fill_(futureMask(qt, kt, offset, fp32),
                                    -std::numeric_limits<float>::infinity());
            }
            const at::Tensor newMax = at::maximum(rowMax, std::get<0>(scores.max(-1, true)));
            // Rows with every key masked so far keep max -inf; exp(-inf - -inf) would be NaN.
            const at::Tensor safeMax = newMax.masked_fill(newMax.isinf(), 0.0);
            const at::Tensor p = at::exp(scores - safeMax);
            const at::Tensor correction = at::exp(rowMax - safeMax);
            rowSum = correction * rowSum + p.sum(-1, true);
            acc = correction * acc + at::matmul(p, vj);
            rowMax = newMax;
        }
        out.narrow(1, qt.start, qt.size).copy_(acc / rowSum);
        logsumexp.narrow(1, qt.start, qt.size).copy_((rowMax + at::log(rowSum)).squeeze(-1));
    }
    const at::Tensor output = out.to(q.scalar_type()).reshape({batch, heads, sq, d});
    ctx->save_for_backward({q3, k3, v3, output.reshape({batch * heads, sq, d}), logsumexp});
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["query_tile"] = queryTile;
    ctx->saved_data["key_tile"] = keyTile;
    return output;
}

variable_list TiledAttentionFunction::backward(AutogradContext* ctx, variable_list gradOutputs) {
    const c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& q3 = saved[0];
    const at::Tensor& k3 = saved[1];
    const at::Tensor& v3 = saved[2];
    const at::Tensor& o3 = saved[3];
    const at::Tensor& logsumexp = saved[4];
    const bool causal = ctx->saved_data["causal"].toBool();
    const int64_t queryTile = ctx->saved_data["query_tile"].toInt();
    const int64_t keyTile = ctx->saved_data["key_tile"].toInt();
    const int64_t bh = q3.size(0), sq = q3.size(1), d = q3.size(2), sk = k3.size(1);
    const int64_t offset = sk - sq;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const auto fp32 = q3.options().dtype(at::kFloat);

    const at::Tensor dO = gradOutputs[0].reshape({bh, sq, d}).to(at::kFloat);
    const at::Tensor delta = (dO * o3.to(at::kFloat)).sum(-1);  // D = rowsum(dO ∘ O)
    at::Tensor dQ = at::zeros({bh, sq, d}, fp32);
    at::Tensor dK = at::zeros({bh, sk, d}, fp32);
    at::Tensor dV = at::zeros({bh, sk, d}, fp32);

    for (const Tile& kt : tiles(sk, keyTile)) {
        const at::Tensor kj = k3.narrow(1, kt.start, kt.size).to(at::kFloat);
        const at::Tensor vj = v3.narrow(1, kt.start, kt.size).to(at::kFloat);
        at::Tensor dKj = dK.narrow(1, kt.start, kt.size);
        at::Tensor dVj = dV.narrow(1, kt.start, kt.size);
        for (const Tile& qt : tiles(sq, queryTile)) {
            if (causal && tileAboveDiagonal(qt, kt, offset)) {
                continue;
            }
            const at::Tensor qi = q3.narrow(1, qt.start, qt.size).to(at::kFloat);
            const at::Tensor dOi = dO.narrow(1, qt.start, qt.size);
            at::Tensor scores = at::matmul(qi, kj.transpose(1, 2)).mul_(scale);
            if (causal && tileCrossesDiagonal(qt, kt, offset)) {
                scores.masked_fill_(futureMask(qt, kt, offset, fp32),
                                    -std::numeric_limits<float>::infinity());
            }
            const at::Tensor p =
                at::exp(scores - logsumexp.narrow(1, qt.start, qt.size).unsqueeze(-1));
            dVj.add_(at::matmul(p.transpose(1, 2), dOi));
            const at::Tensor dP = at::matmul(dOi, vj.transpose(1, 2));
            const at::Tensor dS = p * (dP - delta.narrow(1, qt.start, qt.size).unsqueeze(-1));
            dQ.narrow(1, qt.start, qt.size).add_(at::matmul(dS, kj), scale);
            dKj.add_(at::matmul(dS.transpose(1, 2), qi), scale);
        }
    }
    const auto shape = [&](const at::Tensor& t, const at::Tensor& like, int64_t s) {
        return t.to(like.scalar_type()).reshape({-1, gradOutputs[0].size(1), s, d});
    };
    return {shape(dQ, q3, sq), shape(dK, k3, sk), shape(dV, v3, sk),
            at::Tensor(),      at::Tensor(),      at::Tensor()};
}

TiledAttention::TiledAttention(int64_t queryTile, int64_t keyTile)
    : queryTile_(queryTile), keyTile_(keyTile) {
    if (queryTile < kMinTile || keyTile < kMinTile) {
        throw std::invalid_argument("tile: tile sizes must be at least " +
                                    std::to_string(kMinTile));
    }
}

at::Tensor TiledAttention::forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   bool causal) {
    return TiledAttentionFunction::apply(q, k, v, causal, queryTile_, keyTile_);
}

}  // namespace stepscope
