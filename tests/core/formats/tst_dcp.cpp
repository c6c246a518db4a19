// PyTorch distributed checkpoints (DCP) as one model: folders the tests
// write (1, 2, 3 and 8 ranks; tensors split unevenly by rows, one in a grid
// of boxes; f32 and bf16;
// a scalar step; a non-tensor item) give back every logical tensor exactly,
// by the folder and by its .metadata; the optimizer's state names its
// parameters; convert writes the model (the optimizer's state on request);
// damaged and hostile sets are refused naming the file and the tensor.
#include "dcpfixture.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/converter.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/optimizer/parameterupdate.h"
#include "ckptscope/run/runscan.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

using namespace ckptscope;
using testsupport::DcpFixture;
using testsupport::openError;

namespace {

const std::vector<std::vector<uint64_t>> kShapes = {{5, 3}, {7}, {4, 2, 3}, {1, 6}};

size_t indexOf(const Document& doc, const std::string& name) {
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        if (doc.tensors()[i].name == name)
            return i;
    return SIZE_MAX;
}

std::vector<float> valuesOf(const Document& doc, const std::string& name) {
    const size_t i = indexOf(doc, name);
    if (i == SIZE_MAX)
        return {};
    std::vector<float> v(doc.tensors()[i].dataLen);
    doc.readValues(i, 0, v.size(), v.data());
    return v;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

class TestDcp : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void logicalTensorsEqualWhatWasWritten_data() {
        QTest::addColumn<int>("world");
        QTest::addColumn<bool>("bf16");
        QTest::addColumn<bool>("transposed");
        QTest::addColumn<bool>("safetensors");
        for (int world : {1, 2, 3, 8})
            for (bool bf16 : {false, true})
                QTest::addRow("%d ranks, %s", world, bf16 ? "bf16" : "f32")
                    << world << bf16 << false << false;
        // Chunks saved as transposed views (torch does not make a view of
        // a whole storage contiguous): read through their strides.
        for (int world : {1, 3})
            for (bool bf16 : {false, true})
                QTest::addRow("%d ranks, %s, chunks transposed", world, bf16 ? "bf16" : "f32")
                    << world << bf16 << true << false;
        // Rank files of SerializationFormat.SAFETENSORS: each rank's chunks in
        // one safetensors blob after its non-tensor item (one chunk of a
        // tensor per rank: the grid's four boxes need four ranks).
        for (int world : {4, 8})
            for (bool bf16 : {false, true})
                QTest::addRow("%d ranks, %s, safetensors", world, bf16 ? "bf16" : "f32")
                    << world << bf16 << false << true;
    }
    void logicalTensorsEqualWhatWasWritten() {
        QFETCH(int, world);
        QFETCH(bool, bf16);
        QFETCH(bool, transposed);
        QFETCH(bool, safetensors);
        DcpFixture f = DcpFixture::make(uint64_t(world), kShapes, bf16);
        f.transposedChunks = transposed;
        f.safetensors = safetensors;
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString();
        f.write(folder);
        for (const std::string& path : {folder, folder + "/.metadata"}) {
            const auto doc = Document::open(path);
            QCOMPARE(doc->formatModule().name, "dcp");
            QCOMPARE(doc->tensors().size(), f.tensors.size());
            for (const auto& t : f.tensors) {
                const size_t i = indexOf(*doc, t.fqn);
                QVERIFY2(i != SIZE_MAX, t.fqn.c_str());
                QCOMPARE(doc->tensors()[i].shape, t.shape);
                QCOMPARE(doc->tensors()[i].dtype, t.bf16 ? Dtype::BF16 : Dtype::F32);
                QCOMPARE(valuesOf(*doc, t.fqn), t.values);
                // Reads that start and end inside chunks.
                if (t.values.size() > 3) {
                    std::vector<float> part(t.values.size() - 2);
                    doc->readValues(i, 1, part.size(), part.data());
                    QVERIFY(std::equal(part.begin(), part.end(), t.values.begin() + 1));
                }
                // Every chunk is a piece (a scalar's one chunk a plain view).
                const TensorEntry& e = doc->tensors()[i];
                QCOMPARE(doc->views().at(e.view).pieces.size(),
                         t.shape.empty() ? size_t(0) : t.chunks.size());
                // The optimizer's state names its parameter.
                const std::string want = t.path[0] == "optim" ? t.path[2] : std::string();
                QCOMPARE(doc->traits().at(i).parameter, want);
            }
            // Each chunk's storage has a name of its own, also where chunks
            // share their place (a safetensors blob's first byte).
            std::set<std::string> keys;
            for (const TensorStorage& st : doc->storages())
                keys.insert(st.key);
            QCOMPARE(keys.size(), doc->storages().size());
            // The non-tensor item is unpickled into the tree, where
            // planner_data puts it.
            const ObjectTree& tree = doc->objects();
            const uint32_t optim = tree.find(tree.root, "optim");
            QVERIFY(optim != kNoNode);
            const uint32_t groups = tree.find(optim, "param_groups");
            QVERIFY(groups != kNoNode);
            QCOMPARE(tree.at(groups).kind, ObjectKind::List);
            const uint32_t lr = tree.find(tree.at(groups).items.at(0), "lr");
            QVERIFY(lr != kNoNode);
            QCOMPARE(tree.at(lr).real, 1e-3);
            const uint32_t model = tree.find(tree.root, "model");
            QVERIFY(model != kNoNode);
            QCOMPARE(tree.at(model).items.size(), 2 * (kShapes.size() + 1)); // and the grid
            // Files: one per rank that holds something.
            QCOMPARE(doc->shards().size(), size_t(std::min(world, 7)));
        }
    }

    // A tensor split by rows and columns whose chunks were saved transposed:
    // a box row spans its chunk's whole storage, so each storage is read
    // once per window of 65,536 values read (16 windows here: 8× the
    // tensor's bytes), never once per row of its box (512×). Bytes counted
    // by the kernel (/proc/self/io rchar: every read and pread).
    void transposedChunksReadOnce() {
        DcpFixture f;
        f.world = 2;
        f.transposedChunks = true;
        testsupport::DcpTensor t;
        t.fqn = "model.w";
        t.path = {"model", "w"};
        t.shape = {1024, 1024};
        for (uint64_t i = 0; i < t.numel(); ++i)
            t.values.push_back(float(i % 9973) * 0.5f);
        for (uint64_t a = 0; a < 2; ++a)
            for (uint64_t b = 0; b < 2; ++b)
                t.chunks.push_back({{512 * a, 512 * b}, {512, 512}, (2 * a + b) % 2});
        f.tensors.push_back(std::move(t));
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        const auto doc = Document::open(dir.path().toStdString());
        const auto rchar = [] {
            std::ifstream io("/proc/self/io");
            std::string key;
            uint64_t value = 0;
            while (io >> key >> value)
                if (key == "rchar:")
                    return value;
            return uint64_t(0);
        };
        const uint64_t before = rchar();
        QCOMPARE(valuesOf(*doc, "model.w"), f.tensors[0].values);
        const uint64_t read = rchar() - before, bytes = 1024 * 1024 * 4;
        QVERIFY2(read < 16 * bytes,
                 (std::to_string(read) + " bytes read for a tensor of " + std::to_string(bytes))
                     .c_str());
    }

    void convertWritesTheModel() {
        const DcpFixture f = DcpFixture::make(3, kShapes, true);
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString() + "/ckpt";
        f.write(folder);
        const auto doc = Document::open(folder);
        const std::string out = dir.filePath(QStringLiteral("model.safetensors")).toStdString();
        const std::vector<std::string> warnings =
            convertDocument(*doc, ConvertTarget::Safetensors, out);
        std::string all;
        for (const std::string& w : warnings)
            all += w + "\n";
        QVERIFY2(contains(all, "left out") && contains(all, "optim.*"), all.c_str());
        QVERIFY2(contains(all, "optim.param_groups"), all.c_str());
        const auto model = Document::open(out);
        QCOMPARE(model->tensors().size(), kShapes.size() + 1);
        for (const auto& t : f.tensors) {
            if (t.path[0] != "model")
                continue;
            QCOMPARE(valuesOf(*model, t.fqn), t.values);
            QCOMPARE(model->tensors()[indexOf(*model, t.fqn)].dtype, Dtype::BF16);
        }
        // --include-optimizer keeps optim.*; shards too.
        ConvertChoice choice;
        choice.includeOptimizer = true;
        const std::string shards = dir.filePath(QStringLiteral("all.safetensors")).toStdString();
        convertToShards(*doc, shards, 40, {}, choice);
        const auto everything = Document::open(shards + ".index.json");
        QCOMPARE(everything->tensors().size(), f.tensors.size());
        for (const auto& t : f.tensors)
            QCOMPARE(valuesOf(*everything, t.fqn), t.values);
    }

    void damagedSetsAreRefused() {
        namespace fs = std::filesystem;
        const DcpFixture base = DcpFixture::make(3, kShapes);
        const std::string wq = base.tensors[0].fqn; // model.layers.0.weight: 5 × 3 over 3 ranks
        const auto attempt = [](const DcpFixture& f, auto damage) {
            QTemporaryDir dir;
            const std::string folder = dir.path().toStdString();
            f.write(folder);
            damage(folder);
            return openError(folder);
        };
        const auto none = [](const std::string&) {};
        { // a rank's file missing: never a smaller model
            const std::string e =
                attempt(base, [](const std::string& d) { fs::remove(d + "/__1_0.distcp"); });
            QVERIFY2(contains(e, "__1_0.distcp") && contains(e, "missing") && contains(e, "tensor"),
                     e.c_str());
        }
        { // a chunk reaching past its file
            const std::string e = attempt(base, [](const std::string& d) {
                fs::resize_file(d + "/__2_0.distcp", fs::file_size(d + "/__2_0.distcp") - 100);
            });
            QVERIFY2(contains(e, "__2_0.distcp") && contains(e, "past the end"), e.c_str());
        }
        { // overlapping chunks
            DcpFixture f = base;
            f.tensors[0].chunks[1].offsets[0] = 1;
            const std::string e = attempt(f, none);
            QVERIFY2(contains(e, wq) && contains(e, "overlaps"), e.c_str());
        }
        { // a hole: one chunk fewer
            DcpFixture f = base;
            f.tensors[0].chunks.pop_back();
            const std::string e = attempt(f, none);
            QVERIFY2(contains(e, wq) && contains(e, "hole"), e.c_str());
        }
        { // a chunk outside its tensor
            DcpFixture f = base;
            f.tensors[0].chunks[2].sizes[0] = 4;
            const std::string e = attempt(f, none);
            QVERIFY2(contains(e, wq) && contains(e, "outside the tensor"), e.c_str());
        }
        // Names leaving the folder: absolute, "..", a URL escape, a scheme.
        for (const char* name : {"/etc/passwd", "../__0_0.distcp", "%2e%2e/x", "file:x"}) {
            DcpFixture f = base;
            f.fileOverride[wq] = name;
            const std::string e = attempt(f, none);
            QVERIFY2(contains(e, wq) && contains(e, name), e.c_str());
        }
        { // a symbolic link leading out of the folder
            QTemporaryDir outside;
            const std::string target = outside.path().toStdString() + "/__0_0.distcp";
            std::ofstream(target) << "x";
            DcpFixture f = base;
            f.fileOverride[wq] = "link.distcp";
            const std::string e = attempt(
                f, [&](const std::string& d) { fs::create_symlink(target, d + "/link.distcp"); });
            QVERIFY2(contains(e, "outside") && contains(e, "link.distcp"), e.c_str());
        }
        { // stream transforms (compression): refused by name
            DcpFixture f = base;
            f.transforms = true;
            const std::string e = attempt(f, none);
            QVERIFY2(contains(e, "transform"), e.c_str());
        }
        { // a non-tensor item that is not a torch.save archive (read at open)
            const std::string e = attempt(base, [](const std::string& d) {
                std::fstream file(d + "/__0_0.distcp", std::ios::in | std::ios::out);
                file.seekp(0);
                file << "XXXX";
            });
            QVERIFY2(contains(e, "__0_0.distcp") && contains(e, "optim.param_groups") &&
                         contains(e, "torch.save"),
                     e.c_str());
        }
        { // a rank file that is a bare safetensors file where the plan puts a
          // non-tensor item's torch.save archive
            const std::string e = attempt(base, [](const std::string& d) {
                std::ofstream(d + "/__0_0.distcp", std::ios::binary)
                    << std::string("\x02\0\0\0\0\0\0\0{}", 10);
            });
            QVERIFY2(contains(e, "__0_0.distcp") && contains(e, "optim.param_groups"), e.c_str());
        }
        { // a .metadata that is not a plan
            const std::string e = attempt(base, [](const std::string& d) {
                std::ofstream(d + "/.metadata", std::ios::binary) << "\x80\x04N.";
            });
            QVERIFY2(contains(e, ".metadata") && contains(e, "Metadata"), e.c_str());
        }
        { // a plan nested a million levels deep in an unsafe call's argument,
          // whose warning writes it: refused, not a walk that deep
            const std::string e = attempt(base, [](const std::string& d) {
                picklewriter::Pickle p;
                p.proto(2).emptyDict().mark();
                p.unicode("state_dict_metadata").emptyDict();
                p.unicode("storage_data").emptyDict();
                p.unicode("x").global("posix", "system").none();
                for (int i = 0; i < 1000000; ++i)
                    p.op(uint8_t(0x85)); // TUPLE1
                p.op(uint8_t(0x85)).reduce().setitems().stop();
                std::ofstream(d + "/.metadata", std::ios::binary) << p.bytes;
            });
            QVERIFY2(contains(e, ".metadata") && contains(e, "too deep"), e.c_str());
        }
    }

    // planner_data's key paths are read for the plan's items only: an item
    // 1 000 keys deep is refused (each key a level of the tree), an entry
    // naming no item is not read at all, however deep (a path shared by
    // thousands of such entries would take gigabytes).
    void plannerPathsOfItemsOnly() {
        const std::vector<std::string> deep(1000, "k");
        DcpFixture stray = DcpFixture::make(1, kShapes);
        stray.strayPaths["not.an.item"] = deep;
        QTemporaryDir a;
        stray.write(a.path().toStdString());
        const auto doc = Document::open(a.path().toStdString());
        QCOMPARE(doc->tensors().size(), stray.tensors.size());
        DcpFixture item = DcpFixture::make(1, kShapes);
        item.tensors[0].path = deep;
        QTemporaryDir b;
        item.write(b.path().toStdString());
        const std::string e = openError(b.path().toStdString());
        QVERIFY2(contains(e, ".metadata") && contains(e, item.tensors[0].fqn) &&
                     contains(e, "1000 keys deep"),
                 e.c_str());
    }

    // A rank file of SerializationFormat.SAFETENSORS whose blob does not
    // hold the chunk the plan names there — another name, dtype, shape or
    // saved offsets, or a blob cut short — is told when the tensor is read,
    // naming the file and the tensor; the other ranks' tensors read as ever.
    // model.layers.0.weight (5 × 3 over 4 ranks) has rows 2-3 on rank 1.
    void safetensorsChunksAreCheckedOnRead_data() {
        QTest::addColumn<std::string>("from");
        QTest::addColumn<std::string>("to");
        QTest::addColumn<std::string>("told");
        const std::string wq = "\"model.layers.0.weight\"";
        const auto row = [](const char* name, const std::string& from, const std::string& to,
                            const std::string& told) { QTest::newRow(name) << from << to << told; };
        row("another name", wq + ":{", "\"model.layers.0.weighX\":{", "no tensor of that name");
        row("another dtype", wq + ":{\"dtype\":\"F32\"", wq + ":{\"dtype\":\"I32\"",
            "it holds I32");
        row("another shape", wq + ":{\"dtype\":\"F32\",\"shape\":[2,3]",
            wq + ":{\"dtype\":\"F32\",\"shape\":[3,2]", "sizes [3, 2], the plan says [2, 3]");
        row("other saved offsets", "\\\"model.layers.0.weight\\\": {\\\"saved_offsets\\\": [2, 0]}",
            "\\\"model.layers.0.weight\\\": {\\\"saved_offsets\\\": [9, 0]}",
            "the chunk at [9, 0] (DCP_SHARDING_INFO)");
        row("cut short", {}, {}, "counted from there");
    }
    void safetensorsChunksAreCheckedOnRead() {
        QFETCH(std::string, from);
        QFETCH(std::string, to);
        QFETCH(std::string, told);
        DcpFixture f = DcpFixture::make(4, kShapes);
        f.safetensors = true;
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString();
        f.write(folder);
        const std::string wq = f.tensors[0].fqn, rank1 = folder + "/__1_0.distcp";
        std::string bytes;
        {
            std::ifstream in(rank1, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        if (from.empty()) {
            bytes.pop_back();
        } else {
            const size_t at = bytes.find(from);
            QVERIFY2(at != std::string::npos, from.c_str());
            bytes.replace(at, from.size(), to);
        }
        std::ofstream(rank1, std::ios::binary | std::ios::trunc) << bytes;
        const auto doc = Document::open(folder);
        for (int attempt = 0; attempt < 2; ++attempt) { // a blob that failed fails again alike
            std::vector<float> v(doc->tensors()[indexOf(*doc, wq)].dataLen);
            try {
                doc->readValues(indexOf(*doc, wq), 0, v.size(), v.data());
                QFAIL("a chunk its blob does not hold was read");
            } catch (const CheckpointError& e) {
                const std::string m = e.what();
                QVERIFY2(contains(m, "__1_0.distcp") && contains(m, wq) && contains(m, told),
                         m.c_str());
            }
        }
        // A tensor with no chunk on rank 1 reads as written.
        QCOMPARE(valuesOf(*doc, f.tensors[3].fqn), f.tensors[3].values);
    }

    // Two chunks of one tensor in one rank's safetensors data (which holds
    // one tensor of a name): refused at open, not read twice.
    void safetensorsHoldOneChunkOfATensorPerRank() {
        DcpFixture f = DcpFixture::make(1, kShapes); // the grid's four boxes on one rank
        f.safetensors = true;
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        const std::string e = openError(dir.path().toStdString());
        QVERIFY2(contains(e, ".metadata") && contains(e, "model.proj.weight") &&
                     contains(e, "a second chunk of the tensor"),
                 e.c_str());
    }

    // A chunk's archive is read when its tensor is first read, not at open:
    // what is wrong inside one is told then, naming the file and the tensor,
    // and the other tensors stay readable.
    void damagedChunksAreToldOnRead() {
        const auto readError = [](const std::string& folder, const std::string& tensor) {
            const auto doc = Document::open(folder);
            try {
                valuesOf(*doc, tensor);
            } catch (const std::exception& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        const DcpFixture base = DcpFixture::make(3, kShapes);
        const std::string wq = base.tensors[0].fqn;
        { // rank 1's first chunk (of the first tensor) is not an archive
            QTemporaryDir dir;
            base.write(dir.path().toStdString());
            {
                std::fstream file(dir.filePath(QStringLiteral("__1_0.distcp")).toStdString(),
                                  std::ios::in | std::ios::out);
                file.seekp(0);
                file << "XXXX";
            }
            const std::string e = readError(dir.path().toStdString(), wq);
            QVERIFY2(contains(e, "__1_0.distcp") && contains(e, wq) && contains(e, "torch.save"),
                     e.c_str());
            const auto doc = Document::open(dir.path().toStdString());
            QCOMPARE(valuesOf(*doc, base.tensors[4].fqn), base.tensors[4].values);
        }
        { // a chunk saved as a strided view reaching past its storage
            DcpFixture f = base;
            f.transposedChunks = true;
            f.strideOverrun = 1;
            QTemporaryDir dir;
            f.write(dir.path().toStdString());
            const std::string e = readError(dir.path().toStdString(), wq);
            QVERIFY2(contains(e, wq) && contains(e, "__0_0.distcp") &&
                         contains(e, "view out of range"),
                     e.c_str());
        }
        { // the plan says another dtype than the chunks hold
            DcpFixture f = base;
            f.planDtype = "float16";
            QTemporaryDir dir;
            f.write(dir.path().toStdString());
            const std::string e = readError(dir.path().toStdString(), wq);
            QVERIFY2(contains(e, wq) && contains(e, "F32") && contains(e, "F16"), e.c_str());
        }
    }

    // The optimizer's figures of a DCP folder: its state keyed by parameter
    // name (get_state_dict's layout), paired with model.NAME, Adam's update
    // by the formula in double.
    void optimizerFiguresEqualTheFormula() {
        const DcpFixture f = DcpFixture::make(3, kShapes);
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        const OptimizerCheckpoint state = openOptimizerCheckpoint(dir.path().toStdString());
        const std::vector<ParameterUpdate> u = computeParameterUpdates(state);
        QCOMPARE(u.size(), kShapes.size());
        const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, step = 10;
        const double bc1 = 1 - std::pow(b1, step), bc2 = 1 - std::pow(b2, step);
        for (size_t k = 0; k < u.size(); ++k) {
            const std::string name = "layers." + std::to_string(k) + ".weight";
            const auto& w = f.tensors[4 * k].values;
            const auto& m = f.tensors[4 * k + 1].values;
            const auto& v = f.tensors[4 * k + 2].values;
            double u2 = 0, w2 = 0;
            for (size_t i = 0; i < w.size(); ++i) {
                const double x = lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
                u2 += x * x;
                w2 += double(w[i]) * w[i];
            }
            const double want = std::sqrt(u2 / double(w.size())) / std::sqrt(w2 / double(w.size()));
            QCOMPARE(u[k].parameter, name);
            QCOMPARE(u[k].rule, UpdateRule::Adam);
            QVERIFY(u[k].updateToWeight && std::abs(*u[k].updateToWeight - want) <= 1e-12 * want);
            QCOMPARE(u[k].step.value_or(0), step);
        }
    }

    // A folder of step-N/ DCP folders is a run: each one checkpoint.
    void stepFoldersAreARun() {
        QTemporaryDir dir;
        const DcpFixture f = DcpFixture::make(2, kShapes);
        for (const char* step : {"step-100", "step-200"})
            f.write(dir.path().toStdString() + "/" + step);
        const Discovery d = discoverCheckpoints({dir.path().toStdString()});
        QCOMPARE(d.candidates.size(), size_t(2));
        for (const CheckpointCandidate& c : d.candidates) {
            QVERIFY(c.folderModel);
            QCOMPARE(c.files.size(), size_t(3)); // .metadata and two rank files
            QVERIFY(c.files[0].path.ends_with("/.metadata"));
        }
    }
};

QTEST_GUILESS_MAIN(TestDcp)
#include "tst_dcp.moc"
