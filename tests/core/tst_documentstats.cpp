// The statistics of many tensors at once (small ones one per thread, large
// ones spread over all threads) are bit for bit those of one tensor at a
// time, in the order asked for; progress rises to 1; a tensor that cannot
// be read fails the whole call with its error. (Which failure comes first:
// tst_blockworkers.)
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/stats/documentstats.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

using namespace ckptscope;
using testsupport::str;

class TestDocumentStats : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_path;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        // 40 small tensors around one larger than kWholeTensorValues.
        std::mt19937 rng(5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        Checkpoint c;
        for (int k = 0; k < 41; ++k) {
            const uint64_t n = k == 20 ? kWholeTensorValues + 1000 : 1 + rng() % 200'000;
            std::vector<float> v(n);
            for (float& f : v)
                f = normal(rng) * float(k + 1);
            if (k % 7 == 3)
                v[n / 2] = std::nanf("");
            c.addTensor({"t" + std::to_string(k), {n}, std::move(v)});
        }
        m_path = str(m_dir.filePath(QStringLiteral("many.oxck")));
        c.save(m_path);
    }

    void manyAtOnceMatchOneByOne() {
        const auto doc = Document::open(m_path);
        std::vector<size_t> indices;
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            indices.push_back(doc->tensors().size() - 1 - i); // backwards, and one twice
        indices.push_back(3);
        for (int bins : {0, 32, 256}) {
            StatsOptions o;
            o.bins = bins;
            std::mutex mutex;
            std::vector<double> seen;
            std::atomic<int> calls = 0;
            o.progress = [&](double p) {
                // Uneven delays before recording: callbacks that are not
                // serialised by the caller arrive here out of order.
                std::this_thread::sleep_for(std::chrono::microseconds(20 * (calls++ % 3)));
                std::lock_guard lock(mutex);
                seen.push_back(p);
            };
            const std::vector<StatsResult> all = computeTensorStats(*doc, indices, o);
            QCOMPARE(all.size(), indices.size());
            StatsOptions single;
            single.bins = bins;
            for (size_t k = 0; k < indices.size(); ++k)
                QVERIFY2(
                    testsupport::sameStats(all[k], computeTensorStats(*doc, indices[k], single)),
                    qPrintable(QStringLiteral("tensor %1, %2 bins").arg(indices[k]).arg(bins)));
            QVERIFY(!seen.empty());
            QCOMPARE(seen.back(), 1.0);
            for (size_t k = 1; k < seen.size(); ++k)
                QVERIFY2(seen[k] >= seen[k - 1], "progress went back");
        }
    }

    void aDamagedTensorFailsTheCall() {
        // Cut the file inside tensor 30: tensors 30 and later cannot be read;
        // the error is the one reading tensor 30 alone gives.
        const std::string cut = str(m_dir.filePath(QStringLiteral("cut.oxck")));
        QVERIFY(QFile::copy(QString::fromStdString(m_path), QString::fromStdString(cut)));
        const auto doc = Document::open(cut);
        const TensorEntry& t30 = doc->tensors()[30];
        QVERIFY(QFile::resize(QString::fromStdString(cut), qint64(t30.dataOffset + 8)));
        std::vector<size_t> indices;
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            indices.push_back(i);
        StatsOptions o;
        o.bins = 32;
        std::string expected;
        try {
            computeTensorStats(*doc, 30, o);
        } catch (const std::exception& e) {
            expected = e.what();
        }
        QVERIFY(!expected.empty());
        try {
            computeTensorStats(*doc, indices, o);
            QFAIL("no error");
        } catch (const std::exception& e) {
            QCOMPARE(std::string(e.what()), expected);
        }
    }
};

QTEST_APPLESS_MAIN(TestDocumentStats)
#include "tst_documentstats.moc"
