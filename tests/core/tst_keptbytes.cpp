// The buffer that keeps a tensor's bytes between the passes of its
// statistics (stats/keptbytes): granted only inside a Session, to one lease
// at a time, reused while a Session is open and given back after the last.
#include "stats/keptbytes.h"

#include <QTest>

#include <cstring>
#include <memory>
#include <thread>

using ckptscope::stats::KeptBytes;

class TestKeptBytes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void noneOutsideASession() {
        QVERIFY(!KeptBytes::lease(4096).data());
        {
            const KeptBytes::Session session;
            QVERIFY(KeptBytes::lease(4096).data());
        }
        QVERIFY(!KeptBytes::lease(4096).data());
    }

    // One lease at a time, from any thread; then the same memory again.
    void oneLeaseAtATime() {
        const KeptBytes::Session session;
        uint8_t* first = nullptr;
        {
            const KeptBytes::Lease lease = KeptBytes::lease(3 << 20);
            first = lease.data();
            QVERIFY(first);
            std::memset(first, 0x5A, 3 << 20); // all of it writable
            QVERIFY(!KeptBytes::lease(4096).data());
            bool other = true;
            std::thread([&other] { other = KeptBytes::lease(4096).data() != nullptr; }).join();
            QVERIFY(!other);
        }
        const KeptBytes::Lease again = KeptBytes::lease(1 << 20);
        QCOMPARE(again.data(), first); // reused, not made anew
    }

    void noneAboveTheLimit() {
        const KeptBytes::Session session;
        QVERIFY(!KeptBytes::lease(KeptBytes::kMaxBytes + 1).data());
        QVERIFY(!KeptBytes::lease(0).data());
        QVERIFY(KeptBytes::lease(KeptBytes::kMaxBytes).data());
    }

    // Sessions nest (a batch of tensors inside a caller's own); a lease
    // still out when the last one ends keeps its memory until it ends.
    void sessionsNestAndLeasesOutliveThem() {
        auto outer = std::make_unique<KeptBytes::Session>();
        {
            const KeptBytes::Session inner;
            QVERIFY(KeptBytes::lease(4096).data());
        }
        KeptBytes::Lease lease = KeptBytes::lease(1 << 20);
        QVERIFY(lease.data());
        outer.reset();
        std::memset(lease.data(), 1, 1 << 20);
        QVERIFY(!KeptBytes::lease(4096).data());
    }
};

QTEST_GUILESS_MAIN(TestKeptBytes)
#include "tst_keptbytes.moc"
