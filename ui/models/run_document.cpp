#include "models/run_document.h"

namespace stepscope::ui {

QString defaultTitle(const RunResult& result) {
    const RunConfig& c = result.config;
    return QString("%1 · ctx %2 · %3 · %4 · %5")
        .arg(QString::fromStdString(c.model.name))
        .arg(c.contextLength)
        .arg(QString::fromStdString(toString(c.mode)),
             QString::fromStdString(toString(c.precision)),
             QString::fromStdString(toString(c.device)));
}

}  // namespace stepscope::ui
