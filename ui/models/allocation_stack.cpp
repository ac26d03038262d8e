#include "models/allocation_stack.h"

#include <QRegularExpression>
#include <QStringList>

namespace stepscope::ui {

namespace {

// "aten::mm", "c10d::allreduce_": an operator has a namespace.
bool isOp(const QString& name) {
    return name.contains("::");
}

// "MmBackward0", "CheckpointFunctionBackward": what autograd names its nodes.
bool isAutogradNode(const QString& name) {
    static const QRegularExpression node("Backward\\d*$");
    return !isOp(name) && node.match(name).hasMatch();
}

// "layers.0.attn": a module path (a snapshot's "train.py:41 forward" is not).
bool isModulePath(const QString& name) {
    static const QRegularExpression path("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*$");
    return path.match(name).hasMatch();
}

// "layers.0.attn" → "layers.0", "layers.0.attn": one frame a module, the
// index of a module list kept with the list.
QStringList moduleLevels(const QString& path) {
    QStringList levels;
    QString prefix;
    for (const QString& part : path.split('.')) {
        const bool index = !part.isEmpty() && part.front().isDigit();
        prefix = prefix.isEmpty() ? part : prefix + "." + part;
        if (index && !levels.isEmpty()) {
            levels.back() = prefix;
        } else {
            levels << prefix;
        }
    }
    return levels;
}

}  // namespace

QList<StackFrame> allocationStack(const std::string& madeIn, const std::string& madeBy) {
    using Kind = StackFrame::Kind;
    const QString path = QString::fromStdString(madeIn);
    const QString op = QString::fromStdString(madeBy);
    // Backward's node runs outermost: it evaluates the ops (and a
    // checkpoint's node the recomputed forward's modules) that allocate.
    QList<StackFrame> stack;
    if (isAutogradNode(path)) {
        stack.push_back({Kind::AutogradNode, path});
    } else if (isAutogradNode(op)) {
        stack.push_back({Kind::AutogradNode, op});
    }
    if (isModulePath(path) && !isAutogradNode(path)) {
        for (const QString& level : moduleLevels(path)) {
            stack.push_back({Kind::Module, level});
        }
    } else if (!path.isEmpty() && !isAutogradNode(path)) {
        stack.push_back({Kind::Site, path});
    }
    if (!op.isEmpty() && !isAutogradNode(op)) {
        stack.push_back({Kind::Op, op});
    }
    return stack;
}

QString frameKindName(StackFrame::Kind kind) {
    switch (kind) {
        case StackFrame::Kind::Module:
            return QStringLiteral("module");
        case StackFrame::Kind::Op:
            return QStringLiteral("op");
        case StackFrame::Kind::AutogradNode:
            return QStringLiteral("autograd node");
        case StackFrame::Kind::Site:
            break;
    }
    return QStringLiteral("site");
}

QString stackLine(const QList<StackFrame>& stack) {
    QStringList names;
    for (const StackFrame& frame : stack) {
        names << frame.name;
    }
    return names.isEmpty() ? QStringLiteral("(not recorded)") : names.join(QStringLiteral(" › "));
}

}  // namespace stepscope::ui
