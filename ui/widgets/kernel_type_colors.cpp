#include "widgets/kernel_type_colors.h"

#include <utility>

#include "widgets/plot_style.h"

namespace stepscope::ui {

std::optional<QColor> traceCategoryColor(const QString& name) {
    // Hues of their own, none near the operator categories' (categoryColor):
    // a trace's Timeline shows HTA's kernel types beside the host operators'
    // categories, and the same blue for COMPUTATION and matmul read as one.
    // An overlap takes a hue between its parts.
    static const std::pair<const char*, QColor> colors[] = {
        {"COMPUTATION", QColor(86, 180, 233)},
        {"COMMUNICATION", QColor(204, 121, 167)},
        {"MEMORY", QColor(240, 228, 66)},
        {"OTHER", QColor(150, 110, 80)},
        {"COMPUTATION overlapping COMMUNICATION", QColor(145, 120, 220)},
        {"COMPUTATION overlapping MEMORY", QColor(160, 215, 100)},
        {"COMMUNICATION overlapping MEMORY", QColor(250, 180, 130)},
        {"COMPUTATION overlapping COMMUNICATION overlapping MEMORY", QColor(60, 40, 90)},
        {"cuda_runtime", QColor(255, 60, 120)},
        {"cuda_driver", QColor(0, 210, 200)},
    };
    for (const auto& [known, color] : colors) {
        if (name == QLatin1String(known)) {
            return color;
        }
    }
    return std::nullopt;
}

QColor categoryOrKernelTypeColor(const QString& name) {
    return traceCategoryColor(name).value_or(categoryColor(name));
}

}  // namespace stepscope::ui
