// The config fields' table (config/config_field.h): each field declared once,
// with what every reader needs of it; and the Python package's copy of it
// (python/stepscope/config_fields.json) equal to it, so that the worker and
// the recorder parse what the C++ side writes.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>
#include <set>

#include "config/config_field.h"
#include "results/run_file.h"
#include "test_support.h"
#include "util/atomic_file.h"

using namespace stepscope;

namespace {

// A value of `field` other than its default, as the CLI spells it.
std::string otherText(const ConfigField& field) {
    const std::string initial = field.defaultText();
    switch (field.type) {
        case FieldType::Switch:
            return initial == "on" ? "off" : "on";
        case FieldType::Integer:
            return std::to_string(std::max<int64_t>(field.min, 0) + 3);
        case FieldType::Choice:
            for (const auto& value : field.values) {
                if (value != initial) {
                    return value;
                }
            }
            return field.name == "activation-checkpoint" ? "2" : "sdpa";
        case FieldType::Model:
            return "tiny";
        case FieldType::Number:
            return "0.5";
        default:
            return field.type == FieldType::Path ? "/data/file.pt" : "module:name";
    }
}

}  // namespace

class TestConfigFields : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The package cannot build the table, so it reads this copy: a field
    // added or changed here and not there fails until the file is written
    // again (STEPSCOPE_WRITE_CONFIG_FIELDS=1 tst_config_fields).
    void thePythonPackageHasTheTable() {
        const std::string path =
            test::sourcePath("python/stepscope/config_fields.json").toStdString();
        const std::string table = configFieldsJson();
        if (qEnvironmentVariableIsSet("STEPSCOPE_WRITE_CONFIG_FIELDS")) {
            writeFileAtomically(path, table);
        }
        std::string held;
        try {
            held = readFile(path);
        } catch (const std::exception& error) {
            QFAIL(error.what());
        }
        QVERIFY2(held == table,
                 "python/stepscope/config_fields.json is not the table of "
                 "core/config/run_config_fields.cpp; write it again with "
                 "STEPSCOPE_WRITE_CONFIG_FIELDS=1 build/default/tests/tst_config_fields");
    }

    void namesAndKeysAreEachTheirFieldsAlone() {
        std::set<std::string> names, keys;
        for (const ConfigField& field : configFields()) {
            QVERIFY2(names.insert(field.name).second, field.name.c_str());
            QVERIFY2(field.key.empty() || keys.insert(field.key).second, field.key.c_str());
            QVERIFY2(!field.help.empty(), field.name.c_str());
            QVERIFY2(field.get && field.set && field.text && field.setText, field.name.c_str());
            QVERIFY2(field.engines != 0 && (field.engines & ~kAllEngines) == 0, field.name.c_str());
        }
        // The sweep fields are configFieldNames(), in the table's order.
        std::vector<std::string> sweep;
        for (const ConfigField& field : configFields()) {
            if (field.sweep) {
                sweep.push_back(field.name);
            }
        }
        QVERIFY(sweep == configFieldNames());
    }

    // Every field's text goes into a config and comes out as it went in, its
    // default as well as another value.
    void eachFieldsTextComesBackAsItWent() {
        for (const ConfigField& field : configFields()) {
            for (const std::string& text : {field.defaultText(), otherText(field)}) {
                if (field.type == FieldType::Model && text == field.defaultText()) {
                    continue;  // "custom": dims, not a preset a sweep can name
                }
                RunConfig config;
                setConfigField(config, field.name, text);
                QCOMPARE(configFieldText(config, field.name), text);
            }
        }
        RunConfig config;
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, setConfigField(config, "no-such", "1"));
    }

    // The run file holds every field with a key, and reads back what it holds.
    void theRunFileHoldsEveryKeyedField() {
        RunConfig config = test::tinyCpuConfig();
        for (const ConfigField& field : configFields()) {
            if (field.type != FieldType::Model && !field.key.empty()) {
                setConfigField(config, field.name, otherText(field));
            }
        }
        const nlohmann::json written = nlohmann::json::parse(runConfigToJson(config));
        for (const ConfigField& field : configFields()) {
            QCOMPARE(written.contains(field.key), !field.key.empty());
        }
        QCOMPARE(runConfigToJson(runConfigFromJson(runConfigToJson(config))),
                 runConfigToJson(config));
    }

    // What validate() says of a value an engine does not take is the table's:
    // each such field names itself, and an engine that takes it is quiet.
    void theDeclaredEnginesAreWhatValidateHolds() {
        for (const ConfigField& field : configFields()) {
            // The machine's Python is carried whatever the engine.
            if (field.engines == kAllEngines || field.name == "python") {
                continue;
            }
            for (const std::string& engine : engineNames()) {
                RunConfig config = test::tinyCpuConfig();
                setConfigField(config, "engine", engine);
                setConfigField(config, field.name, otherText(field));
                bool named = false;
                for (const auto& error : validate(config, {})) {
                    named = named || (error.field == field.name &&
                                      error.message.find("engine") != std::string::npos);
                }
                const bool taken = field.takenBy(*parseEngine(engine));
                QVERIFY2(named != taken, (field.name + " with " + engine).c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestConfigFields)
#include "tst_config_fields.moc"
