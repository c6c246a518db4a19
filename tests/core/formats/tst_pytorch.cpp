// PyTorch torch.save files against the corpus PyTorch itself wrote
// (conformance/pytorch): every valid file reads as torch.load reads it —
// tensor list, views, storages, the object tree, the imports, every value
// bit for bit — and every damaged or hostile file gets its verdict, with
// nothing run.
#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/filesource.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

using namespace ckptscope;
using nlohmann::json;

namespace {

QString pytorchDir() {
    const QString dir = testsupport::conformanceDir();
    return dir.isEmpty() ? dir : dir + QStringLiteral("/pytorch");
}

json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return json();
    return json::parse(f.readAll().toStdString());
}

QByteArray readBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// torch's dtype names and ours.
std::string torchDtype(Dtype d) {
    switch (d) {
    case Dtype::F32:
        return "float32";
    case Dtype::F64:
        return "float64";
    case Dtype::F16:
        return "float16";
    case Dtype::BF16:
        return "bfloat16";
    case Dtype::I8:
        return "int8";
    case Dtype::I16:
        return "int16";
    case Dtype::I32:
        return "int32";
    case Dtype::I64:
        return "int64";
    case Dtype::U8:
        return "uint8";
    case Dtype::Bool:
        return "bool";
    case Dtype::C64:
        return "complex64";
    case Dtype::C128:
        return "complex128";
    default:
        return dtypeName(d);
    }
}

struct Opened {
    std::shared_ptr<const ByteSource> source;
    FormatIndex index;
};

Opened openPytorch(const QString& path) {
    Opened o;
    o.source = openByteSource(path.toStdString());
    const FormatModule& m = detectFormat(*o.source);
    if (m.format != Format::Pytorch)
        throw std::runtime_error(std::string("detected as ") + m.name);
    o.index = m.open(*o.source);
    return o;
}

std::string objectsJson(const FormatIndex& index) {
    std::vector<std::string> names;
    for (const TensorEntry& t : index.tensors)
        names.push_back(t.name);
    std::string out;
    JsonStreamWriter w(out);
    writeObjectJson(w, index.objects, names);
    w.flush();
    return out;
}

// The strides torch reports: the view's own, or C order's for a contiguous one.
std::vector<int64_t> strides(const TensorEntry& t, const TensorView& v) {
    if (!v.strides.empty())
        return v.strides;
    std::vector<int64_t> s(t.shape.size());
    int64_t step = 1;
    for (size_t i = t.shape.size(); i-- > 0;) {
        s[i] = step;
        step *= int64_t(std::max<uint64_t>(t.shape[i], 1));
    }
    return s;
}

bool sameStrides(const TensorEntry& t, const std::vector<int64_t>& ours, const json& theirs) {
    for (size_t i = 0; i < t.shape.size(); ++i)
        if (t.shape[i] > 1 && ours[i] != theirs[i].get<int64_t>())
            return false; // a dimension of one element may have any stride
    return ours.size() == theirs.size();
}

std::string warningsText(const FormatIndex& index) {
    std::string all;
    for (const IndexWarning& w : index.warnings)
        all += w.message + "\n";
    return all;
}

} // namespace

class TestPytorch : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void validFile_data();
    void validFile();
    void invalidFile_data();
    void invalidFile();
    void maliciousPayloadsNeverRun();
    void trainerOptimizerIsNamedFromTheModelBeside();
    void lightningOptimizerIsNamedFromItsStateDict();
    void aModelThatDoesNotFitLeavesIdsAndWarns();
    void shardedModelIsOneModel();
    void tiedWeightStoredOnceIsNotADifference();
};

void TestPytorch::validFile_data() {
    QTest::addColumn<QString>("expected");
    if (pytorchDir().isEmpty())
        return;
    const QStringList files = QDir(pytorchDir() + QStringLiteral("/expected"))
                                  .entryList({QStringLiteral("*.json")}, QDir::Files);
    for (const QString& f : files)
        QTest::newRow(qPrintable(f)) << f;
}

void TestPytorch::validFile() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, expected);
    const QString dir = pytorchDir();
    const json e = readJson(dir + QStringLiteral("/expected/") + expected);
    const QString path =
        dir + QStringLiteral("/valid/") + QString::fromStdString(e["file"].get<std::string>());
    Opened o;
    try {
        o = openPytorch(path);
    } catch (const std::exception& ex) {
        QFAIL(ex.what());
    }
    const FormatIndex& index = o.index;
    // Storages: key, dtype, bytes and where their first byte lies.
    QCOMPARE(index.storages.size(), e["storages"].size());
    for (const json& s : e["storages"]) {
        const auto it = std::find_if(index.storages.begin(), index.storages.end(),
                                     [&](const TensorStorage& t) { return t.key == s["key"]; });
        QVERIFY2(it != index.storages.end(), s["key"].get<std::string>().c_str());
        QCOMPARE(torchDtype(it->dtype), s["dtype"].get<std::string>());
        QCOMPARE(it->bytes, s["nbytes"].get<uint64_t>());
        QCOMPARE(it->offset, s["offset"].get<uint64_t>());
    }
    // Tensors in the walk's order, each a view with its values.
    const json& tensors = e["tensors"];
    QCOMPARE(index.tensors.size(), tensors.size());
    QCOMPARE(index.traits.size(), tensors.size());
    const TensorSources sources{*o.source, index};
    for (size_t i = 0; i < tensors.size(); ++i) {
        const json& x = tensors[i];
        const TensorEntry& t = index.tensors[i];
        const std::string where = x["name"].get<std::string>();
        QCOMPARE(t.name, x["name"].get<std::string>());
        QCOMPARE(torchDtype(t.dtype), x["dtype"].get<std::string>());
        QVERIFY2(t.shape == x["shape"].get<std::vector<uint64_t>>(), where.c_str());
        QVERIFY2(t.view < index.views.size(), where.c_str());
        const TensorView& v = index.views[t.view];
        QVERIFY2(sameStrides(t, strides(t, v), x["stride"]), where.c_str());
        QCOMPARE(v.elementOffset, x["storage_offset"].get<uint64_t>());
        QCOMPARE(index.storages[v.storage].key, x["storage_key"].get<std::string>());
        const TensorTraits& traits = index.traits[i];
        QCOMPARE(traits.requiresGrad, x["requires_grad"].get<bool>());
        QCOMPARE(traits.isParameter, x["is_parameter"].get<bool>());
        if (x.contains("same_as")) {
            QVERIFY2(traits.sameAs < index.tensors.size(), where.c_str());
            QCOMPARE(index.tensors[traits.sameAs].name, x["same_as"].get<std::string>());
        } else {
            QVERIFY2(traits.sameAs == UINT32_MAX, where.c_str());
        }
        const QByteArray want = readBytes(dir + QStringLiteral("/expected/") +
                                          QString::fromStdString(x["values"].get<std::string>()));
        if (isComplex(t.dtype)) // read as (real, imaginary) pairs, never as one number each
            QVERIFY_THROWS_EXCEPTION(CheckpointError, {
                float f;
                readTensorValues(sources, t, 0, std::min<uint64_t>(t.dataLen, 1), &f);
            });
        QCOMPARE(uint64_t(want.size()), t.dataLen * dtypeSize(t.dtype));
        QByteArray got(want.size(), '\0');
        if (t.dataLen > 0)
            readRawValues(sources, t, 0, t.dataLen, got.data());
        QVERIFY2(got == want, (where + ": values differ").c_str());
        if (isComplex(t.dtype) && t.dataLen > 0) { // the pairs in double, exactly
            std::vector<double> pairs(size_t(2 * t.dataLen));
            readComplexValues(sources, t, 0, t.dataLen, pairs.data());
            for (size_t k = 0; k < pairs.size(); ++k) {
                QByteArray part(int(dtypeSize(t.dtype) / 2), '\0');
                if (t.dtype == Dtype::C64) {
                    const float f = float(pairs[k]);
                    std::memcpy(part.data(), &f, 4);
                } else {
                    std::memcpy(part.data(), &pairs[k], 8);
                }
                QVERIFY2(part == want.mid(int(k) * part.size(), part.size()), where.c_str());
            }
        }
    }
    // The object tree exactly as the corpus renders it.
    const json objects = json::parse(objectsJson(index));
    QVERIFY2(objects == e["objects"],
             (objects.dump().substr(0, 600) + "\n  expected " + e["objects"].dump().substr(0, 600))
                 .c_str());
    // The imports by name, none of them unsafe.
    std::vector<std::string> names;
    for (const PickleImport& imp : index.imports) {
        names.push_back(imp.name);
        QVERIFY2(imp.risk != ImportRisk::Unsafe, imp.name.c_str());
        QVERIFY2(imp.count > 0, imp.name.c_str());
    }
    QVERIFY(names == e["imports"].get<std::vector<std::string>>());
    // No warning but the unknown imports (outside the allow-list and not an enum member).
    for (const IndexWarning& w : index.warnings)
        QVERIFY2(w.message.rfind("unknown import ", 0) == 0 ||
                     w.message.rfind("one of 2 shards", 0) == 0, // a shard opened alone
                 w.message.c_str());
}

void TestPytorch::invalidFile_data() {
    QTest::addColumn<QString>("file");
    if (pytorchDir().isEmpty())
        return;
    const json verdicts = readJson(pytorchDir() + QStringLiteral("/invalid/EXPECTED.json"));
    for (auto it = verdicts.begin(); it != verdicts.end(); ++it)
        QTest::newRow(it.key().c_str()) << QString::fromStdString(it.key());
}

void TestPytorch::invalidFile() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    const json v =
        readJson(pytorchDir() + QStringLiteral("/invalid/EXPECTED.json"))[file.toStdString()];
    const QString path = pytorchDir() + QStringLiteral("/invalid/") + file;
    const std::string expect = v["expect"], contains = v["contains"];
    if (expect == "error") {
        try {
            openPytorch(path);
        } catch (const CheckpointError& e) {
            QVERIFY2(std::string(e.what()).find(contains) != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find(path.toStdString()) == 0,
                     e.what()); // names the file
            return;
        } catch (const OpenError& e) {
            QVERIFY2(std::string(e.what()).find(contains) != std::string::npos, e.what());
            return;
        }
        QFAIL("opened; expected an error");
    }
    Opened o;
    try {
        o = openPytorch(path);
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
    const std::string warnings = warningsText(o.index);
    if (expect == "ok-with-warning")
        QVERIFY2(warnings.find(contains) != std::string::npos, warnings.c_str());
    std::vector<std::string> names;
    for (const TensorEntry& t : o.index.tensors)
        names.push_back(t.name);
    for (const json& t : v["tensors"])
        QVERIFY2(std::find(names.begin(), names.end(), t.get<std::string>()) != names.end(),
                 t.get<std::string>().c_str());
    for (const json& u : v.value("unsafe_imports", json::array())) {
        const auto it = std::find_if(o.index.imports.begin(), o.index.imports.end(),
                                     [&](const PickleImport& i) { return i.name == u; });
        QVERIFY2(it != o.index.imports.end() && it->risk == ImportRisk::Unsafe,
                 u.get<std::string>().c_str());
    }
    for (const json& a : v.value("argument_strings", json::array()))
        QVERIFY2(warnings.find("\"" + a.get<std::string>() + "\"") != std::string::npos,
                 (a.get<std::string>() + " not in: " + warnings).c_str());
    if (v.contains("values_le_hex")) {
        const TensorSources sources{*o.source, o.index};
        for (auto it = v["values_le_hex"].begin(); it != v["values_le_hex"].end(); ++it) {
            const auto t = std::find(names.begin(), names.end(), it.key());
            QVERIFY(t != names.end());
            const TensorEntry& entry = o.index.tensors[size_t(t - names.begin())];
            std::vector<float> values(entry.dataLen);
            readTensorValues(sources, entry, 0, entry.dataLen, values.data());
            const QByteArray hex =
                QByteArray(reinterpret_cast<const char*>(values.data()), int(values.size() * 4))
                    .toHex();
            QCOMPARE(hex.toStdString(), it.value().get<std::string>());
        }
    }
}

// Opening every malicious file runs nothing: the files their payloads would
// write do not appear.
void TestPytorch::maliciousPayloadsNeverRun() {
    REQUIRE_CONFORMANCE();
    const QString marker = QStringLiteral("/tmp/x");
    const bool before = QFile::exists(marker);
    const QStringList files = QDir(pytorchDir() + QStringLiteral("/invalid"))
                                  .entryList({QStringLiteral("malicious-*")}, QDir::Files);
    QVERIFY(files.size() >= 5);
    for (const QString& f : files) {
        const Opened o = openPytorch(pytorchDir() + QStringLiteral("/invalid/") + f);
        QVERIFY(!o.index.warnings.empty());
    }
    QCOMPARE(QFile::exists(marker), before);
}

namespace {

std::map<std::string, std::string> parameterOf(const FormatIndex& index) {
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < index.tensors.size(); ++i)
        out[index.tensors[i].name] = index.traits[i].parameter;
    return out;
}

} // namespace

// optimizer.pt beside pytorch_model.bin: the Trainer's two groups (decayed
// weights, then the norms) map ids to names; every state tensor of more
// than one element has its parameter's shape.
void TestPytorch::trainerOptimizerIsNamedFromTheModelBeside() {
    REQUIRE_CONFORMANCE();
    const Opened opt =
        openPytorch(pytorchDir() + QStringLiteral("/valid/checkpoint-50/optimizer.pt"));
    const Opened model =
        openPytorch(pytorchDir() + QStringLiteral("/valid/checkpoint-50/pytorch_model.bin"));
    const auto names = parameterOf(opt.index);
    QCOMPARE(names.at("state.0.exp_avg"), std::string("model.embed_tokens.weight"));
    QCOMPARE(names.at("state.8.exp_avg_sq"), std::string("model.layers.1.self_attn.q_proj.weight"));
    QCOMPARE(names.at("state.16.exp_avg"), std::string("model.layers.0.input_layernorm.weight"));
    QCOMPARE(names.at("state.20.step"), std::string("model.norm.weight"));
    for (size_t i = 0; i < opt.index.tensors.size(); ++i) {
        const TensorEntry& t = opt.index.tensors[i];
        const std::string& p = opt.index.traits[i].parameter;
        QVERIFY2(!p.empty(), t.name.c_str());
        if (t.shape.empty())
            continue; // the 0-d step
        const auto m = std::find_if(model.index.tensors.begin(), model.index.tensors.end(),
                                    [&](const TensorEntry& e) { return e.name == p; });
        QVERIFY2(m != model.index.tensors.end() && m->shape == t.shape, t.name.c_str());
    }
    QVERIFY(opt.index.warnings.empty());
}

// Lightning: state_dict and optimizer_states in one file; buffers
// (running_mean, num_batches_tracked) are not parameters.
void TestPytorch::lightningOptimizerIsNamedFromItsStateDict() {
    REQUIRE_CONFORMANCE();
    const Opened o =
        openPytorch(pytorchDir() + QStringLiteral("/valid/lightning/epoch=2-step=150.ckpt"));
    const auto names = parameterOf(o.index);
    QCOMPARE(names.at("optimizer_states.0.state.0.exp_avg"), std::string("encoder.weight"));
    QCOMPARE(names.at("optimizer_states.0.state.1.exp_avg"), std::string("encoder.bias"));
    QCOMPARE(names.at("optimizer_states.0.state.5.exp_avg"), std::string("norm.bias"));
    QCOMPARE(names.at("state_dict.encoder.weight"), std::string()); // not an optimizer tensor
}

// A model whose parameters do not fit the groups: ids stay ids, with a
// warning saying why.
void TestPytorch::aModelThatDoesNotFitLeavesIdsAndWarns() {
    REQUIRE_CONFORMANCE();
    QTemporaryDir dir;
    QVERIFY(QFile::copy(pytorchDir() + QStringLiteral("/valid/checkpoint-50/optimizer.pt"),
                        dir.filePath(QStringLiteral("optimizer.pt"))));
    QVERIFY(QFile::copy(pytorchDir() + QStringLiteral("/valid/llama-state-dict.pt"),
                        dir.filePath(QStringLiteral("pytorch_model.bin"))));
    const Opened o = openPytorch(dir.filePath(QStringLiteral("optimizer.pt")));
    for (const TensorTraits& t : o.index.traits)
        QVERIFY(t.parameter.empty());
    const std::string warnings = warningsText(o.index);
    QVERIFY2(warnings.find("keep their ids") != std::string::npos, warnings.c_str());
    QVERIFY2(warnings.find("pytorch_model.bin") != std::string::npos, warnings.c_str());
}

// pytorch_model.bin.index.json and its shards (or their folder) are one
// model: every tensor of the shards once, read from its shard with the
// values torch gives; a shard alone says where the rest is.
void TestPytorch::shardedModelIsOneModel() {
    REQUIRE_CONFORMANCE();
    const QString dir = pytorchDir() + QStringLiteral("/valid/sharded");
    for (const QString& path : {dir + QStringLiteral("/pytorch_model.bin.index.json"), dir}) {
        const auto doc = Document::open(path.toStdString());
        QCOMPARE(doc->format(), Format::Pytorch);
        QCOMPARE(doc->shards().size(), size_t(2));
        QVERIFY2(doc->warnings().empty(),
                 doc->warnings().empty() ? "" : doc->warnings().front().message.c_str());
        size_t expectedTensors = 0;
        for (const char* shard : {"sharded__pytorch_model-00001-of-00002.bin.json",
                                  "sharded__pytorch_model-00002-of-00002.bin.json"}) {
            const json e =
                readJson(pytorchDir() + QStringLiteral("/expected/") + QString::fromLatin1(shard));
            expectedTensors += e["tensors"].size();
            for (const json& x : e["tensors"]) {
                const auto it =
                    std::find_if(doc->tensors().begin(), doc->tensors().end(),
                                 [&](const TensorEntry& t) { return t.name == x["name"]; });
                QVERIFY(it != doc->tensors().end());
                const size_t i = size_t(it - doc->tensors().begin());
                QCOMPARE(doc->shardName(i), e["file"].get<std::string>().substr(8)); // "sharded/…"
                const QByteArray want =
                    readBytes(pytorchDir() + QStringLiteral("/expected/") +
                              QString::fromStdString(x["values"].get<std::string>()));
                std::vector<float> values(it->dataLen);
                doc->readValues(i, 0, it->dataLen, values.data());
                QVERIFY(std::memcmp(values.data(), want.data(), size_t(want.size())) == 0);
            }
        }
        QCOMPARE(doc->tensors().size(), expectedTensors);
        QCOMPARE(doc->totalBytes(), uint64_t(86656)); // the index's total_size
    }
    const Opened lone = openPytorch(dir + QStringLiteral("/pytorch_model-00002-of-00002.bin"));
    QVERIFY2(warningsText(lone.index).find("one of 2 shards") != std::string::npos,
             warningsText(lone.index).c_str());
}

// The state dict with lm_head.weight tied to model.embed_tokens.weight (one
// storage) against a safetensors twin that stores the embedding once, as
// save_pretrained does: every tensor the same, the tied one "tied", not
// "added", and the files do not differ.
void TestPytorch::tiedWeightStoredOnceIsNotADifference() {
    REQUIRE_CONFORMANCE();
    const auto pt =
        Document::open((pytorchDir() + QStringLiteral("/valid/llama-state-dict.pt")).toStdString());
    std::vector<testsupport::StTensor> twin;
    for (size_t i = 0; i < pt->tensors().size(); ++i) {
        const TensorEntry& t = pt->tensors()[i];
        if (t.name == "lm_head.weight")
            continue;
        std::string bytes(t.dataLen * 4, '\0');
        pt->readRawValues(i, 0, t.dataLen, bytes.data());
        twin.push_back({t.name, "F32", t.shape, bytes});
    }
    const std::string file = testsupport::stFile(twin);
    const auto st = Document::open(std::make_shared<MemorySource>(
        std::vector<uint8_t>(file.begin(), file.end()), "model.safetensors"));
    const TensorDiff d = diffTensors(*st, *pt, DiffOptions{});
    QCOMPARE(d.summary.tied, uint64_t(1));
    QCOMPARE(d.summary.added, uint64_t(0));
    QCOMPARE(d.summary.same, uint64_t(twin.size()));
    const auto tied =
        std::find_if(d.tensors.begin(), d.tensors.end(),
                     [](const TensorDiffEntry& e) { return e.status == DiffStatus::Tied; });
    QVERIFY(tied != d.tensors.end());
    QCOMPARE(tied->name, std::string("lm_head.weight"));
    QCOMPARE(tied->tiedTo, std::string("model.embed_tokens.weight"));
    QVERIFY(!d.differs());
    // The other way round: A's tied tensor only A lists.
    const TensorDiff back = diffTensors(*pt, *st, DiffOptions{});
    QCOMPARE(back.summary.tied, uint64_t(1));
    QCOMPARE(back.summary.removed, uint64_t(0));
}

QTEST_GUILESS_MAIN(TestPytorch)
#include "tst_pytorch.moc"
