#include "models/format.h"

#include <QObject>
#include <QStringList>

#include "estimate/cost_model.h"
#include "util/strings.h"

namespace stepscope::ui {

QString formatMs(double milliseconds) {
    return QString::number(milliseconds, 'f', 2);
}

QString bytesText(int64_t bytes) {
    return QString::fromStdString(formatBytes(double(bytes)));
}

QString formatPercent(double fraction) {
    return QString::number(100 * fraction, 'f', 1) + "%";
}

QString formatScaled(double value, const QString& unit) {
    const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (value >= 1000 && i < 5) {
        value /= 1000;
        ++i;
    }
    return QString::number(value, 'f', 2) + " " + prefixes[i] + unit;
}

QString throughputText(const RunSummary& s) {
    if (s.tokensPerSecond <= 0) {  // a recording that does not say its tokens (a trace)
        return {};
    }
    if (s.flopsPerStep <= 0) {  // a user's Python model: its FLOPs are not ours to count
        return formatScaled(s.tokensPerSecond, "tokens/s");
    }
    QString text =
        QObject::tr("%1 · %2 per step · %3 achieved")
            .arg(formatScaled(s.tokensPerSecond, "tokens/s"), formatScaled(s.flopsPerStep, "FLOP"),
                 formatScaled(s.achievedFlopsPerSecond, "FLOP/s"));
    if (s.mfu) {
        text += QObject::tr(" · MFU %1").arg(formatPercent(*s.mfu));
    }
    return text;
}

QString compileText(const RunResult& result) {
    if (!result.compileMs) {
        return {};
    }
    const double seconds = *result.compileMs / 1000;
    const QString mode = QString::fromStdString(result.config.compileMode);
    return QObject::tr(
               "Compiled in %1 s (torch.compile, mode %2) on the first call, not counted "
               "in the steps.")
        .arg(QString::number(seconds, 'f', seconds < 10 ? 2 : 1), mode);
}

QString environmentText(const RunResult& result) {
    const EnvironmentInfo& env = result.environment;
    const auto text = [](const std::string& value) { return QString::fromStdString(value); };
    QStringList parts;
    if (result.config.engine == Engine::LibTorch) {
        if (!env.libtorchVersion.empty()) {
            parts << QObject::tr("LibTorch %1").arg(text(env.libtorchVersion));
        }
    } else if (!env.pythonTorchVersion.empty() || !env.python.empty()) {
        QString torch = QObject::tr("PyTorch %1").arg(text(env.pythonTorchVersion)).trimmed();
        if (!env.python.empty()) {
            torch += QObject::tr(" (Python %1)").arg(text(env.python));
        }
        parts << torch;
    }
    if (!env.deviceName.empty()) {
        parts << text(env.deviceName);
    }
    // The CUDA torch was built with, on a CUDA run: a CPU run's says nothing.
    if (!env.cudaVersion.empty() && result.config.device == DeviceKind::Cuda) {
        parts << QObject::tr("CUDA %1").arg(text(env.cudaVersion));
    }
    if (env.cpuThreads > 0) {
        parts << (env.cpuThreads == 1 ? QObject::tr("1 CPU thread")
                                      : QObject::tr("%1 CPU threads").arg(env.cpuThreads));
    }
    if (parts.isEmpty()) {
        return {};
    }
    if (!env.hostname.empty()) {
        parts << text(env.hostname);
    }
    if (!env.startedAt.empty()) {
        parts << QObject::tr("started %1").arg(text(env.startedAt));
    }
    return parts.join(" · ");
}

QString countText(qsizetype count, const QString& singular, const QString& plural) {
    return QString("%1 %2").arg(count).arg(count == 1         ? singular
                                           : plural.isEmpty() ? singular + "s"
                                                              : plural);
}

QString shortSymbol(const QString& name, int limit) {
    QString text = name;
    if (text.startsWith("void ")) {
        text.remove(0, 5);
    }
    const int template_ = int(text.indexOf('<'));
    const int arguments = int(text.indexOf('('));
    const int cut =
        template_ >= 0 && (arguments < 0 || template_ < arguments) ? template_ : arguments;
    const bool elided = cut >= 0;
    if (elided) {
        text = text.left(cut);
    }
    const int scope = int(text.lastIndexOf("::"));
    if (scope >= 0) {
        text = text.mid(scope + 2);
    }
    if (elided && template_ == cut) {
        text += "<…>";
    }
    return text.size() > limit ? text.left(limit - 1) + "…" : text;
}

}  // namespace stepscope::ui
