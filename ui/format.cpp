#include "format.h"

#include "bench/cost_model.h"

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
    QString text =
        QObject::tr("%1 · %2 per step · %3 achieved")
            .arg(formatScaled(s.tokensPerSecond, "tokens/s"), formatScaled(s.flopsPerStep, "FLOP"),
                 formatScaled(s.achievedFlopsPerSecond, "FLOP/s"));
    if (s.mfu) {
        text += QObject::tr(" · MFU %1").arg(formatPercent(*s.mfu));
    }
    return text;
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
