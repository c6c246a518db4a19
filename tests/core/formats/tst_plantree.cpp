// The compact machine a DCP plan is read with (dcp::PlanTree) against the
// general pickle machine: on every plan the tests write (1 to 8 ranks, f32
// and bf16, items, transforms, offsets past 2^31, lists past one APPENDS,
// the memo's every opcode) both give the same values and the same imports;
// any pickle it does not read — another global, a call, a float, a cycle, a
// value changed after it was used, deep nesting, bad UTF-8, a damaged
// stream — it leaves to the general machine (read() gives nullopt).
#include "dcpfixture.h"
#include "picklewriter.h"
#include "sameplanvalues.h"

#include "formats/dcp/plantree.h"
#include "formats/pytorch/pickleimports.h"
#include "formats/pytorch/torchunpickler.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <functional>
#include <sstream>

using namespace ckptscope;
using picklewriter::Pickle;
using testsupport::DcpFixture;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The fixture's plan written to a folder and read back.
std::string planOf(const DcpFixture& f) {
    QTemporaryDir dir;
    f.write(dir.path().toStdString());
    return readFile(dir.path().toStdString() + "/.metadata");
}

// A protocol 4 plan-like pickle around `body`, which leaves one value.
std::string wrapped(const std::function<void(Pickle&)>& body) {
    Pickle p;
    p.proto(4);
    body(p);
    return p.stop().bytes;
}

} // namespace

class TestPlanTree : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sameValuesAsTheGeneralMachine_data() {
        QTest::addColumn<std::string>("pickle");
        const std::vector<std::vector<uint64_t>> shapes = {{5, 3}, {7}, {4, 2, 3}, {1, 6}};
        for (uint64_t world : {1, 2, 3, 8})
            QTest::newRow(("world " + std::to_string(world)).c_str())
                << planOf(DcpFixture::make(world, shapes));
        QTest::newRow("bf16") << planOf(DcpFixture::make(2, shapes, true));
        DcpFixture transforms = DcpFixture::make(2, shapes);
        transforms.transforms = true;
        QTest::newRow("transform descriptors") << planOf(transforms);
        // Offsets past 2^31 (LONG1 of 9 bytes), a tensor of 2 500 chunks
        // (three APPENDS batches as Python writes them, between the
        // chunks' own items).
        DcpFixture big = DcpFixture::make(1, {{3}});
        big.tensors[0].shape = {2500};
        big.tensors[0].values.assign(2500, 0.5f);
        big.tensors[0].chunks.clear();
        for (uint64_t i = 0; i < 2500; ++i)
            big.tensors[0].chunks.push_back({{i}, {1}, 0});
        std::string plan = planOf(big);
        QTest::newRow("2 500 chunks") << plan;
        QTest::newRow("memo opcodes") << wrapped([](Pickle& p) {
            p.emptyList().binput(0).mark();
            p.shortUnicode("k").binput(1).binget(1).longBinput(2).longBinget(2);
            p.unicode("long form").unicode8("eight").binint(-7).binint(1 << 20);
            p.binint1(3).binint2(300).none().boolean(true).boolean(false);
            p.long1(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8)); // 2^63 - 1
            p.long1(std::string("\x00\x00\x00\x80\xff", 5));             // -2^31
            p.long1(std::string("\x01\x00\x00\x00\x00\x00\x00\x00\x00", 9));
            p.mark().binint1(1).binint1(2).tuple();
            p.emptyDict().mark().shortUnicode("a").binint1(1).setitems();
            p.emptyDict().shortUnicode("b").binint1(2).op('s');
            p.appends();
            p.binget(0).binint1(9).op('a');
        });
    }
    void sameValuesAsTheGeneralMachine() {
        QFETCH(std::string, pickle);
        const std::optional<dcp::PlanTree> plan = dcp::PlanTree::read(pickle);
        QVERIFY(plan.has_value());
        ObjectTree general;
        pytorch::TorchUnpickler u(general, "plan");
        general.root = u.run(pickle, 0);
        testsupport::SamePlanValues same{general, *plan};
        QVERIFY2(same(general.root, plan->root()), same.why.c_str());
        // The imports as classifyImports counts and rates them.
        const std::vector<PickleImport> want = pytorch::classifyImports(general, u);
        const std::vector<PickleImport> got = plan->imports();
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(got[i].name, want[i].name);
            QCOMPARE(got[i].count, want[i].count);
            QVERIFY(got[i].risk == want[i].risk);
        }
    }

    // Ints, tuples and torch.Size values are one node per value (a plan
    // repeats few: half its nodes go); lists, dicts and built objects,
    // which can change, are one node each.
    void valuesThatCannotChangeAreOneNode() {
        const std::string pickle = wrapped([](Pickle& p) {
            p.mark();
            for (int k = 0; k < 2; ++k) {
                p.stackGlobal("torch", "Size").mark().binint2(2048).binint(70000).tuple();
                p.op(uint8_t(0x85)).reduce();
                p.mark().binint(70000).binint2(300).tuple();
                p.emptyList();
                p.stackGlobal("torch.distributed.checkpoint.metadata", "ChunkStorageMetadata");
                p.emptyTuple().op(uint8_t(0x81));
            }
            p.tuple();
        });
        const std::optional<dcp::PlanTree> plan = dcp::PlanTree::read(pickle);
        QVERIFY(plan.has_value());
        const std::span<const uint32_t> v = plan->at(plan->root()).items;
        QCOMPARE(v.size(), size_t(8));
        QCOMPARE(v[0], v[4]); // torch.Size((2048, 70000))
        QCOMPARE(v[1], v[5]); // (70000, 300)
        QCOMPARE(plan->at(plan->at(v[0]).items[0]).items[1], plan->at(v[1]).items[0]); // 70000
        QVERIFY(v[2] != v[6]);                                                         // two lists
        QVERIFY(v[3] != v[7]); // two objects
    }

    void otherPicklesAreLeftToTheGeneralMachine_data() {
        QTest::addColumn<std::string>("pickle");
        QTest::newRow("a call of posix.system") << wrapped([](Pickle& p) {
            p.stackGlobal("posix", "system").shortUnicode("echo").op(uint8_t(0x85)).reduce();
        });
        QTest::newRow("an unknown global") << wrapped([](Pickle& p) {
            p.stackGlobal("pathlib", "PosixPath").mark().shortUnicode("/x").tuple().reduce();
        });
        QTest::newRow("a data global called") << wrapped([](Pickle& p) { p.orderedDict(); });
        QTest::newRow("a float") << wrapped([](Pickle& p) { p.binfloat(0.5); });
        QTest::newRow("a list in itself")
            << wrapped([](Pickle& p) { p.emptyList().memoize().binget(0).op('a'); });
        QTest::newRow("a dict changed after its use") << wrapped([](Pickle& p) {
            p.emptyDict().memoize().op(uint8_t(0x85)).binget(0);
            p.shortUnicode("k").binint1(1).op('s');
        });
        QTest::newRow("an object built twice") << wrapped([](Pickle& p) {
            p.stackGlobal("torch.distributed.checkpoint.metadata", "Metadata").emptyTuple();
            p.op(uint8_t(0x81)).emptyDict().build().emptyDict().build();
        });
        QTest::newRow("100 nested lists") << wrapped([](Pickle& p) {
            for (int i = 0; i < 100; ++i)
                p.emptyList();
            for (int i = 0; i < 99; ++i)
                p.op('a');
        });
        QTest::newRow("a string that is not UTF-8")
            << wrapped([](Pickle& p) { p.shortUnicode(std::string("\xff", 1)); });
        QTest::newRow("bytes") << wrapped([](Pickle& p) { p.shortBinbytes("x"); });
        QTest::newRow("a memo index far ahead")
            << wrapped([](Pickle& p) { p.emptyList().longBinput(4000000000u); });
        QTest::newRow("a memo get of nothing") << wrapped([](Pickle& p) { p.binget(3); });
        QTest::newRow("protocol 1 GLOBAL")
            << wrapped([](Pickle& p) { p.global("torch", "float32"); });
        QTest::newRow("a persistent id") << wrapped([](Pickle& p) { p.shortUnicode("x").op('Q'); });
        QTest::newRow("a long int") << wrapped(
            [](Pickle& p) { p.long1(std::string("\x00\x00\x00\x00\x00\x00\x00\x00\x01", 9)); });
        QTest::newRow("no STOP") << Pickle().proto(4).emptyList().bytes;
        QTest::newRow("a stack underflow") << wrapped([](Pickle& p) { p.mark().op('a'); });
        // APPENDS whose list lies below an enclosing mark: the general machine
        // and Python refuse it as an underflow.
        QTest::newRow("APPENDS below a mark") << wrapped(
            [](Pickle& p) { p.emptyList().mark().mark().binint1(5).appends().emptyList(); });
    }
    void otherPicklesAreLeftToTheGeneralMachine() {
        QFETCH(std::string, pickle);
        QVERIFY(!dcp::PlanTree::read(pickle).has_value());
    }
};

QTEST_GUILESS_MAIN(TestPlanTree)
#include "tst_plantree.moc"
