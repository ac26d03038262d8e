#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interop/memory_snapshot.h"

namespace stepscope {

// What a snapshot's stacks say about an allocation: the frames worth showing,
// its site (where in the user's code it was made) and its category. The
// rules are written out in docs/memory-snapshots.md.

// memory_viz's frameFilter: the unwinder's and the interpreter's own frames
// (CapturedTraceback::gather, PyEval_*, ceval.c, ...), which its stacks leave out.
bool memvizShowsFrame(std::string_view name, std::string_view filename);

// Frames that are not the user's code: those memory_viz leaves out, every
// frame that is not Python (C and C++ sources, libraries, "??", no file at
// all: what PyTorch's unwinder gives C++ frames), PyTorch's own Python files
// (".../site-packages/torch/...", Inductor's output) and Python's standard
// library.
bool isLibraryFrame(std::string_view name, std::string_view filename);

// Where an allocation was made, from its stack (innermost call first):
// - "train.py:42 forward": the innermost frame that is the user's code;
// - unless an autograd node's apply() comes first (backward, on the
//   autograd thread or not): "ToCopyBackward0 · aten::_to_copy", the node
//   and the innermost ATen operator below it that is not a factory (empty*);
// - with C++ frames only and no node: the operator, "aten::mm";
// - else the innermost frame memory_viz shows outside c10 (the caching
//   allocator), else the innermost it shows; "(no stack recorded)" without
//   frames. A frame without a filename (StepScope's runs), or a C++ one with
//   "??" for its file or line 0, is its name alone.
std::string siteOf(const MemorySnapshot& snapshot, uint32_t stack);

// The stack as memory_viz prints it: "file:line:name", innermost first, a
// run of equal lines as one and "<repeats N times>"; the frames
// memvizShowsFrame rejects are left out unless `allFrames`.
std::string formatStack(const MemorySnapshot& snapshot, uint32_t stack, bool allFrames = false);

// What a user's rule searches in each frame of an allocation's stack.
enum class RuleTarget : uint8_t { NameOrFile, Name, File };

// A user's rule: a frame whose name (or filename, or either: `target`)
// matches `pattern` (an ECMAScript regex, searched) puts the allocation in
// `category`.
struct CategoryRule {
    std::string category;
    std::string pattern;
    RuleTarget target = RuleTarget::NameOrFile;
    bool operator==(const CategoryRule&) const = default;
};

// Why `pattern` is not a regex the rules accept, or empty when it is one:
// over 256 characters, a repeated group that itself repeats or alternates
// (exponential matching), or std::regex's own words.
std::string ruleRegexError(const std::string& pattern);

// Categories from stacks, as Mosaic infers them: the user's rules first, in
// order, then Mosaic's rules for activation ("forward" in a frame's name),
// parameter, backward and optimizer; "unknown" when none matches.
class StackCategorizer {
public:
    // Throws std::invalid_argument naming a rule whose pattern is not a regex.
    explicit StackCategorizer(const std::vector<CategoryRule>& rules = {});

    // "unknown", "parameter", "activation", "backward", "optimizer", then
    // the user's categories that are not among them.
    const std::vector<std::string>& names() const { return names_; }
    uint16_t categoryOf(const MemorySnapshot& snapshot, uint32_t stack) const;
    // The two halves of categoryOf: the user's rules alone (nullopt when none
    // matches), and Mosaic's.
    std::optional<uint16_t> userCategoryOf(const MemorySnapshot& snapshot, uint32_t stack) const;
    uint16_t inferredCategoryOf(const MemorySnapshot& snapshot, uint32_t stack) const;
    // The index of `name` in names(), added if new.
    uint16_t idOf(const std::string& name);

    static constexpr uint16_t kUnknown = 0;
    static constexpr uint16_t kParameter = 1;
    static constexpr uint16_t kActivation = 2;
    static constexpr uint16_t kBackward = 3;
    static constexpr uint16_t kOptimizer = 4;

private:
    struct CompiledRules;  // std::regex, kept out of this header
    std::vector<std::string> names_;
    std::shared_ptr<const CompiledRules> rules_;
};

}  // namespace stepscope
