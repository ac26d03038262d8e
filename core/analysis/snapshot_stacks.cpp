#include "analysis/snapshot_stacks.h"
#include "util/strings.h"

// GCC 12 warns inside libstdc++'s std::regex (std::function members "may be
// used uninitialized") when it optimizes under AddressSanitizer (-O1 and
// up): a false positive in the library's headers, silenced in this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <stdexcept>

namespace stepscope {

namespace {

template <size_t N>
bool containsAny(std::string_view text, const std::array<std::string_view, N>& parts) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](std::string_view part) { return contains(text, part); });
}

// memory_viz (torch/utils/viz/MemoryViz.js, frameFilter).
constexpr std::array<std::string_view, 8> kMemvizHiddenNames = {
    "unwind::unwind",    "CapturedTraceback::gather",
    "gather_with_cpp",   "_start",
    "__libc_start_main", "PyEval_",
    "PyObject_",         "PyFunction_"};
constexpr std::array<std::string_view, 10> kMemvizHiddenFiles = {"core/boxing",
                                                                 "/Register",
                                                                 "/Redispatch",
                                                                 "pythonrun.c",
                                                                 "Modules/main.c",
                                                                 "Objects/call.c",
                                                                 "Objects/methodobject.c",
                                                                 "pycore_ceval.h",
                                                                 "ceval.c",
                                                                 "cpython/abstract.h"};

// Where PyTorch's own Python files live, the code Inductor writes, and the
// packages that only hand tensors on to torch (einops.einsum is torch.einsum).
constexpr std::array<std::string_view, 6> kTorchPackage = {
    "site-packages/torch/", "dist-packages/torch/", "/pytorch/torch/",
    "/torchinductor_",      "-packages/einops/",    "-packages/opt_einsum/"};

// Mosaic's rules (facebookresearch/mosaic, libmosaic/utils/data_utils.py),
// those for the five categories StepScope shows.
constexpr std::array<std::string_view, 9> kAutogradPrefixes = {
    "torch::autograd::Engine::",
    "torch::autograd::python::PythonEngine::",
    "torch::autograd::Node::operator()",
    "torch::autograd::PyNode::",
    "torch::autograd::CppNode<",
    "torch::autograd::GraphTask::",
    "torch::autograd::AccumulateGrad::",
    "torch::autograd::deleteNode",
    "torch::autograd::utils::LambdaPostHook"};
constexpr std::array<std::string_view, 7> kReducerPrefixes = {
    "c10d::Reducer::mark_variable_ready",
    "c10d::Reducer::mark_bucket_ready",
    "c10d::Reducer::autograd_hook",
    "c10d::Reducer::initialize_buckets",
    "c10d::Reducer::initialize_local_used_map",
    "c10d::Reducer::rebuild_buckets",
    "c10d::Reducer::set_static_graph"};
constexpr std::array<std::string_view, 3> kBackwardHelpers = {"_instantiate_filtered_grads",
                                                              "clip_grad_norm_", "calc_grad_norm"};
constexpr std::array<std::string_view, 6> kOptimizerNames = {
    "custom_adamw",         "_init_group",      "step",
    "_per_group_step_impl", "create_optimizer", "_create_optimizer"};
constexpr std::array<std::string_view, 2> kOptimizerFiles = {"torch/optim/optimizer.py",
                                                             "torchrec/optim/keyed.py"};

struct FrameText {
    std::string_view name;
    std::string_view filename;
};

template <typename Predicate>
bool anyFrame(const std::vector<FrameText>& frames, Predicate predicate) {
    return std::any_of(frames.begin(), frames.end(), predicate);
}

bool isIn(std::string_view name, std::span<const std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

bool startsWithAny(std::string_view name, std::span<const std::string_view> prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view prefix) { return startsWith(name, prefix); });
}

uint16_t mosaicCategory(const std::vector<FrameText>& frames) {
    if (anyFrame(frames, [](const FrameText& f) { return contains(f.name, "forward"); })) {
        return StackCategorizer::kActivation;
    }
    if (anyFrame(frames, [](const FrameText& f) {
            return contains(f.name, "param") || contains(f.filename, "flatten_params_wrapper") ||
                   contains(f.name, "build_norm_fn") ||
                   (contains(f.name, "__init__") && contains(f.filename, "parallel/layers.py"));
        })) {
        return StackCategorizer::kParameter;
    }
    if (anyFrame(frames, [](const FrameText& f) {
            return startsWithAny(f.name, kAutogradPrefixes) ||
                   startsWithAny(f.name, kReducerPrefixes) || contains(f.name, "backward") ||
                   isIn(f.name, kBackwardHelpers);
        })) {
        return StackCategorizer::kBackward;
    }
    if (anyFrame(frames, [](const FrameText& f) {
            return isIn(f.name, kOptimizerNames) || containsAny(f.filename, kOptimizerFiles);
        })) {
        return StackCategorizer::kOptimizer;
    }
    return StackCategorizer::kUnknown;
}

// libstdc++'s regex search recurses over its input; a rule sees at most this
// much of a name or filename, so a hostile file's long name cannot overflow it.
constexpr size_t kRuleTextLimit = 1024;

}  // namespace

bool memvizShowsFrame(std::string_view name, std::string_view filename) {
    return !containsAny(name, kMemvizHiddenNames) && !containsAny(filename, kMemvizHiddenFiles);
}

bool isLibraryFrame(std::string_view name, std::string_view filename) {
    if (!memvizShowsFrame(name, filename)) {
        return true;
    }
    // The user's code is Python: a .py file, or code run from a string or a
    // notebook ("<string>", "<ipython-input-3-…>"). C++ frames have a C or
    // C++ file, a library or executable (dladdr's symbols), "??" or no file
    // at all (addr2line without line tables): native, whatever their name.
    const bool pseudoFile = startsWith(filename, "<") && !startsWith(filename, "<frozen") &&
                            !startsWith(filename, "<eval_with_key>") && filename != "<unknown>";
    if (!endsWith(filename, ".py") && !pseudoFile) {
        return true;
    }
    if (startsWith(filename, "torch/") || containsAny(filename, kTorchPackage)) {
        return true;
    }
    // Python's standard library: /usr/lib/python3.11/contextlib.py, not its site-packages.
    return contains(filename, "/lib/python3") && !contains(filename, "-packages/");
}

namespace {

// "ToCopyBackward0" of "torch::autograd::generated::ToCopyBackward0::apply(…)",
// "AccumulateGrad", "MyFunction" of "torch::autograd::CppNode<MyFunction>::apply(…)":
// the autograd node whose apply() a frame is; empty for any other frame.
std::string_view autogradNode(std::string_view name) {
    for (const std::string_view prefix : {std::string_view("torch::autograd::generated::"),
                                          std::string_view("torch::autograd::")}) {
        if (!startsWith(name, prefix)) {
            continue;
        }
        const std::string_view rest = name.substr(prefix.size());
        const size_t apply = rest.find("::apply(");
        const std::string_view node = rest.substr(0, apply);
        if (apply == std::string_view::npos || node.find("::") != std::string_view::npos) {
            continue;  // a helper inside a node (generated::details::…), or no node
        }
        if (startsWith(node, "CppNode<") && endsWith(node, ">")) {
            return node.substr(8, node.size() - 9);
        }
        return node;
    }
    return {};
}

// "_to_copy" of "at::_ops::_to_copy::call(…)" or "…::redispatch(…)": the ATen
// operator a frame dispatches (its overload joined by '_', as at::_ops
// spells it: "add_Tensor"); empty for any other frame.
std::string_view atenOp(std::string_view name) {
    constexpr std::string_view kOps = "at::_ops::";
    if (!startsWith(name, kOps)) {
        return {};
    }
    const std::string_view rest = name.substr(kOps.size());
    const size_t end = rest.find("::");
    if (end == std::string_view::npos || end == 0) {
        return {};
    }
    const std::string_view call = rest.substr(end + 2);
    return startsWith(call, "call") || startsWith(call, "redispatch") ? rest.substr(0, end)
                                                                      : std::string_view();
}

// The factories an operator makes its result with (at::empty_strided inside
// _to_copy): the operator that called them is the one worth naming.
bool isFactory(std::string_view op) {
    return startsWith(op, "empty") || startsWith(op, "new_empty");
}

std::string frameLabel(const MemorySnapshot& snapshot, uint32_t id) {
    const SnapshotFrame& frame = snapshot.frames[id];
    const std::string_view file = snapshot.string(frame.filename);
    const std::string_view name = snapshot.string(frame.name);
    // A C++ frame's "??", empty file or line 0 says nothing: its name alone.
    if (file.empty() || file == "??" || frame.line == 0) {
        return std::string(name);
    }
    return std::string(file) + ":" + std::to_string(frame.line) + " " + std::string(name);
}

// Made inside an autograd node or an ATen operator: "ToCopyBackward0 ·
// aten::_to_copy", "AccumulateGrad", "aten::mm" (the innermost operator
// that is not a factory, else the innermost); empty when the stack holds
// neither.
std::string nodeOrOp(const MemorySnapshot& snapshot, std::span<const uint32_t> frames) {
    std::string_view op, factory;
    auto named = [&] { return op.empty() ? factory : op; };
    for (const uint32_t id : frames) {
        const std::string_view name = snapshot.string(snapshot.frames[id].name);
        if (const std::string_view node = autogradNode(name); !node.empty()) {
            return std::string(node) + (named().empty() ? "" : " · aten::" + std::string(named()));
        }
        const std::string_view here = atenOp(name);
        if (here.empty() || !op.empty()) {
            continue;
        }
        if (!isFactory(here)) {
            op = here;
        } else if (factory.empty()) {
            factory = here;
        }
    }
    return named().empty() ? std::string() : "aten::" + std::string(named());
}

}  // namespace

std::string siteOf(const MemorySnapshot& snapshot, uint32_t stack) {
    const std::span<const uint32_t> frames = snapshot.stack(stack);
    if (frames.empty()) {
        return "(no stack recorded)";
    }
    // Innermost first: the user's own frame, unless the allocation was made
    // in an autograd node nearer to it (in backward the user's frame is only
    // where backward() was called).
    for (const uint32_t id : frames) {
        const SnapshotFrame& frame = snapshot.frames[id];
        const std::string_view name = snapshot.string(frame.name);
        if (!autogradNode(name).empty()) {
            return nodeOrOp(snapshot, frames);
        }
        if (!isLibraryFrame(name, snapshot.string(frame.filename))) {
            return frameLabel(snapshot, id);
        }
    }
    if (std::string made = nodeOrOp(snapshot, frames); !made.empty()) {
        return made;  // C++ frames only, outside backward: the operator
    }
    // Else the first frame memory_viz shows that is not c10's (the caching
    // allocator, intrusive pointers: every allocation passes through them).
    for (const bool skipC10 : {true, false}) {
        for (const uint32_t id : frames) {
            const SnapshotFrame& frame = snapshot.frames[id];
            const std::string_view name = snapshot.string(frame.name);
            if (memvizShowsFrame(name, snapshot.string(frame.filename)) &&
                !(skipC10 && startsWith(name, "c10::"))) {
                return frameLabel(snapshot, id);
            }
        }
    }
    return frameLabel(snapshot, frames.front());
}

std::string formatStack(const MemorySnapshot& snapshot, uint32_t stack, bool allFrames) {
    const std::span<const uint32_t> frames = snapshot.stack(stack);
    if (frames.empty()) {
        return "<block was allocated before _record_history was enabled>";
    }
    std::vector<std::string> lines;
    for (const uint32_t id : frames) {
        const SnapshotFrame& frame = snapshot.frames[id];
        const std::string_view name = snapshot.string(frame.name);
        const std::string_view file = snapshot.string(frame.filename);
        if (allFrames || memvizShowsFrame(name, file)) {
            lines.push_back(std::string(file) + ":" + std::to_string(frame.line) + ":" +
                            std::string(name));
        }
    }
    std::string out;
    for (size_t i = 0; i < lines.size();) {
        size_t j = i + 1;
        while (j < lines.size() && lines[j] == lines[i]) {
            ++j;
        }
        out += (out.empty() ? "" : "\n") + lines[i];
        if (j - i == 2) {
            out += "\n" + lines[i];
        } else if (j - i > 2) {
            out += "\n<repeats " + std::to_string(j - i - 1) + " times>";
        }
        i = j;
    }
    return out;
}

namespace {

// libstdc++ compiles a regex recursively (tens of thousands of nested groups
// overflow the stack) and matches it by backtracking with no bound on the
// steps: a group that repeats and itself repeats, alternates or is optional
// inside, as in (\\w+)+x, (a|ab)*c or (a?){30}, takes time exponential in a
// frame name's length, and so does a run of many repetitions (a?a?…a?aa…a).
// Refused before std::regex sees the pattern: over 256 characters, such a
// group, or more than four repetitions. (A bounded matcher, PCRE2 with its
// match limit, would need none of this; std::regex has no limit to set.)
constexpr size_t kRulePatternLimit = 256;
constexpr int kRuleRepetitionLimit = 4;

constexpr int kRuleCountLimit = 100;

// Whether every number in a {n,m} quantifier is at most `limit`.
bool countsWithin(const std::string& braces, int limit) {
    int value = 0;
    for (const char c : braces) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            value = value * 10 + (c - '0');
            if (value > limit) {
                return false;
            }
        } else {
            value = 0;
        }
    }
    return true;
}

// The length of the quantifier at `i` (*, +, ?, {n}, {n,}, {n,m}, each
// perhaps lazy with a '?' after it), 0 when there is none.
size_t quantifierLength(const std::string& pattern, size_t i) {
    if (i >= pattern.size()) {
        return 0;
    }
    size_t end = i + 1;
    const char c = pattern[i];
    if (c == '{') {
        if (i + 1 >= pattern.size() || !std::isdigit(static_cast<unsigned char>(pattern[i + 1]))) {
            return 0;  // a literal brace
        }
        end = pattern.find('}', i);
        end = end == std::string::npos ? pattern.size() : end + 1;
    } else if (c != '*' && c != '+' && c != '?') {
        return 0;
    }
    return end < pattern.size() && pattern[end] == '?' ? end + 1 - i : end - i;
}

// Why a pattern's shape can take std::regex exponential time, or empty.
std::string ruleShapeProblem(const std::string& pattern) {
    std::vector<bool> groups;  // per open group: holds a repetition or an alternation
    bool inClass = false;
    int repetitions = 0;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\') {
            // A back-reference makes matching NP-hard, and libstdc++ reads a long
            // one's number into a long without a check (a crash under UBSan).
            if (i + 1 < pattern.size() &&
                std::isdigit(static_cast<unsigned char>(pattern[i + 1]))) {
                return "refers back to a group (\\1 …): rules search names, they need no "
                       "back-references";
            }
            ++i;  // an escaped character is a literal
            continue;
        }
        if (inClass) {
            inClass = c != ']';
            continue;
        }
        if (c == '[') {
            inClass = true;
        } else if (c == '(') {
            groups.push_back(false);
            if (i + 1 < pattern.size() && pattern[i + 1] == '?') {
                ++i;  // (?:…), (?=…), (?!…): not a quantifier
            }
        } else if (c == ')' && !groups.empty()) {
            const bool repeating = groups.back();
            groups.pop_back();
            const size_t quantifier = quantifierLength(pattern, i + 1);
            // An optional group ((a+)?) is tried once or not: no more.
            const bool optional = quantifier > 0 && pattern[i + 1] == '?';
            if (repeating && quantifier > 0 && !optional) {
                return "repeats a group that itself repeats, alternates or is optional, as "
                       "(a+)+, (a|b)* or (a?){9} do: such a pattern can take exponential time "
                       "on a long frame name; write it without the outer repetition";
            }
            if ((repeating || quantifier > 0) && !groups.empty()) {
                groups.back() = true;
            }
        } else if (const size_t quantifier = quantifierLength(pattern, i); quantifier > 0) {
            // {n}: std::regex copies the repeated part n times, and reads n
            // as unchecked as a back-reference's number.
            if (c == '{' && !countsWithin(pattern.substr(i, quantifier), kRuleCountLimit)) {
                return "repeats {n} more than " + std::to_string(kRuleCountLimit) + " times";
            }
            if (++repetitions > kRuleRepetitionLimit) {
                return "repeats more than " + std::to_string(kRuleRepetitionLimit) +
                       " times (*, +, ?, {n}): each repetition can multiply the time a long "
                       "frame name takes to match";
            }
            if (quantifierLength(pattern, i + quantifier) > 0) {
                return "repeats a repetition (a**, a+?+, a?{2}): std::regex takes it as a "
                       "nested repetition, exponential on a long frame name";
            }
            if (!groups.empty()) {
                groups.back() = true;
            }
            i += quantifier - 1;
        } else if (c == '|' && !groups.empty()) {
            groups.back() = true;
        }
    }
    return {};
}

}  // namespace

std::string ruleRegexError(const std::string& pattern) {
    if (pattern.size() > kRulePatternLimit) {
        return "longer than " + std::to_string(kRulePatternLimit) + " characters";
    }
    if (std::string shape = ruleShapeProblem(pattern); !shape.empty()) {
        return shape;
    }
    try {
        std::regex compiled(pattern);
    } catch (const std::regex_error& error) {
        return error.what();
    }
    return {};
}

struct StackCategorizer::CompiledRules {
    struct Rule {
        uint16_t category;
        std::regex pattern;
        RuleTarget target;
    };
    std::vector<Rule> rules;
};

StackCategorizer::StackCategorizer(const std::vector<CategoryRule>& rules)
    : names_{"unknown", "parameter", "activation", "backward", "optimizer"} {
    auto compiled = std::make_shared<CompiledRules>();
    for (size_t i = 0; i < rules.size(); ++i) {
        const CategoryRule& rule = rules[i];
        if (rule.category.empty()) {
            throw std::invalid_argument("category rule " + std::to_string(i + 1) +
                                        " names no category");
        }
        if (const std::string error = ruleRegexError(rule.pattern); !error.empty()) {
            throw std::invalid_argument("category rule " + std::to_string(i + 1) + " (\"" +
                                        rule.category + "\"): \"" + rule.pattern +
                                        "\" is not a regular expression: " + error);
        }
        compiled->rules.push_back({idOf(rule.category), std::regex(rule.pattern), rule.target});
    }
    rules_ = std::move(compiled);
}

uint16_t StackCategorizer::idOf(const std::string& name) {
    const auto found = std::find(names_.begin(), names_.end(), name);
    if (found != names_.end()) {
        return static_cast<uint16_t>(found - names_.begin());
    }
    if (names_.size() >= UINT16_MAX) {
        throw std::invalid_argument("more than 65535 categories");
    }
    names_.push_back(name);
    return static_cast<uint16_t>(names_.size() - 1);
}

namespace {

std::vector<FrameText> frameTexts(const MemorySnapshot& snapshot, uint32_t stack) {
    std::vector<FrameText> frames;
    for (const uint32_t id : snapshot.stack(stack)) {
        const SnapshotFrame& frame = snapshot.frames[id];
        frames.push_back({snapshot.string(frame.name), snapshot.string(frame.filename)});
    }
    return frames;
}

}  // namespace

std::optional<uint16_t> StackCategorizer::userCategoryOf(const MemorySnapshot& snapshot,
                                                         uint32_t stack) const {
    if (rules_->rules.empty()) {
        return std::nullopt;
    }
    const std::vector<FrameText> frames = frameTexts(snapshot, stack);
    for (const CompiledRules::Rule& rule : rules_->rules) {
        const bool matches = anyFrame(frames, [&](const FrameText& f) {
            const std::string_view name = f.name.substr(0, kRuleTextLimit);
            const std::string_view file = f.filename.substr(0, kRuleTextLimit);
            return (rule.target != RuleTarget::File &&
                    std::regex_search(name.begin(), name.end(), rule.pattern)) ||
                   (rule.target != RuleTarget::Name &&
                    std::regex_search(file.begin(), file.end(), rule.pattern));
        });
        if (matches) {
            return rule.category;
        }
    }
    return std::nullopt;
}

uint16_t StackCategorizer::inferredCategoryOf(const MemorySnapshot& snapshot,
                                              uint32_t stack) const {
    return mosaicCategory(frameTexts(snapshot, stack));
}

uint16_t StackCategorizer::categoryOf(const MemorySnapshot& snapshot, uint32_t stack) const {
    if (const auto user = userCategoryOf(snapshot, stack)) {
        return *user;
    }
    return inferredCategoryOf(snapshot, stack);
}

}  // namespace stepscope
