#pragma once

#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>

class QCheckBox;
class QLabel;
class QPlainTextEdit;

namespace stepscope::ui {

struct SnapshotRecording;

// The whole stack of the allocation picked on a snapshot's chart, as
// memory_viz prints it (file:line:name, innermost call first): PyTorch's
// internal frames left out as memory_viz leaves them out, all of them one
// tick away ("Show all N frames").
class SnapshotStackPanel final : public QWidget {
    Q_OBJECT

public:
    explicit SnapshotStackPanel(QWidget* parent = nullptr);

    // `heading` names the allocation; kNoStack (or no recording) shows none.
    void showStack(std::shared_ptr<const SnapshotRecording> recording, uint32_t stack,
                   const QString& heading);
    void clear();
    void setAllFrames(bool all);
    bool allFrames() const;
    QCheckBox* allFramesBox() const { return allFrames_; }
    QString heading() const;
    QString text() const;  // the stack as shown

private:
    void refill();

    std::shared_ptr<const SnapshotRecording> recording_;
    uint32_t stack_;
    QLabel* heading_;
    QCheckBox* allFrames_;
    QPlainTextEdit* text_;
};

}  // namespace stepscope::ui
