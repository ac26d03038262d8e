// stepscope: the desktop app. Run files, attention files and sweep folders
// named on the command line open at start; --run starts a run at once, and
// --screenshot saves the window when the run finishes (or the files are drawn)
// and quits; scripts/screenshot.sh takes the README's gallery with it under Xvfb.
// --quit-after-load opens the files and quits, its exit status saying whether
// every one opened (the install test starts the installed app so).
#include <QApplication>
#include <QCommandLineParser>
#include <QScreen>
#include <QTimer>
#include <cstdio>
#include <optional>
#include <string_view>

#include "config/config_field.h"
#include "engines/build_info.h"
#include "main_window.h"
#include "pages/config_panel.h"
#include "pages/precision_page.h"
#include "widgets/app_icons.h"

namespace {

bool asksForVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-v" || arg == "--version") {
            return true;
        }
    }
    return false;
}

bool asksOnlyForText(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "-v" ||
            arg == "--version") {
            return true;
        }
    }
    return false;
}

// The configuration fields --run may set, by their CLI names (config_field.h).
struct RunFieldOption {
    const char* field;
    const char* help;
    const char* valueName;
};
constexpr RunFieldOption kRunFields[] = {
    {"model", "preset for --run", "name"},
    {"ctx", "context length for --run", "tokens"},
    {"mode", "mode for --run", "mode"},
    {"warmup", "warm-up steps for --run", "n"},
    {"steps", "measured steps for --run", "n"},
    {"engine", "engine for --run (libtorch, pytorch, …)", "name"},
};

const QCommandLineOption kRun("run", "start a run with the configuration at once");
const QCommandLineOption kScreenshot(
    "screenshot", "save the window here and quit, after --run or once files are open", "png");
const QCommandLineOption kTab("tab", "show this tab first (Breakdown, Timeline, …)", "title");
const QCommandLineOption kCompare("compare", "tick every opened run for the Compare tab");
const QCommandLineOption kPrecisionTools(
    "precision-tools",
    "run the Precision tab's tools at start: nano's dtype flow under bf16 autocast and the "
    "accumulation lab (N = 1000)");
const QCommandLineOption kQuitAfterLoad(
    "quit-after-load",
    "open the files, print what each became and quit: exit 0 when every one opened, 2 when "
    "one did not (or none was named)");

// Without a display Qt aborts deep in its platform plugin: say why instead,
// unless only text (help, version) is asked for. False: exit 2.
bool haveDisplayOrNeedNone(int argc, char** argv) {
    const bool hasDisplay = qEnvironmentVariableIsSet("DISPLAY") ||
                            qEnvironmentVariableIsSet("WAYLAND_DISPLAY") ||
                            qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
    if (hasDisplay) {
        return true;
    }
    if (asksOnlyForText(argc, argv)) {
        qputenv("QT_QPA_PLATFORM", "offscreen");  // help needs no window
        return true;
    }
    std::fprintf(stderr,
                 "stepscope: no display (DISPLAY is not set). Run it on a desktop, under Xvfb, or "
                 "with QT_QPA_PLATFORM=offscreen; scripts/start.sh makes a short headless run "
                 "with the CLI instead.\n");
    return false;
}

void describeApplication() {
    QApplication::setOrganizationName("StepScope");
    QApplication::setApplicationName("StepScope");
    QApplication::setApplicationVersion(STEPSCOPE_VERSION);
    QApplication::setDesktopFileName("stepscope");  // resources/stepscope.desktop
    QApplication::setWindowIcon(stepscope::ui::applicationIcon());
}

void parseCommandLine(QCommandLineParser& parser, const QApplication& app) {
    parser.setApplicationDescription("StepScope: what a Transformer training step costs");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("files", "run files, attention files and sweep folders to open",
                                 "[files...]");
    parser.addOption(kRun);
    for (const RunFieldOption& field : kRunFields) {
        parser.addOption(QCommandLineOption(field.field, field.help, field.valueName));
    }
    parser.addOptions({kScreenshot, kTab, kCompare, kPrecisionTools, kQuitAfterLoad});
    parser.process(app);
}

// Opens the files named on the command line. An exit code where the app
// must stop: --quit-after-load and --screenshot have nobody to read a
// message, so a file that does not open ends them.
std::optional<int> openNamedFiles(stepscope::ui::MainWindow& window,
                                  const QCommandLineParser& parser) {
    const bool quitWhenLoaded = parser.isSet(kQuitAfterLoad);
    if (quitWhenLoaded && parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "stepscope: --quit-after-load: name a file or folder to open\n");
        return 2;
    }
    for (const QString& path : parser.positionalArguments()) {
        const bool opened = window.openRunFile(path);
        if (!opened && (quitWhenLoaded || parser.isSet(kScreenshot))) {
            std::fprintf(stderr, "stepscope: cannot open '%s'\n", qPrintable(path));
            return 2;
        }
        if (quitWhenLoaded) {
            std::printf("opened %s: %zu runs in the run list, the %s tab shown\n", qPrintable(path),
                        window.documents().size(), qPrintable(window.currentTabTitle()));
        }
    }
    return std::nullopt;
}

// --compare, --precision-tools and --tab; an exit code for a tab that is not there.
std::optional<int> arrangeWindow(stepscope::ui::MainWindow& window,
                                 const QCommandLineParser& parser) {
    if (parser.isSet(kCompare)) {
        QList<int> ids;
        for (const auto& document : window.documents()) {
            ids << document.id;
        }
        window.setCompared(ids);
    }
    if (parser.isSet(kPrecisionTools)) {
        window.precisionPage()->inspectDtypes("nano", "bf16");
        window.precisionPage()->accumulate(1000);
    }
    if (parser.isSet(kTab) && !window.selectTab(parser.value(kTab))) {
        std::fprintf(stderr, "stepscope: tab: no tab is called '%s'\n",
                     qPrintable(parser.value(kTab)));
        return 2;
    }
    return std::nullopt;
}

// --run: the panel's configuration with the fields the command line sets,
// started once the event loop runs; with --screenshot, the window saved when
// the run finishes. False, with a message naming the field, for a bad value.
bool startRunAtOnce(stepscope::ui::MainWindow& window, const QCommandLineParser& parser) {
    stepscope::RunConfig config = window.configPanel()->config();
    try {
        for (const RunFieldOption& field : kRunFields) {
            if (parser.isSet(field.field)) {
                stepscope::setConfigField(config, field.field,
                                          parser.value(field.field).toStdString());
            }
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "stepscope: --run: %s\n", error.what());
        return false;
    }
    window.configPanel()->setConfig(config);
    if (parser.isSet(kScreenshot)) {
        const QString path = parser.value(kScreenshot);
        QObject::connect(&window, &stepscope::ui::MainWindow::runFinished, &window,
                         [&window, path] {
                             // Let the last replot land before grabbing.
                             QTimer::singleShot(500, &window, [&window, path] {
                                 window.grab().save(path);
                                 QApplication::exit(0);
                             });
                         });
    }
    QTimer::singleShot(0, &window, [&window] {
        if (!window.startRun()) {
            QApplication::exit(2);
        }
    });
    return true;
}

// Opened files only: grab once they are drawn and the Precision tab's tools are done.
void screenshotWhenDrawn(stepscope::ui::MainWindow& window, const QString& path) {
    auto* poll = new QTimer(&window);
    QObject::connect(poll, &QTimer::timeout, &window, [&window, path, poll] {
        if (window.precisionPage()->busy()) {
            return;
        }
        poll->stop();
        QApplication::exit(window.grab().save(path) ? 0 : 2);
    });
    poll->start(1000);
}

}  // namespace

int main(int argc, char** argv) {
    if (asksForVersion(argc, argv)) {
        // Which LibTorch this binary loaded, and CUDA: no window, no display.
        std::printf("%s\n", stepscope::versionText("stepscope").c_str());
        return 0;
    }
    if (!haveDisplayOrNeedNone(argc, argv)) {
        return 2;
    }
    QApplication app(argc, argv);
    describeApplication();
    QCommandLineParser parser;
    parseCommandLine(parser, app);

    stepscope::ui::MainWindow window;
    // The size it was drawn for, within the screen it opens on: 1400 × 900
    // on a 1366 × 768 laptop put the toolbar's end and the status bar off it.
    window.resize(QSize(1400, 900).boundedTo(window.screen()->availableGeometry().size()));
    window.show();
    if (const auto exitCode = openNamedFiles(window, parser)) {
        return *exitCode;
    }
    if (const auto exitCode = arrangeWindow(window, parser)) {
        return *exitCode;
    }
    if (parser.isSet(kQuitAfterLoad)) {
        return 0;
    }
    if (parser.isSet(kRun) && !startRunAtOnce(window, parser)) {
        return 2;
    }
    if (!parser.isSet(kRun) && parser.isSet(kScreenshot)) {
        screenshotWhenDrawn(window, parser.value(kScreenshot));
    }
    return QApplication::exec();
}
