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
#include <string_view>

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

}  // namespace

int main(int argc, char** argv) {
    if (asksForVersion(argc, argv)) {
        // Which LibTorch this binary loaded, and CUDA: no window, no display.
        std::printf("%s\n", stepscope::versionText("stepscope").c_str());
        return 0;
    }
    const bool hasDisplay = qEnvironmentVariableIsSet("DISPLAY") ||
                            qEnvironmentVariableIsSet("WAYLAND_DISPLAY") ||
                            qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
    if (!hasDisplay) {
        if (asksOnlyForText(argc, argv)) {
            qputenv("QT_QPA_PLATFORM", "offscreen");  // help needs no window
        } else {
            // Qt's own message here is an abort deep in its platform plugin.
            std::fprintf(stderr,
                         "stepscope: no display (DISPLAY is not set). Run it on a desktop, under "
                         "Xvfb, or with QT_QPA_PLATFORM=offscreen; scripts/start.sh makes a short "
                         "headless run with the CLI instead.\n");
            return 2;
        }
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("StepScope");
    QApplication::setApplicationName("StepScope");
    QApplication::setApplicationVersion(STEPSCOPE_VERSION);
    QApplication::setDesktopFileName("stepscope");  // resources/stepscope.desktop
    QApplication::setWindowIcon(stepscope::ui::applicationIcon());

    QCommandLineParser parser;
    parser.setApplicationDescription("StepScope: what a Transformer training step costs");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("files", "run files, attention files and sweep folders to open",
                                 "[files...]");
    const QCommandLineOption run("run", "start a run with the configuration at once");
    const QCommandLineOption model("model", "preset for --run", "name");
    const QCommandLineOption context("ctx", "context length for --run", "tokens");
    const QCommandLineOption mode("mode", "mode for --run", "mode");
    const QCommandLineOption warmup("warmup", "warm-up steps for --run", "n");
    const QCommandLineOption steps("steps", "measured steps for --run", "n");
    const QCommandLineOption engine("engine", "engine for --run (libtorch, pytorch, …)", "name");
    const QCommandLineOption screenshot(
        "screenshot", "save the window here and quit, after --run or once files are open", "png");
    const QCommandLineOption tab("tab", "show this tab first (Breakdown, Timeline, …)", "title");
    const QCommandLineOption compare("compare", "tick every opened run for the Compare tab");
    const QCommandLineOption precisionTools(
        "precision-tools",
        "run the Precision tab's tools at start: nano's dtype flow under bf16 autocast and the "
        "accumulation lab (N = 1000)");
    const QCommandLineOption quitAfterLoad(
        "quit-after-load",
        "open the files, print what each became and quit: exit 0 when every one opened, 2 when "
        "one did not (or none was named)");
    parser.addOptions({run, model, context, mode, warmup, steps, engine, screenshot, tab, compare,
                       precisionTools, quitAfterLoad});
    parser.process(app);

    stepscope::ui::MainWindow window;
    // The size it was drawn for, within the screen it opens on: 1400 × 900
    // on a 1366 × 768 laptop put the toolbar's end and the status bar off it.
    window.resize(QSize(1400, 900).boundedTo(window.screen()->availableGeometry().size()));
    window.show();
    const bool quitWhenLoaded = parser.isSet(quitAfterLoad);
    if (quitWhenLoaded && parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "stepscope: --quit-after-load: name a file or folder to open\n");
        return 2;
    }
    for (const QString& path : parser.positionalArguments()) {
        const bool opened = window.openRunFile(path);
        if (quitWhenLoaded) {
            if (!opened) {
                std::fprintf(stderr, "stepscope: cannot open '%s'\n", qPrintable(path));
                return 2;
            }
            std::printf("opened %s: %zu runs in the run list, the %s tab shown\n", qPrintable(path),
                        window.documents().size(), qPrintable(window.currentTabTitle()));
            continue;
        }
        if (!opened && parser.isSet(screenshot)) {
            // Nobody is there to read the message: a script must not save a
            // picture of what it did not mean to show.
            std::fprintf(stderr, "stepscope: cannot open '%s'\n", qPrintable(path));
            return 2;
        }
    }
    if (parser.isSet(compare)) {
        QList<int> ids;
        for (const auto& document : window.documents()) {
            ids << document.id;
        }
        window.setCompared(ids);
    }
    if (parser.isSet(precisionTools)) {
        window.precisionPage()->inspectDtypes("nano", "bf16");
        window.precisionPage()->accumulate(1000);
    }
    if (parser.isSet(tab) && !window.selectTab(parser.value(tab))) {
        std::fprintf(stderr, "stepscope: tab: no tab is called '%s'\n",
                     qPrintable(parser.value(tab)));
        return 2;
    }
    if (quitWhenLoaded) {
        return 0;
    }
    if (parser.isSet(run)) {
        stepscope::RunConfig config = window.configPanel()->config();
        if (parser.isSet(model)) {
            if (const auto preset = stepscope::findPreset(parser.value(model).toStdString())) {
                config.model = *preset;
                config.model.vocabSize = 10000;
            }
        }
        if (parser.isSet(context)) {
            config.contextLength = parser.value(context).toLongLong();
        }
        if (parser.isSet(mode)) {
            config.mode =
                stepscope::parseRunMode(parser.value(mode).toStdString()).value_or(config.mode);
        }
        if (parser.isSet(warmup)) {
            config.warmupSteps = parser.value(warmup).toInt();
        }
        if (parser.isSet(steps)) {
            config.measuredSteps = parser.value(steps).toInt();
        }
        if (parser.isSet(engine)) {
            config.engine =
                stepscope::parseEngine(parser.value(engine).toStdString()).value_or(config.engine);
        }
        window.configPanel()->setConfig(config);
        if (parser.isSet(screenshot)) {
            const QString path = parser.value(screenshot);
            QObject::connect(&window, &stepscope::ui::MainWindow::runFinished, &window, [&] {
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
    }
    if (!parser.isSet(run) && parser.isSet(screenshot)) {
        // Opened files only: grab once they are drawn and the Precision
        // tab's tools are done.
        const QString path = parser.value(screenshot);
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
    return QApplication::exec();
}
