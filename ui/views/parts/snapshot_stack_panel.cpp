#include "views/parts/snapshot_stack_panel.h"

#include <QCheckBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "models/snapshot_recording.h"

namespace stepscope::ui {

SnapshotStackPanel::SnapshotStackPanel(QWidget* parent) : QWidget(parent), stack_(kNoStack) {
    heading_ = new QLabel;
    heading_->setWordWrap(true);
    heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    allFrames_ = new QCheckBox(tr("Show all frames"));
    allFrames_->setToolTip(
        tr("memory_viz leaves out the unwinder's and the interpreter's own frames "
           "(CapturedTraceback::gather, _PyEval_*, ceval.c, …); tick to see them too."));
    text_ = new QPlainTextEdit;
    text_->setReadOnly(true);
    text_->setLineWrapMode(QPlainTextEdit::NoWrap);
    text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* top = new QHBoxLayout;
    top->addWidget(heading_, 1);
    top->addWidget(allFrames_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(text_, 1);
    connect(allFrames_, &QCheckBox::toggled, this, &SnapshotStackPanel::refill);
    clear();
}

void SnapshotStackPanel::showStack(std::shared_ptr<const SnapshotRecording> recording,
                                   uint32_t stack, const QString& heading) {
    recording_ = std::move(recording);
    stack_ = stack;
    heading_->setText(heading);
    refill();
}

void SnapshotStackPanel::clear() {
    recording_.reset();
    stack_ = kNoStack;
    heading_->setText(tr("Click an allocation on the chart to see the stack it was made with."));
    refill();
}

void SnapshotStackPanel::setAllFrames(bool all) {
    allFrames_->setChecked(all);
}

bool SnapshotStackPanel::allFrames() const {
    return allFrames_->isChecked();
}

QString SnapshotStackPanel::heading() const {
    return heading_->text();
}

QString SnapshotStackPanel::text() const {
    return text_->toPlainText();
}

void SnapshotStackPanel::refill() {
    if (!recording_) {
        allFrames_->setText(tr("Show all frames"));
        allFrames_->setEnabled(false);
        text_->clear();
        return;
    }
    const size_t all = recording_->frameCount(stack_);
    const size_t shown = recording_->shownFrameCount(stack_);
    allFrames_->setText(tr("Show all %1 frames").arg(all));
    // Nothing more to show when memory_viz's filter leaves every frame in.
    allFrames_->setEnabled(shown < all);
    text_->setPlainText(recording_->stackText(stack_, allFrames_->isChecked()));
}

}  // namespace stepscope::ui
