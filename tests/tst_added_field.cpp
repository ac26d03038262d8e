// A run-configuration field added in one place, and found everywhere a
// config is spoken: the CLI's flag and --help, validation, a sweep axis, the
// run file's key, the configuration panel's row and the Python worker's and
// recorder's parsing. The field is registered here, as a test's own, with the
// declaration a table entry in core/config/run_config_fields.cpp would have
// (docs/developing.md, "Adding a run-configuration field").
#include <QtTest/QtTest>

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QProcess>
#include <QSpinBox>
#include <QTemporaryDir>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/config_flags.h"
#include "config/config_field.h"
#include "pages/config_panel.h"
#include "results/run_file.h"
#include "util/atomic_file.h"

using namespace stepscope;

namespace {

// The one place.
void declareBucketSize() {
    registerConfigField(registeredField("prefetch-depth", int64_t(25))
                            .range(1, 1024)
                            .forEngines(kWorkerEngines)
                            .withHelp("distributed: all-gathers issued ahead of use")
                            .withLabel("Bucket size")
                            .in(FieldSection::Engine)
                            .sweepAxis());
}

int64_t depthOf(const RunConfig& config) {
    return std::get<int64_t>(findConfigField("prefetch-depth")->get(config));
}

// Parses `arguments` as a command made with `lists` would; empty: parsed.
std::string parse(cli::ConfigFlags& flags, bool lists, std::vector<std::string> arguments,
                  std::string* help = nullptr) {
    CLI::App app{"test", "stepscope-cli"};
    flags.addTo(app, lists, cli::kAllFlags | cli::kDataFlags);
    if (help) {
        *help = app.help();
    }
    std::reverse(arguments.begin(), arguments.end());
    try {
        app.parse(arguments);
    } catch (const CLI::ParseError& error) {
        return error.what();
    }
    return {};
}

QString pythonOut(const QStringList& arguments) {
    QProcess python;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("PYTHONPATH", QStringLiteral(STEPSCOPE_SOURCE_DIR "/python"));
    python.setProcessEnvironment(environment);
    python.start(QStringLiteral(STEPSCOPE_PYTHON), arguments);
    if (!python.waitForFinished(120000) || python.exitCode() != 0) {
        return "failed: " + QString::fromUtf8(python.readAllStandardError());
    }
    return QString::fromUtf8(python.readAllStandardOutput()).trimmed();
}

}  // namespace

class TestAddedField : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { declareBucketSize(); }

    void theCliHasItsFlagWithItsHelpAndRange() {
        cli::ConfigFlags flags;
        std::string help;
        QCOMPARE(parse(flags, false, {"--prefetch-depth", "64", "--engine", "pytorch"}, &help),
                 std::string());
        QVERIFY2(help.find("--prefetch-depth") != std::string::npos, help.c_str());
        QVERIFY2(help.find("all-gathers issued ahead of use") != std::string::npos, help.c_str());
        QCOMPARE(depthOf(flags.toRunConfig()), int64_t(64));
        cli::ConfigFlags beyond;
        const std::string refused = parse(beyond, false, {"--prefetch-depth", "4096"});
        QVERIFY2(refused.find("must be ≤ 1024, got 4096") != std::string::npos, refused.c_str());
    }

    void validateHoldsItToItsRangeAndEngines() {
        RunConfig config;
        config.model = *findPreset("nano");
        findConfigField("prefetch-depth")->set(config, int64_t(64));
        const std::string onLibTorch = describe(validate(config, {}));
        QVERIFY2(onLibTorch.find("prefetch-depth: allowed only with --engine pytorch or "
                                 "pytorch-compile, not libtorch") != std::string::npos,
                 onLibTorch.c_str());
        config.engine = Engine::PyTorch;
        findConfigField("prefetch-depth")->set(config, int64_t(0));
        const std::string zero = describe(validate(config, {}));
        QVERIFY2(
            zero.find("prefetch-depth: must be ≥ 1, got 0; allowed: 1..1024") != std::string::npos,
            zero.c_str());
    }

    void aSweepVariesItAndNamesItsFiles() {
        QVERIFY(std::ranges::count(configFieldNames(), "prefetch-depth") == 1);
        cli::ConfigFlags flags;
        QCOMPARE(parse(flags, true, {"--prefetch-depth", "25,50", "--engine", "pytorch"}),
                 std::string());
        const SweepSpec spec = flags.toSweepSpec("unused");
        const std::vector<RunConfig> points = expandSweep(spec);
        QCOMPARE(points.size(), size_t(2));
        QCOMPARE(depthOf(points[1]), int64_t(50));
        QCOMPARE(sweepPointFileName(points[1], spec.axes),
                 std::string("nano_ctx128_train-step_fp32_prefetch-depth50.json"));
    }

    void theRunFileHoldsItsKey() {
        RunResult run;
        run.config.model = *findPreset("nano");
        findConfigField("prefetch-depth")->set(run.config, int64_t(50));
        const std::string text = runResultToJson(run);
        QCOMPARE(nlohmann::json::parse(text)["config"]["prefetch_depth"].get<int64_t>(),
                 int64_t(50));
        QCOMPARE(depthOf(runResultFromJson(text).config), int64_t(50));
        // A file from before the field has its default; a wrong value is named.
        nlohmann::json older = nlohmann::json::parse(text);
        older["config"].erase("prefetch_depth");
        QCOMPARE(depthOf(runResultFromJson(older.dump()).config), int64_t(25));
        older["config"]["prefetch_depth"] = "big";
        QVERIFY_THROWS_EXCEPTION(RunFileError, runResultFromJson(older.dump()));
        try {
            runResultFromJson(older.dump());
        } catch (const RunFileError& error) {
            QCOMPARE(std::string(error.what()),
                     std::string("run.config.prefetch_depth: expected an integer"));
        }
    }

    void thePanelHasARowForIt() {
        ui::ConfigPanel panel(false);
        auto* box = qobject_cast<QSpinBox*>(panel.fieldWidget("prefetch-depth"));
        QVERIFY(box);
        QCOMPARE(box->maximum(), 1024);
        QCOMPARE(box->value(), 25);
        QCOMPARE(box->toolTip(), QString("distributed: all-gathers issued ahead of use"));
        auto* form = panel.findChild<QFormLayout*>();
        auto* label = qobject_cast<QLabel*>(form->labelForField(box->parentWidget()));
        QVERIFY(label);
        QCOMPARE(label->text(), QString("Bucket size"));
        // The libtorch engine does not take it: the row is off and the config has the default.
        QVERIFY(!box->isEnabled());
        panel.engineBox()->setCurrentText("pytorch");
        QVERIFY(box->isEnabled());
        box->setValue(64);
        QCOMPARE(depthOf(panel.config()), int64_t(64));
        RunConfig shown = panel.config();
        findConfigField("prefetch-depth")->set(shown, int64_t(32));
        panel.setConfig(shown);
        QCOMPARE(box->value(), 32);
        panel.engineBox()->setCurrentText("libtorch");
        QCOMPARE(depthOf(panel.config()), int64_t(25));
    }

    // The schema the package reads, with the field in it: the worker parses
    // it into its run spec, and the recorder has its flag.
    void theWorkerAndTheRecorderParseIt() {
        QTemporaryDir dir;
        const QString schema = dir.filePath("config_fields.json");
        writeFileAtomically(schema.toStdString(), configFieldsJson());
        RunResult run;
        run.config.model = *findPreset("nano");
        run.config.engine = Engine::PyTorch;
        findConfigField("prefetch-depth")->set(run.config, int64_t(64));
        const QString config = QString::fromStdString(runConfigToJson(run.config));
        const QString script =
            "import json, sys\n"
            "from stepscope import config_fields, record_flags, run_config\n"
            "fields = config_fields.load(sys.argv[1])\n"
            "spec = run_config.parse_run_config(json.loads(sys.argv[2]), fields)\n"
            "parser = record_flags.build_parser(fields)\n"
            "args = parser.parse_args(['--prefetch-depth', '128'])\n"
            "print(spec.prefetch_depth, args.prefetch_depth, '--prefetch-depth' in "
            "parser.format_help())\n";
        QCOMPARE(pythonOut({"-c", script, schema, config}), QString("64 128 True"));
    }
};

QTEST_MAIN(TestAddedField)
#include "tst_added_field.moc"
