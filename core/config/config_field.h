#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"

namespace stepscope {

// One RunConfig field set from text, by the name its CLI flag has (without
// the dashes): what lets a sweep vary any field, and a table show it.
//
// Fields: model (a preset name; the vocabulary and maximum context stay),
// ctx, batch, mode, precision, tf32 (on, off), attention, warmup, steps,
// device, seed, threads, engine, compile-mode, activation-checkpoint (off,
// K, nested), loss (full, chunked), loss-chunk, optimizer (adamw,
// adamw-foreach, adamw-fused), cuda-graph (on, off).
const std::vector<std::string>& configFieldNames();

// Sets `field` of `config` from `text` as the CLI spells it ("8", "sdpa",
// "on"). Throws InvalidConfigError naming the field and what is allowed for
// text that no config can hold; whether the value suits the rest of the
// config (a backend of this engine, a context within the maximum) is
// validate()'s to say.
void setConfigField(RunConfig& config, const std::string& field, const std::string& text);

// The field's value as setConfigField takes it ("8", "sdpa", "on").
std::string configFieldText(const RunConfig& config, const std::string& field);

}  // namespace stepscope
