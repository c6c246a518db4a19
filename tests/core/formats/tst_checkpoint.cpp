#include "ckptscope/formats/oxck/checkpoint.h"
#include "testsupport.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

using namespace ckptscope;

namespace {

// Byte-level encoding of the reference writer, spelled out independently of
// the code under test.
std::string referenceEncoding(const Checkpoint& c, const std::string& metadataText) {
    std::string s = "OXCK";
    auto u32 = [&](uint32_t v) {
        for (int i = 0; i < 4; ++i)
            s += char(v >> (8 * i));
    };
    auto u64 = [&](uint64_t v) {
        for (int i = 0; i < 8; ++i)
            s += char(v >> (8 * i));
    };
    u32(1);
    u64(0);
    u64(c.tensors.size());
    u32(uint32_t(metadataText.size()));
    s += metadataText;
    for (const auto& t : c.tensors) {
        u32(uint32_t(t.name.size()));
        s += t.name;
        u32(uint32_t(t.shape.size()));
        for (auto d : t.shape)
            u64(d);
        u64(t.data.size());
        for (float f : t.data) {
            uint32_t b;
            std::memcpy(&b, &f, 4);
            u32(b);
        }
    }
    return s;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    // memcmp with the null data() of an empty vector is undefined (UBSan).
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

Checkpoint randomCheckpoint(std::mt19937& rng) {
    static const std::vector<std::string> names = {"", "w", "layers.0.attn/q", "名前 с пробелом",
                                                   "a\"b\\c\nd"};
    Checkpoint c;
    std::uniform_int_distribution<int> n(0, 6), dim(0, 5), pick(0, int(names.size()) - 1);
    std::normal_distribution<float> val(0, 3);
    for (int i = n(rng); i > 0; --i)
        c.setMetadata(names[size_t(pick(rng))] + std::to_string(i), names[size_t(pick(rng))]);
    for (int i = n(rng); i > 0; --i) {
        std::vector<uint64_t> shape(size_t(dim(rng) % 4));
        uint64_t count = 1;
        for (auto& d : shape) {
            d = uint64_t(dim(rng));
            count *= d;
        }
        std::vector<float> data(static_cast<size_t>(count));
        for (auto& f : data) {
            switch (dim(rng)) {
            case 0:
                f = std::numeric_limits<float>::quiet_NaN();
                break;
            case 1:
                f = -std::numeric_limits<float>::infinity();
                break;
            default:
                f = val(rng);
            }
        }
        c.addTensor({names[size_t(pick(rng))], shape, data});
    }
    return c;
}

} // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void newIsVersionOneAndEmpty() {
        const Checkpoint c;
        QCOMPARE(c.version, 1u);
        QVERIFY(c.tensors.empty());
        QVERIFY(c.metadata.empty());
        QCOMPARE(c.numParams(), uint64_t(0));
        QCOMPARE(c.totalBytes(), uint64_t(0));
    }
    void elementCountQuirks() {
        QCOMPARE(CheckpointTensor("s", {}, {3.5f}).elementCount(), uint64_t(0)); // scalar
        QCOMPARE(CheckpointTensor("z", {0, 5}, {}).elementCount(), uint64_t(0));
        QCOMPARE(CheckpointTensor("m", {2, 3}, {}).elementCount(), uint64_t(6));
        QCOMPARE(CheckpointTensor("m", {2, 3}, {}).sizeBytes(), uint64_t(24));
        const CheckpointTensor huge("h", {1ull << 40, 1ull << 40}, {});
        QVERIFY(!huge.checkedElementCount().has_value());
        QCOMPARE(huge.elementCount(), UINT64_MAX); // saturates, never wraps
        QCOMPARE(CheckpointTensor("h0", {1ull << 40, 1ull << 40, 0}, {}).elementCount(),
                 uint64_t(0));
    }
    void metadataAndLookup() {
        Checkpoint c;
        c.setMetadata("lr", "0.1");
        c.setMetadata("lr", "0.2");
        QCOMPARE(c.getMetadata("lr").value(), std::string("0.2"));
        QVERIFY(!c.getMetadata("missing"));
        c.addTensor({"dup", {1}, {1.0f}});
        c.addTensor({"dup", {1}, {2.0f}});
        c.addTensor({"x", {2, 2}, {1, 2, 3, 4}});
        QCOMPARE(c.getTensor("dup")->data[0], 1.0f); // first match
        QVERIFY(c.getTensor("nope") == nullptr);
        QCOMPARE(c.numParams(), uint64_t(6));
        QCOMPARE(c.totalBytes(), uint64_t(24));
    }
    void encodingIsByteIdenticalToReference() {
        Checkpoint c;
        c.setMetadata("step", "1200");
        c.setMetadata("a\"b", "x\\y\nz");
        c.addTensor({"fc1.weight", {2, 2}, {1, -2, 0.5f, 3}});
        c.addTensor({"scalar", {}, {7}});
        QCOMPARE(c.encode(), referenceEncoding(c, "{\"a\\\"b\":\"x\\\\y\nz\",\"step\":\"1200\"}"));
    }
    void conformanceFileReencodesIdentically() {
        REQUIRE_CONFORMANCE();
        for (const char* name :
             {"edge_cases.oxck", "mlp.oxck", "empty.oxck", "many_tensors.oxck"}) {
            const QString path = testsupport::conformanceDir() + QStringLiteral("/valid/") +
                                 QString::fromLatin1(name);
            const Checkpoint c = Checkpoint::load(path.toStdString());
            QCOMPARE(c.encode(), testsupport::readFile(path));
        }
    }
    void randomRoundTrips() {
        std::mt19937 rng(20261129);
        QTemporaryDir dir;
        for (int i = 0; i < 200; ++i) {
            const Checkpoint c = randomCheckpoint(rng);
            // Through a stream…
            std::stringstream ss;
            c.writeTo(ss);
            const Checkpoint viaStream = Checkpoint::readFrom(ss);
            // …and through a file.
            const std::string path = dir.filePath(QStringLiteral("rt.oxck")).toStdString();
            c.save(path);
            const Checkpoint viaFile = Checkpoint::load(path);
            for (const Checkpoint* r : {&viaStream, &viaFile}) {
                QCOMPARE(r->metadata, c.metadata);
                QCOMPARE(r->tensors.size(), c.tensors.size());
                for (size_t k = 0; k < c.tensors.size(); ++k) {
                    QCOMPARE(r->tensors[k].name, c.tensors[k].name);
                    QCOMPARE(r->tensors[k].shape, c.tensors[k].shape);
                    QVERIFY(sameBits(r->tensors[k].data, c.tensors[k].data)); // NaN payloads too
                }
            }
        }
    }
    void saveReplacesAtomicallyAndRefusesLongNames() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("c.oxck")).toStdString();
        Checkpoint a;
        a.addTensor({"a", {1}, {1}});
        a.save(path);
        Checkpoint bad;
        bad.addTensor({std::string(70000, 'n'), {1}, {1}});
        QVERIFY_THROWS_EXCEPTION(CheckpointError, bad.save(path));
        // The failed save left the old file intact and no temporary behind.
        QCOMPARE(Checkpoint::load(path).tensors.at(0).name, std::string("a"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }
    void loadErrorsNameTheFile() {
        try {
            Checkpoint::load("/nonexistent/x.oxck");
            QFAIL("loaded a missing file");
        } catch (const CheckpointError& e) {
            QCOMPARE(e.kind(), CheckpointError::Kind::Io);
            QVERIFY(std::string(e.what()).find("/nonexistent/x.oxck") != std::string::npos);
        }
    }
};

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
