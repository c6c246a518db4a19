#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/formats/oxck/oxckindex.h"
#include "ckptscope/formats/tensorvalues.h"

#include <QTest>

using namespace ckptscope;

namespace {

MemorySource sourceOf(const std::string& bytes) {
    return MemorySource(std::vector<uint8_t>(bytes.begin(), bytes.end()), "t.oxck");
}

std::string le64(uint64_t v) {
    std::string s;
    for (int i = 0; i < 8; ++i)
        s += char(v >> (8 * i));
    return s;
}

// Expects readOxckIndex to fail with a message containing `needle`.
void expectError(const std::string& bytes, const std::string& needle, CheckpointError::Kind kind) {
    try {
        readOxckIndex(sourceOf(bytes));
        QFAIL("accepted a damaged file");
    } catch (const CheckpointError& e) {
        QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).rfind("t.oxck: ", 0) == 0, e.what());
        QCOMPARE(int(e.kind()), int(kind));
    }
}

} // namespace

class TestOxckIndex : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void indexesWithoutValues() {
        Checkpoint c;
        c.setMetadata("step", "3");
        c.addTensor({"a", {3}, {1, 2, 3}});
        c.addTensor({"b", {2, 2}, {4, 5, 6, 7}});
        const std::string bytes = c.encode();
        const MemorySource src = sourceOf(bytes);
        const OxckIndex idx = readOxckIndex(src);
        QCOMPARE(idx.tensors.size(), size_t(2));
        QCOMPARE(idx.metadata.at("step"), std::string("3"));
        // 28 header + 12 metadata + 4+1 name + 4+8 shape + 8 data_len
        QCOMPARE(idx.tensors[0].dataOffset, uint64_t(28 + 12 + 5 + 12 + 8));
        QCOMPARE(idx.tensors[1].elementCount.value(), uint64_t(4));
        QCOMPARE(idx.endOffset, uint64_t(bytes.size()));
        QVERIFY(idx.warnings.empty());
        float v[2];
        readTensorValues(src, idx.tensors[1], 2, 2, v);
        QCOMPARE(v[0], 6.0f);
        QCOMPARE(v[1], 7.0f);
        QVERIFY_THROWS_EXCEPTION(CheckpointError, readTensorValues(src, idx.tensors[1], 3, 2, v));
    }
    void warnings() {
        Checkpoint c;
        c.addTensor({"x", {2, 3}, {1, 2, 3, 4}});         // mismatch
        c.addTensor({"x", {1}, {1}});                     // duplicate
        c.addTensor({"o", {1ull << 33, 1ull << 33}, {}}); // overflow
        c.addTensor({"s", {}, {1}});                      // a scalar is not a mismatch
        const OxckIndex idx = readOxckIndex(sourceOf(c.encode() + "junk"));
        QCOMPARE(idx.warnings.size(), size_t(4));
        QCOMPARE(idx.warnings[0].tensor.value(), size_t(0));
        QVERIFY(idx.warnings[0].message.find("6 elements but 4 values") != std::string::npos);
        QCOMPARE(idx.warnings[1].tensor.value(), size_t(1));
        QVERIFY(idx.warnings[1].message.find("duplicate") != std::string::npos);
        QCOMPARE(idx.warnings[2].tensor.value(), size_t(2));
        QVERIFY(idx.warnings[2].message.find("overflows") != std::string::npos);
        QVERIFY(!idx.tensors[2].elementCount);
        QVERIFY(!idx.warnings[3].tensor);
        QVERIFY(idx.warnings[3].message.find("4 bytes follow") != std::string::npos);
    }
    void hostileCountsAreRefusedBeforeAllocating() {
        Checkpoint c;
        c.addTensor({"w", {2}, {1, 2}});
        const std::string good = c.encode();
        // num_tensors = 2^62
        std::string bytes = good;
        bytes.replace(16, 8, le64(1ull << 62));
        expectError(bytes, "claims 4611686018427387904 tensors", CheckpointError::Kind::Truncated);
        // name_len = 0xFFFFFFF0 (tensor header starts at 30: 28 + "{}")
        bytes = good;
        bytes.replace(30, 4, std::string("\xf0\xff\xff\xff", 4));
        expectError(bytes, "tensor 0: truncated at byte 34: the name needs 4294967280 bytes",
                    CheckpointError::Kind::Truncated);
        // ndim = 2^31 - 1
        bytes = good;
        bytes.replace(35, 4, std::string("\xff\xff\xff\x7f", 4));
        expectError(bytes, "tensor 0 \"w\": truncated at byte 39: the shape needs",
                    CheckpointError::Kind::Truncated);
        // data_len = 2^61
        bytes = good;
        bytes.replace(47, 8, le64(1ull << 61));
        expectError(bytes, "tensor 0 \"w\": byte 47: truncated: 2305843009213693952 values",
                    CheckpointError::Kind::Truncated);
        // metadata length past the end (a 2 GiB claim)
        bytes = good;
        bytes.replace(24, 4, std::string("\x00\x00\x00\x80", 4));
        expectError(bytes, "truncated at byte 28: the metadata block needs 2147483648 bytes",
                    CheckpointError::Kind::Truncated);
    }
    void headerErrors() {
        expectError("", "empty", CheckpointError::Kind::Truncated);
        expectError("OXC", "magic", CheckpointError::Kind::InvalidMagic);
        expectError("PK\x03\x04xxxxxxxx", "magic", CheckpointError::Kind::InvalidMagic);
        expectError(std::string("OXCK\x02\0\0\0", 8), "unsupported checkpoint version 2",
                    CheckpointError::Kind::UnsupportedVersion);
        expectError(std::string("OXCK\x01\0\0\0\0", 9), "truncated at byte 8: the flags",
                    CheckpointError::Kind::Truncated);
        Checkpoint c;
        c.addTensor({"w", {2}, {1, 2}});
        const std::string good = c.encode();
        expectError(good.substr(0, good.size() - 1), "2 values need 8 bytes, 7 left",
                    CheckpointError::Kind::Truncated);
        std::string badName = good;
        badName[34] = char(0xff);
        expectError(badName, "tensor 0: byte 34: expected a UTF-8 name",
                    CheckpointError::Kind::InvalidUtf8);
    }
    void everyTruncationIsAnErrorNeverACrash() {
        Checkpoint c;
        c.setMetadata("k", "v");
        c.addTensor({"a", {2, 2}, {1, 2, 3, 4}});
        c.addTensor({"b", {}, {5}});
        const std::string good = c.encode();
        for (size_t n = 0; n < good.size(); ++n)
            QVERIFY_THROWS_EXCEPTION(CheckpointError, readOxckIndex(sourceOf(good.substr(0, n))));
        QCOMPARE(readOxckIndex(sourceOf(good)).tensors.size(), size_t(2));
    }
    void shapeElementCountQuirks() {
        QCOMPARE(shapeElementCount({}).value(), uint64_t(0));
        QCOMPARE(shapeElementCount({7}).value(), uint64_t(7));
        QCOMPARE(shapeElementCount({UINT64_MAX, 1}).value(), UINT64_MAX);
        QVERIFY(!shapeElementCount({UINT64_MAX, 2}));
        QCOMPARE(shapeElementCount({UINT64_MAX, 2, 0}).value(), uint64_t(0));
    }
};

QTEST_APPLESS_MAIN(TestOxckIndex)
#include "tst_oxckindex.moc"
