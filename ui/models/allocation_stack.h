#pragma once

#include <QList>
#include <QString>

#include <string>

namespace stepscope::ui {

// Where an allocation was made, as memory_viz shows a stack, outermost
// first: the autograd node when backward made it (it runs the ops, and a
// checkpoint's node the recomputed forward), the module path one level a
// frame ("layers.0", "layers.0.attn"; a list's index stays with its list),
// then the op that allocated. A PyTorch snapshot's site is one frame, as
// it was named.
struct StackFrame {
    enum class Kind { Module, Op, AutogradNode, Site };
    Kind kind;
    QString name;
};

// From the allocation's module path (or autograd node, or a snapshot's site)
// and operator, empty where unknown.
QList<StackFrame> allocationStack(const std::string& path, const std::string& op);
QString frameKindName(StackFrame::Kind kind);  // "module", "op", "autograd node", "site"
// "layers.0 › layers.0.attn › aten::mm": one line, outermost first; "(not recorded)" when empty.
QString stackLine(const QList<StackFrame>& stack);

}  // namespace stepscope::ui
