// Checkpoints written by Python's torch.save (from the independent reference
// model in python/stepscope/model.py) load and give the reference's logits and
// loss; what the C++ side saves, Python reads back.
#include <QtTest/QtTest>

#include <ATen/ops/equal.h>
#include <c10/core/InferenceMode.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>

#include "attention/attention_registry.h"
#include "interop/torch_save_reader.h"
#include "model/checkpoint.h"
#include "model/evaluate.h"
#include "model/transformer.h"
#include "test_support.h"
#include "util/pickle_writer.h"

using namespace stepscope;

class TestCheckpoint : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    double expectedLoss_ = 0;

    QString fixture(const QString& name) const { return dir_.filePath(name); }

    static ModelDims nanoDims() {
        ModelDims dims = *findPreset("nano");
        dims.vocabSize = 97;
        return dims;
    }

    // A torch.save zip archive whose data.pkl is `pickle`, as a hand-made
    // (hostile) file would be.
    QString archiveWithPickle(const QString& name, const std::string& pickle) const {
        const QString path = fixture(name);
        caffe2::serialize::PyTorchStreamWriter writer(path.toStdString());
        writer.writeRecord("data.pkl", pickle.data(), pickle.size());
        writer.writeEndOfFile();
        return path;
    }

    // Lists nested `depth` deep: `depth` empty lists, then APPEND folds each
    // into the one below it.
    static std::string nestedLists(size_t depth) {
        return std::string(depth, ']') + std::string(depth - 1, 'a');
    }

    // A pickle that names a storage ('storage', torch.TYPE, "0", "cpu", 4),
    // its type a str where TYPE is null.
    static std::string storageId(const char* type) {
        PickleWriter w;
        w.protocol();
        w.mark();
        w.text("storage");
        if (type) {
            w.global("torch", type);
        } else {
            w.text("FloatStorage");
        }
        w.text("0");
        w.text("cpu");
        w.integer(4);
        w.op('t');
        w.op('Q');  // BINPERSID
        w.stop();
        return w.bytes();
    }

    static QString readError(const QString& path) {
        try {
            readTensor(path.toStdString());
        } catch (const std::runtime_error& error) {
            return error.what();
        }
        return "(no error)";
    }

    static TransformerLM freshModel() {
        return TransformerLM(nanoDims(), makeAttentionBackend("naive"),
                             at::TensorOptions().dtype(at::kFloat));
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const QString error = test::runPython({test::sourcePath("tools/make_test_checkpoint.py"),
                                               dir_.path(), "--model", "nano", "--vocab", "97",
                                               "--batch", "2", "--seq", "17", "--seed", "3"});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QFile expected(fixture("expected.json"));
        QVERIFY(expected.open(QIODevice::ReadOnly));
        expectedLoss_ = QJsonDocument::fromJson(expected.readAll()).object()["loss"].toDouble();
        QVERIFY(expectedLoss_ > 0);
    }

    void plainStateDictGivesReferenceLogits() {
        auto model = freshModel();
        loadStateDict(*model, readStateDict(fixture("state_dict.pt").toStdString()));
        c10::InferenceMode guard;
        const at::Tensor tokens = readTensor(fixture("tokens.pt").toStdString());
        const at::Tensor reference = readTensor(fixture("logits.pt").toStdString());
        const at::Tensor logits = model->forward(tokens.narrow(1, 0, tokens.size(1) - 1));
        const double error = (logits - reference).abs().max().item<double>();
        QVERIFY2(error < 1e-5, qPrintable(QString("max logit difference %1").arg(error)));
    }

    void trainingCheckpointWithCompilePrefixLoads() {
        const StateDict plain = readStateDict(fixture("state_dict.pt").toStdString());
        for (const char* file : {"training_checkpoint.pt", "model_state_dict_checkpoint.pt"}) {
            const StateDict wrapped = readStateDict(fixture(file).toStdString());
            QCOMPARE(wrapped.size(), plain.size());
            for (const auto& [name, tensor] : plain) {
                QVERIFY2(wrapped.count(name), name.c_str());
                QVERIFY(at::equal(wrapped.at(name), tensor));
            }
        }
    }

    void evalLossMatchesReference() {
        RunConfig config;
        config.model = nanoDims();
        for (const char* file : {"state_dict.pt", "training_checkpoint.pt"}) {
            const EvalResult result = evaluateCheckpoint(config, fixture(file).toStdString(),
                                                         fixture("tokens.pt").toStdString());
            QVERIFY2(
                std::abs(result.loss - expectedLoss_) < 1e-5,
                qPrintable(QString("%1: %2 vs %3").arg(file).arg(result.loss).arg(expectedLoss_)));
            QCOMPARE(result.predictions, int64_t{2 * 16});
        }
    }

    void cppSaveRoundTripsAndPythonReadsIt() {
        auto original = freshModel();
        const QString saved = fixture("saved_by_cpp.pt");
        saveStateDict(*original, saved.toStdString());

        auto reloaded = freshModel();  // different random weights until loaded
        loadStateDict(*reloaded, readStateDict(saved.toStdString()));
        c10::InferenceMode guard;
        const at::Tensor tokens = readTensor(fixture("tokens.pt").toStdString());
        QVERIFY(at::equal(original->forward(tokens), reloaded->forward(tokens)));

        // Python's reference model loads the C++ file and gets the C++ loss.
        RunConfig config;
        config.model = nanoDims();
        const double cppLoss =
            evaluateCheckpoint(config, saved.toStdString(), fixture("tokens.pt").toStdString())
                .loss;
        const QString script =
            QString(
                "import sys, torch; sys.path.insert(0, %1);"
                "from stepscope import model as r;"
                "m = r.from_preset('nano', vocab=97); m.load_state_dict(torch.load(%2));"
                "t = torch.load(%3);"
                "open(%4, 'w').write(repr(r.next_token_loss(m, t).item()))")
                .arg("'" + test::sourcePath("python") + "'", "'" + saved + "'",
                     "'" + fixture("tokens.pt") + "'", "'" + fixture("python_loss.txt") + "'");
        const QString error = test::runPython({"-c", script});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QFile lossFile(fixture("python_loss.txt"));
        QVERIFY(lossFile.open(QIODevice::ReadOnly));
        const double pythonLoss = lossFile.readAll().toDouble();
        QVERIFY2(std::abs(pythonLoss - cppLoss) < 1e-5,
                 qPrintable(QString("%1 vs %2").arg(pythonLoss).arg(cppLoss)));
    }

    void shapeMismatchNamesTheTensorAndLeavesModelUnchanged() {
        ModelDims wider = nanoDims();
        wider.dModel = 128;
        TransformerLM model(wider, makeAttentionBackend("naive"), at::TensorOptions());
        const at::Tensor before = model->named_parameters()["lm_head.weight"].clone();
        try {
            loadStateDict(*model, readStateDict(fixture("state_dict.pt").toStdString()));
            QFAIL("a mismatched checkpoint loaded");
        } catch (const std::runtime_error& error) {
            const QString message = error.what();
            QVERIFY2(message.contains("'token_embeddings.weight' has shape [97, 64], the model "
                                      "expects [97, 128]"),
                     qPrintable(message));
        }
        QVERIFY(at::equal(before, model->named_parameters()["lm_head.weight"]));
    }

    void missingAndUnexpectedTensorsAreNamed() {
        StateDict state = readStateDict(fixture("state_dict.pt").toStdString());
        state.erase("layers.1.ffn.w3.weight");
        state["layers.9.extra.weight"] = state.at("ln_final.weight");
        auto model = freshModel();
        try {
            loadStateDict(*model, state);
            QFAIL("an incomplete checkpoint loaded");
        } catch (const std::runtime_error& error) {
            const QString message = error.what();
            QVERIFY2(message.contains("missing tensor 'layers.1.ffn.w3.weight'"),
                     qPrintable(message));
            QVERIFY2(message.contains("unexpected tensor 'layers.9.extra.weight'"),
                     qPrintable(message));
        }
    }

    void notACheckpointIsAClearError() {
        try {
            readStateDict(fixture("expected.json").toStdString());
            QFAIL("a JSON file read as a checkpoint");
        } catch (const std::runtime_error& error) {
            QVERIFY2(QString(error.what()).contains("is not a torch.save file"), error.what());
        }
        try {
            readStateDict(fixture("tokens.pt").toStdString());
            QFAIL("a tensor read as a state dict");
        } catch (const std::runtime_error& error) {
            QVERIFY2(QString(error.what()).contains("holds a tensor, not a state dict"),
                     error.what());
        }
    }

    // Issue 33: freeing a 200,000-deep value recursively overflowed the stack.
    void deeplyNestedPickleIsRefusedWithoutCrashing() {
        const QString deep = archiveWithPickle("deep.pt", "\x80\x02" + nestedLists(200000) + ".");
        QVERIFY2(readError(deep).contains("nest deeper than 1000 levels"), qPrintable(deep));
        // Built and thrown away before STOP: the reader frees it without recursion.
        const QString dropped =
            archiveWithPickle("dropped.pt", "\x80\x02" + nestedLists(200000) + "0N.");
        QVERIFY2(readError(dropped).contains("holds a None, not a tensor"),
                 qPrintable(readError(dropped)));
        // A chain behind a value the memo shares still counts in full: (Y, X)
        // with Y 600 lists deep and X 600 lists around Y; Y is walked first.
        // Appended piece by piece: GCC 12 warns falsely on the chain of operator+.
        std::string chain = "(";
        chain += nestedLists(600);
        chain += "q\x01";
        chain.append(600, ']');
        chain += "h\x01";
        chain.append(600, 'a');
        chain += "t.";
        QVERIFY2(readError(archiveWithPickle("shared.pt", "\x80\x02" + chain))
                     .contains("nest deeper than 1000 levels"),
                 "a shared chain was not counted");
        const QString shallow =
            archiveWithPickle("shallow.pt", "\x80\x02" + nestedLists(900) + ".");
        QVERIFY2(readError(shallow).contains("holds a list, not a tensor"),
                 qPrintable(readError(shallow)));
    }

    void selfContainingPickleIsRefused() {
        const QString cycle = archiveWithPickle("cycle.pt",
                                                "\x80\x02]q\x01h\x01"
                                                "a.");
        QVERIFY2(readError(cycle).contains("contains itself"), qPrintable(readError(cycle)));
    }

    // Issue 33 item 7: these surfaced as std::vector's range check (or UB).
    void stackUnderflowIsAPlainMessage() {
        for (const char* pickle : {"N(0t.", "2.", "N(2t.", "(0."}) {
            const QString message = readError(archiveWithPickle("underflow.pt", pickle));
            QVERIFY2(message.contains("underflow.pt") && message.contains("empty stack"),
                     qPrintable(message));
        }
    }

    // The reader runs on the pickle machine the snapshot reader runs on; each
    // hostile pickle keeps the message the reader's own opcode loop gave it,
    // and a global is a name, never a call.
    void hostilePicklesKeepTheirMessages_data() {
        QTest::addColumn<QByteArray>("pickle");
        QTest::addColumn<QString>("message");  // what follows the quoted path
        auto row = [](const char* name, const std::string& pickle, const char* message) {
            QTest::newRow(name) << QByteArray(pickle.data(), qsizetype(pickle.size()))
                                << QString(message);
        };
        auto raw = [](std::string_view bytes) { return std::string(bytes); };
        using namespace std::string_view_literals;
        row("truncated", raw("\x80\x02J\x01"sv), ": pickle is truncated");
        row("no STOP", raw("\x80\x02N"sv), ": pickle is truncated");
        row("no MARK", raw("\x80\x02t."sv), ": pickle has no MARK to pop to");
        row("unknown opcode", raw("\x80\x02\xffN."sv),
            ": unsupported pickle opcode 0xff at byte 2");
        row("STOP on empty", raw("\x80\x02."sv), ": pickle ends with an empty stack");
        row("POP past MARK", raw("\x80\x02N(0N."sv),
            ": pickle pops an empty stack (stack underflow at byte 4)");
        row("PUT on empty", raw("\x80\x02q\x00."sv), ": PUT with an empty stack");
        row("APPENDS without a list", raw("\x80\x02(Ne."sv), ": APPEND without a list");
        row("SETITEMS without a dict", raw("\x80\x02(NNu."sv), ": SETITEMS without a dict");
        row("APPEND without a list", raw("\x80\x02Na."sv), ": APPEND without a list");
        row("SETITEM without a dict", raw("\x80\x02NNs."sv), ": SETITEMS without a dict");
        row("STACK_GLOBAL of ints", raw("\x80\x02K\x01K\x02\x93."sv),
            ": STACK_GLOBAL without names");
        row("integer of 9 bytes", raw("\x80\x02\x8a\x09\0\0\0\0\0\0\0\0\x01."sv),
            ": integer too large");
        row("persistent id not a storage", raw("\x80\x02K\x01Q."sv),
            ": unexpected persistent id (not a torch storage)");
        row("storage without a type", storageId(nullptr), ": storage without a type");
        row("storage of an unknown type", storageId("FooStorage"),
            ": unsupported storage type torch.FooStorage");
        row("rebuild with one argument",
            raw("\x80\x02"
                "ctorch._utils\n_rebuild_tensor_v2\n"
                "K\x01\x85R."sv),
            ": torch._utils._rebuild_tensor_v2 called with too few arguments");
        row("rebuild without a storage",
            raw("\x80\x02"
                "ctorch._utils\n_rebuild_tensor_v2\n"
                "(NK\x00))tR."sv),
            ": torch._utils._rebuild_tensor_v2 without a storage and offset");
        row("os.system is not called",
            raw("\x80\x02"
                "cos\nsystem\n"
                "X\x02\0\0\0"
                "ls\x85R."sv),
            " holds a os.system object, not a tensor");
    }
    void hostilePicklesKeepTheirMessages() {
        QFETCH(QByteArray, pickle);
        QFETCH(QString, message);
        const QString path = archiveWithPickle("hostile.pt", pickle.toStdString());
        QCOMPARE(readError(path), "'" + path + "'" + message);
    }

    // The pickle machine reads every protocol's opcodes: the reader's own loop
    // refused a checkpoint saved with pickle_protocol=4 that holds a set or
    // bytes ("unsupported pickle opcode 0x8f"). What it has no use for stands
    // as a placeholder.
    void checkpointOfPickleProtocolFourIsRead() {
        const QString path = fixture("protocol4.pt");
        const QString error = test::runPython(
            {"-c",
             "import sys, torch\n"
             "state = torch.load(sys.argv[1])\n"
             "torch.save({'model': state, 'tags': {'attention', 'mlp'}, 'frozen': frozenset([3]),\n"
             "            'blob': b'\\x00\\x01', 'step': 2**40}, sys.argv[2], pickle_protocol=4)\n",
             fixture("state_dict.pt"), path});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const StateDict plain = readStateDict(fixture("state_dict.pt").toStdString());
        const StateDict read = readStateDict(path.toStdString());
        QCOMPARE(read.size(), plain.size());
        for (const auto& [name, tensor] : plain) {
            QVERIFY2(at::equal(read.at(name), tensor), name.c_str());
        }
        const PyValue root = readTorchSave(path.toStdString());
        std::map<std::string, std::string> types;
        for (const auto& [key, value] : root.asDict()->items) {
            types[*key.asString()] = value.typeName();
        }
        QCOMPARE(types["tags"], std::string("builtins.set object"));
        QCOMPARE(types["frozen"], std::string("builtins.frozenset object"));
        QCOMPARE(types["blob"], std::string("builtins.bytes object"));
        QCOMPARE(types["step"], std::string("int"));
    }

    void tokenTensorWithNoRowsIsAPlainMessage() {
        const QString path = fixture("no_rows.pt");
        const std::vector<char> bytes =
            torch::jit::pickle_save(at::zeros({0, 8}, at::TensorOptions().dtype(at::kLong)));
        std::ofstream(path.toStdString(), std::ios::binary).write(bytes.data(), bytes.size());
        try {
            readTokenBatch(path.toStdString(), nanoDims());
            QFAIL("a (0, 8) token batch was accepted");
        } catch (const std::exception& error) {
            const QString message = error.what();
            QVERIFY2(message.contains("no rows") && !message.contains("Exception raised from"),
                     qPrintable(message));
        }
    }

    // --- issue 45: hostile torch.save files, second round ----------------------

    // Issue 45: a 623-byte tokens file said [1048576, 2049] with strides
    // [0, 0] and eval made 21 GB of it; overlapping views are refused, named.
    void overlappingTensorsAreRefused() {
        const QString error = test::runPython(
            {"-c",
             "import sys, torch\n"
             "out = sys.argv[1]\n"
             "torch.save(torch.zeros(1, dtype=torch.int64).expand(1048576, 2049),\n"
             "           out + '/zero_stride.pt')\n"
             "torch.save({'w': torch.arange(16).as_strided((4, 4), (2, 1))}, out + '/overlap.pt')\n"
             "torch.save(torch.arange(12).reshape(3, 4).t(), out + '/transposed.pt')\n",
             dir_.path()});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QString zero = readError(fixture("zero_stride.pt"));
        QVERIFY2(zero.contains("zero_stride.pt") && zero.contains("the tensor") &&
                     zero.contains("[1048576, 2049]") && zero.contains("strides [0, 0]") &&
                     zero.contains("overlap"),
                 qPrintable(zero));
        try {
            readStateDict(fixture("overlap.pt").toStdString());
            QFAIL("an overlapping view was read");
        } catch (const std::runtime_error& refused) {
            const QString message = refused.what();
            QVERIFY2(message.contains("tensor 'w'") && message.contains("overlap"),
                     qPrintable(message));
        }
        // A 0-d tensor has no dimension to check its offset in: a negative one
        // reached ATen, and its error read "not a torch.save file".
        const QString negative =
            test::runPython({"-c",
                             "import sys, torch\n"
                             "torch.Tensor.storage_offset = lambda self: -1\n"
                             "torch.save({'w': torch.tensor(3.0)}, sys.argv[1])\n",
                             fixture("negative_offset.pt")});
        QVERIFY2(negative.isEmpty(), qPrintable(negative));
        try {
            readStateDict(fixture("negative_offset.pt").toStdString());
            QFAIL("a negative storage offset was read");
        } catch (const std::runtime_error& refused) {
            const QString message = refused.what();
            QVERIFY2(message.contains("tensor 'w'") && message.contains("offset -1: negative"),
                     qPrintable(message));
        }
        // A view that only reorders distinct elements is read as it is.
        const at::Tensor transposed = readTensor(fixture("transposed.pt").toStdString());
        QVERIFY(at::equal(transposed, at::arange(12, at::kLong).reshape({3, 4}).t()));
    }

    // Issue 45: a storage missing from the archive came out as miniz's
    // "internal error", no tensor named.
    void missingStorageNamesItsTensor() {
        const QString error =
            test::runPython({"-c",
                             "import io, sys, torch, zipfile\n"
                             "buffer = io.BytesIO()\n"
                             "torch.save({'w': torch.ones(3), 'v': torch.zeros(2)}, buffer)\n"
                             "with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src, \\\n"
                             "        zipfile.ZipFile(sys.argv[1], 'w') as dst:\n"
                             "    for info in src.infolist():\n"
                             "        if not info.filename.endswith('/data/0'):\n"
                             "            dst.writestr(info, src.read(info.filename))\n",
                             fixture("missing_storage.pt")});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        try {
            readStateDict(fixture("missing_storage.pt").toStdString());
            QFAIL("a tensor without its storage was read");
        } catch (const std::runtime_error& refused) {
            const QString message = refused.what();
            QVERIFY2(message.contains("missing_storage.pt") && message.contains("tensor 'w'") &&
                         message.contains("'data/0' is missing") &&
                         !message.contains("internal error"),
                     qPrintable(message));
        }
    }

    // Issue 45: a 4 MB torch.save whose deflated storage claimed 4 GiB took
    // 4 GiB before failing with a raw c10 error. Built here: a deflated entry
    // whose declared size is patched to 4 GiB.
    void storageBombIsRefusedBeforeInflating() {
        const QString path = fixture("bomb.pt");
        const QString error = test::runPython(
            {"-c",
             "import io, struct, sys, torch, zipfile\n"
             "buffer = io.BytesIO()\n"
             "torch.save(torch.zeros(1024), buffer)\n"
             "with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src, \\\n"
             "        zipfile.ZipFile(sys.argv[1], 'w') as dst:\n"
             "    for info in src.infolist():\n"
             "        data = src.read(info.filename)\n"
             "        if info.filename.endswith('/data/0'):\n"
             "            dst.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)\n"
             "        else:\n"
             "            dst.writestr(info, data)\n"
             "raw = bytearray(open(sys.argv[1], 'rb').read())\n"
             "at = raw.find(b'PK\\x01\\x02')\n"
             "while at >= 0:\n"
             "    name_length = struct.unpack_from('<H', raw, at + 28)[0]\n"
             "    if raw[at + 46:at + 46 + name_length].endswith(b'/data/0'):\n"
             "        struct.pack_into('<I', raw, at + 24, 0xFFFFFFF0)\n"
             "        local = struct.unpack_from('<I', raw, at + 42)[0]\n"
             "        struct.pack_into('<I', raw, local + 22, 0xFFFFFFF0)\n"
             "    at = raw.find(b'PK\\x01\\x02', at + 4)\n"
             "open(sys.argv[1], 'wb').write(raw)\n",
             path});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(QFileInfo(path).size() < 100000);
        const QString message = readError(path);
        QVERIFY2(message.contains("bomb.pt") && message.contains("/data/0'") &&
                     message.contains("4294967280 bytes") && message.contains("deflate") &&
                     !message.contains("enforce fail") && !message.contains("is not a torch.save"),
                 qPrintable(message));
    }

    // A storage that memory would not hold is refused by its declared size,
    // naming the entry, before anything is allocated for it.
    void storageBeyondTheMemoryLeftIsRefused() {
        const QString path = fixture("two_mib.pt");
        QVERIFY2(test::runPython({"-c",
                                  "import sys, torch; torch.save(torch.ones(524288), "
                                  "sys.argv[1])",
                                  path})
                     .isEmpty(),
                 "cannot write two_mib.pt");
        TorchSaveLimits limits;
        limits.memoryRoomBytes = int64_t(1) << 20;
        try {
            readTorchSave(path.toStdString(), limits);
            QFAIL("2 MiB read into 1 MiB");
        } catch (const std::runtime_error& refused) {
            const QString message = refused.what();
            QVERIFY2(message.contains("two_mib.pt") && message.contains("/data/0'") &&
                         message.contains("2.00 MiB") && message.contains("memory"),
                     qPrintable(message));
        }
        limits.memoryRoomBytes = int64_t(64) << 20;
        QCOMPARE(readTorchSave(path.toStdString(), limits).asTensor()->numel(), int64_t(524288));
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
