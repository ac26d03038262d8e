// The welcome page, the example runs and the app's icons, driven as a user
// would (QT_QPA_PLATFORM=offscreen): the examples are listed, clicking one
// opens it in its tab with the file's own values, Help → Examples opens the
// same, recent files are listed and open, New run leads to the form.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QAction>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QSettings>
#include <QStandardItemModel>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolBar>

#include "cli_run.h"
#include "controllers/file_opener.h"
#include "main_window.h"
#include "pages/attention_page.h"
#include "pages/config_panel.h"
#include "pages/example_runs.h"
#include "pages/precision_page.h"
#include "pages/welcome_page.h"
#include "results/attention_file.h"
#include "results/collective_file.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "widgets/link_card.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

// The run files a sweep's folder holds.
int runFilesIn(const QString& directory) {
    int count = 0;
    for (const QFileInfo& file : QDir(directory).entryInfoList({"*.json"}, QDir::Files)) {
        QFile f(file.absoluteFilePath());
        count += f.open(QIODevice::ReadOnly) && f.read(64 * 1024).contains("\"stepscope-run\"");
    }
    return count;
}

// The same run, as the file holds it and as the window shows it.
void compareWithFile(const RunDocument& document, const QString& path) {
    const RunResult stored = readRunFile(path.toStdString());
    QCOMPARE(document.path, path);
    QCOMPARE(document.result.config.model.dModel, stored.config.model.dModel);
    QCOMPARE(document.result.config.contextLength, stored.config.contextLength);
    QCOMPARE(int(document.result.config.mode), int(stored.config.mode));
    QCOMPARE(document.result.steps.size(), stored.steps.size());
    for (size_t i = 0; i < stored.steps.size(); ++i) {
        QCOMPARE(document.result.steps[i].totalMs, stored.steps[i].totalMs);
    }
    QCOMPARE(document.result.summary.total.mean, stored.summary.total.mean);
    QCOMPARE(document.result.operators.size(), stored.operators.size());
    QCOMPARE(document.result.memory.size(), stored.memory.size());
}

QAction* menuAction(QMenuBar* bar, const QString& text) {
    for (QAction* action : bar->actions()) {
        if (action->text().remove('&') == text) {
            return action;
        }
    }
    return nullptr;
}

}  // namespace

class TestWelcome : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           dir_.filePath("settings"));
        QCoreApplication::setOrganizationName("StepScopeWelcomeTest");
        QCoreApplication::setApplicationName("StepScopeWelcomeTest");
        qunsetenv("STEPSCOPE_EXAMPLES");
    }

    void init() {
        QSettings().clear();
        qunsetenv("STEPSCOPE_EXAMPLES");
    }

    // A build run from its folder finds the source tree's examples; every
    // one the index lists is there, and the page offers each.
    void examplesFoundInTheSourceTree() {
        QStringList searched;
        const QString directory = examplesDirectory(&searched);
        QVERIFY2(directory.endsWith("resources/examples"), qPrintable(searched.join(", ")));
        const QList<ExampleRun> examples = readExampleRuns(directory);
        QFile index(QDir(directory).filePath("examples.json"));
        QVERIFY(index.open(QIODevice::ReadOnly));
        const QJsonArray listed =
            QJsonDocument::fromJson(index.readAll()).object().value("examples").toArray();
        QCOMPARE(examples.size(), listed.size());  // no entry without its file
        QVERIFY(examples.size() >= 4);             // a run, an attention grid, a sweep, dtypes

        MainWindow window;
        window.show();
        QCOMPARE(window.currentTab(), window.welcomePage());  // first start: nothing open
        const QList<LinkCard*> buttons = window.welcomePage()->exampleButtons();
        QCOMPARE(buttons.size(), examples.size());
        for (int i = 0; i < examples.size(); ++i) {
            QCOMPARE(buttons[i]->text(), examples[i].title);
            QCOMPARE(buttons[i]->description(), examples[i].description);
            QVERIFY(buttons[i]->isVisible());
        }
    }

    // Each example's whole description shows, on the smallest common laptop
    // screen and in a narrow window: the card is as tall as its wrapped text.
    void examplesShowTheirWholeDescription_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("narrow") << QSize(900, 700);
    }
    void examplesShowTheirWholeDescription() {
        QFETCH(QSize, size);
        MainWindow window;
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QList<LinkCard*> cards = window.welcomePage()->exampleButtons();
        QVERIFY(cards.size() >= 4);
        for (LinkCard* card : cards) {
            const QLabel* text = card->descriptionLabel();
            const int needed = text->heightForWidth(text->width());
            QVERIFY2(text->height() >= needed && card->rect().contains(text->geometry()),
                     qPrintable(QString("%1: %2 px shown of %3 needed")
                                    .arg(card->text())
                                    .arg(text->height())
                                    .arg(needed)));
        }
    }

    // Clicking an example opens it in the tab it names, with the values its
    // file holds.
    void clickingAnExampleOpensIt_data() {
        QTest::addColumn<int>("index");
        const QList<ExampleRun> examples = readExampleRuns(examplesDirectory());
        for (int i = 0; i < examples.size(); ++i) {
            QTest::newRow(qPrintable(QFileInfo(examples[i].path).fileName())) << i;
        }
    }
    void clickingAnExampleOpensIt() {
        QFETCH(int, index);
        const ExampleRun example = readExampleRuns(examplesDirectory())[index];
        MainWindow window;
        window.show();
        LinkCard* button = window.welcomePage()->exampleButtons()[index];
        QSignalSpy opened(window.fileOpener(), &FileOpener::finished);  // read off the UI thread
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(opened.wait(30000));
        QCOMPARE(window.currentTabTitle(), example.tab);
        QCOMPARE(window.lastErrorDialog(), nullptr);
        const QFileInfo info(example.path);
        if (info.isDir()) {  // a sweep's folder: each point a run
            QCOMPARE(window.watchedSweepDirectory(), info.absoluteFilePath());
            QCOMPARE(int(window.documents().size()), runFilesIn(example.path));
            QVERIFY(window.documents().size() >= 2);
            for (const RunDocument& document : window.documents()) {
                compareWithFile(document, document.path);
            }
            return;
        }
        QFile file(example.path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        if (text.contains("\"stepscope-run\"")) {
            QCOMPARE(int(window.documents().size()), 1);
            QVERIFY(window.currentDocument() != nullptr);
            compareWithFile(*window.currentDocument(), example.path);
            const RunResult& result = window.currentDocument()->result;
            if (result.distributed) {  // a run on ranks: each a row of the Ranks tab
                QCOMPARE(window.ranksView()->ranksModel()->rowCount(),
                         int(result.distributed->ranks.size()));
                QVERIFY(result.distributed->ranks.size() >= 2);
                return;
            }
            QVERIFY(!result.operators.empty());  // traced: ops
            QVERIFY(!result.memory.empty());     // and memory
        } else if (text.contains("\"stepscope-collective\"")) {
            const CollectiveFile stored = readCollectiveFile(example.path.toStdString());
            QCOMPARE(window.collectivePage()->rowsModel()->rowCount(), int(stored.rows.size()));
            QVERIFY(window.collectivePage()->plot()->graphCount() >= 2);  // a line per rank count
            QVERIFY(window.documents().empty());
        } else if (text.contains("\"stepscope-attention\"")) {
            const auto stored = readAttentionFile(example.path.toStdString());
            QCOMPARE(window.attentionPage()->points().size(), stored.points.size());
            QVERIFY(stored.points.size() >= 4);
            QVERIFY(window.documents().empty());
        } else {  // a dtype flow
            const QJsonArray rows = QJsonDocument::fromJson(text).array();
            QVERIFY(!rows.isEmpty());
            const QStandardItemModel* model = window.precisionPage()->dtypeModel();
            QCOMPARE(model->rowCount(), rows.size());
            for (int row = 0; row < rows.size(); ++row) {
                const QJsonObject expected = rows[row].toObject();
                QCOMPARE(model->item(row, 0)->text(), expected.value("what").toString());
                QCOMPARE(model->item(row, 2)->text(), expected.value("dtype").toString());
            }
        }
    }

    // STEPSCOPE_EXAMPLES points elsewhere; an entry whose file is missing is
    // not offered.
    void examplesFromTheEnvironment() {
        QTemporaryDir examples;
        const QString run = examples.filePath("tiny-run.json");
        QCOMPARE(test::cliRun(run, {"--ops"}), QString());
        QJsonArray entries;
        entries.append(QJsonObject{{"path", "tiny-run.json"},
                                   {"title", "A run made here"},
                                   {"description", "nano with operators"},
                                   {"tab", "Breakdown"}});
        entries.append(QJsonObject{{"path", "missing.json"}, {"title", "Gone"}, {"tab", "Memory"}});
        writeFileAtomically(
            examples.filePath("examples.json").toStdString(),
            QJsonDocument(QJsonObject{{"examples", entries}}).toJson().toStdString());
        qputenv("STEPSCOPE_EXAMPLES", examples.path().toUtf8());

        MainWindow window;
        window.show();
        const QList<LinkCard*> buttons = window.welcomePage()->exampleButtons();
        QCOMPARE(buttons.size(), 1);
        QCOMPARE(buttons[0]->text(), QString("A run made here"));
        QSignalSpy opened(window.fileOpener(), &FileOpener::finished);
        buttons[0]->click();
        QVERIFY(opened.wait(30000));
        QCOMPARE(window.currentTabTitle(), QString("Breakdown"));
        QCOMPARE(int(window.documents().size()), 1);
        compareWithFile(window.documents().front(), QFileInfo(run).absoluteFilePath());
    }

    // Help → Examples lists the same examples and opens them; its last entry
    // brings the welcome page back.
    void helpExamplesMenu() {
        const QList<ExampleRun> examples = readExampleRuns(examplesDirectory());
        MainWindow window;
        window.show();
        QAction* help = menuAction(window.menuBar(), "Help");
        QVERIFY(help && help->menu());
        QMenu* menu = window.examplesMenu();
        QVERIFY(help->menu()->actions().contains(menu->menuAction()));
        QCOMPARE(menu->menuAction()->text().remove('&'), QString("Examples"));
        QList<QAction*> entries;
        for (QAction* action : menu->actions()) {
            if (!action->isSeparator()) {
                entries << action;
            }
        }
        QCOMPARE(entries.size(), examples.size() + 1);
        for (int i = 0; i < examples.size(); ++i) {
            QCOMPARE(entries[i]->text(), examples[i].title);
        }
        // The first example through the menu: the same as its button.
        QSignalSpy opened(window.fileOpener(), &FileOpener::finished);
        entries[0]->trigger();
        QVERIFY(opened.wait(30000));
        QCOMPARE(window.currentTabTitle(), examples[0].tab);
        entries.last()->trigger();
        QCOMPARE(window.currentTab(), window.welcomePage());
    }

    // What was opened before is listed, newest first, and opens on a click.
    void recentFilesListedAndOpen() {
        const QString first = dir_.filePath("first.json");
        const QString second = dir_.filePath("second.json");
        QCOMPARE(test::cliRun(first), QString());
        QCOMPARE(test::cliRun(second, {}, 2), QString());
        {
            MainWindow window;
            window.show();
            QVERIFY(window.openRunFile(first));
            QVERIFY(window.openRunFile(second));
            QCOMPARE(window.welcomePage()->recentList()->count(), 2);
            window.close();  // keeps the list for the next start
        }
        MainWindow window;
        window.show();
        QCOMPARE(window.currentTab(), window.welcomePage());
        QListWidget* recent = window.welcomePage()->recentList();
        QVERIFY(recent->isVisible());
        QCOMPARE(recent->count(), 2);
        QVERIFY(recent->item(0)->text().startsWith("second.json"));
        QCOMPARE(recent->item(0)->toolTip(), QFileInfo(second).absoluteFilePath());
        QVERIFY(recent->item(1)->text().startsWith("first.json"));
        const QRect rect = recent->visualItemRect(recent->item(1));
        QSignalSpy opened(window.fileOpener(), &FileOpener::finished);
        QTest::mouseClick(recent->viewport(), Qt::LeftButton, {}, rect.center());
        QVERIFY(opened.wait(30000));
        QCOMPARE(int(window.documents().size()), 1);
        compareWithFile(window.documents().front(), QFileInfo(first).absoluteFilePath());
        QCOMPARE(window.currentTabTitle(), QString("Step timing"));
    }

    // New run leads to the configuration form, its first field focused.
    void newRunFocusesTheForm() {
        MainWindow window;
        window.show();
        QTest::mouseClick(window.welcomePage()->newRunButton(), Qt::LeftButton);
        QCOMPARE(window.currentTabTitle(), QString("Step timing"));
        QWidget* focused = window.focusWidget();
        QVERIFY(focused);
        QVERIFY(window.configPanel()->isAncestorOf(focused));
        QVERIFY(window.documents().empty());  // nothing ran
    }

    // The icons drawn for StepScope render (Qt's SVG engine is there): the
    // window's, every tab's and the toolbar's.
    void iconsRender() {
        MainWindow window;
        window.show();
        QVERIFY(!window.windowIcon().pixmap(64, 64).isNull());
        QVERIFY(!window.windowIcon().pixmap(16, 16).isNull());
        auto* tabs = window.findChild<QTabWidget*>();
        QVERIFY(tabs);
        for (int i = 0; i < tabs->count(); ++i) {
            QVERIFY2(!tabs->tabIcon(i).pixmap(16, 16).isNull(), qPrintable(tabs->tabText(i)));
        }
        auto* toolbar = window.findChild<QToolBar*>("mainToolBar");
        QVERIFY(toolbar && toolbar->isVisible());
        QStringList texts;
        for (QAction* action : toolbar->actions()) {
            if (!action->isSeparator()) {
                texts << action->text().remove('&');
                QVERIFY2(!action->icon().pixmap(24, 24).isNull(), qPrintable(action->text()));
            }
        }
        for (const char* expected : {"Open…", "Run", "Stop", "Export", "Welcome"}) {
            QVERIFY2(texts.contains(expected), qPrintable(texts.join(", ")));
        }
        // A pixel of the run icon is its green, not a blank.
        const QImage run = QIcon(":/icons/run.svg").pixmap(16, 16).toImage();
        QVERIFY(QColor(run.pixel(7, 8)).green() > QColor(run.pixel(7, 8)).red());
    }
};

QTEST_MAIN(TestWelcome)
#include "tst_welcome.moc"
