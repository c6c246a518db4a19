#include "ckptscope/common/numberformat.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

using namespace ckptscope;

namespace {

using F = std::numeric_limits<float>;

float fromBits(uint32_t b) {
    return std::bit_cast<float>(b);
}

// The fewest significant digits that read back to the same float, found by
// brute force with printf's %e.
std::string fewestDigitsScientific(float v) {
    for (int p = 0; p <= 8; ++p) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*e", p, double(v));
        if (std::bit_cast<uint32_t>(std::strtof(buf, nullptr)) == std::bit_cast<uint32_t>(v))
            return buf;
    }
    return std::string(64, '9');
}

// Reads back to the same bits and is no longer than the shortest scientific
// text (a fixed-point text may carry more digits when it is shorter:
// "100000008" against "1.0000001e+08").
void checkExact(float v) {
    const std::string s = fmt::exact(v);
    const float back = std::strtof(s.c_str(), nullptr);
    QVERIFY2(std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(v),
             qPrintable(QStringLiteral("%1 (bits %2) read back as other bits")
                            .arg(QString::fromStdString(s))
                            .arg(std::bit_cast<uint32_t>(v), 8, 16, QLatin1Char('0'))));
    const std::string sci = fewestDigitsScientific(v);
    QVERIFY2(s.size() <= sci.size(),
             qPrintable(QStringLiteral("%1 is longer than %2")
                            .arg(QString::fromStdString(s), QString::fromStdString(sci))));
}

std::vector<float> edgeFloats() {
    std::vector<float> v = {0.0f,      -0.0f,    F::denorm_min(), -F::denorm_min(), F::min(),
                            -F::min(), F::max(), F::lowest(),     F::epsilon(),     1.0f,
                            -1.0f,     0.1f,     1.0f / 3,        16777216.0f,      16777218.0f,
                            3.4e38f,   1e-45f,   1.17549421e-38f /* largest subnormal */};
    for (uint32_t b : {0x00000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x3f800001u, 0x3effffffu,
                       0x4b7fffffu, 0x4b800001u})
        v.push_back(fromBits(b));
    for (int e = -45; e <= 38; ++e) { // powers of ten and their neighbours
        const float f = std::strtof(("1e" + std::to_string(e)).c_str(), nullptr);
        if (f == 0)
            continue;
        v.push_back(f);
        v.push_back(std::nextafter(f, F::infinity()));
        v.push_back(std::nextafter(f, 0.0f));
    }
    return v;
}

} // namespace

class TestNumberFormat : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exactRoundTripsEdgeFloats() {
        for (float f : edgeFloats()) {
            checkExact(f);
            checkExact(-f);
            if (QTest::currentTestFailed())
                return;
        }
    }
    void exactRoundTripsRandomFloats() {
        std::mt19937 rng(20261201);
        std::uniform_int_distribution<uint32_t> bits;
        int checked = 0;
        while (checked < 200000) {
            const float f = fromBits(bits(rng));
            if (!std::isfinite(f))
                continue;
            checkExact(f);
            if (QTest::currentTestFailed())
                return;
            ++checked;
        }
    }
    void exactSpellsSpecialValues() {
        QCOMPARE(fmt::exact(-0.0f), std::string("-0"));
        QCOMPARE(fmt::exact(0.0f), std::string("0"));
        QCOMPARE(fmt::exact(F::quiet_NaN()), std::string("nan"));
        QCOMPARE(fmt::exact(-F::quiet_NaN()), std::string("nan"));       // no "-nan"
        QCOMPARE(fmt::exact(fromBits(0x7f800001u)), std::string("nan")); // signalling payload
        QCOMPARE(fmt::exact(F::infinity()), std::string("inf"));
        QCOMPARE(fmt::exact(-F::infinity()), std::string("-inf"));
        // Shortest for the float, not the double it widens to.
        QCOMPARE(fmt::exact(0.1f), std::string("0.1"));
        QCOMPARE(fmt::exact(16777217.0f), std::string("16777216"));
    }
    // A column of a table in one notation, every value read back exactly.
    void exactColumnKeepsOneNotation() {
        const std::vector<double> rates{5e-4, 0.0009666666666666667, 0.00047368421052631577};
        QCOMPARE(fmt::exactColumn(rates),
                 (std::vector<std::string>{"0.0005", "0.0009666666666666667",
                                           "0.00047368421052631577"}));
        QCOMPARE(fmt::exact(5e-4), std::string("5e-04")); // what a column must not mix in
        const std::vector<double> small{2e-5, 0.0009666666666666667, 0.0, -3.5,
                                        std::numeric_limits<double>::quiet_NaN()};
        QCOMPARE(fmt::exactColumn(small),
                 (std::vector<std::string>{"2e-05", "9.666666666666667e-04", "0e+00", "-3.5e+00",
                                           "nan"}));
        QCOMPARE(fmt::exactColumn({1e16, 1.5}), (std::vector<std::string>{"1e+16", "1.5e+00"}));
        QCOMPARE(fmt::exactColumn({0.0, 100.25, -7}),
                 (std::vector<std::string>{"0", "100.25", "-7"}));
        std::mt19937_64 rng(11);
        std::vector<double> random;
        for (int i = 0; i < 2000; ++i)
            random.push_back(
                std::ldexp(double(rng() >> 11) / 9007199254740992.0, int(rng() % 80) - 40));
        for (const std::vector<double>& column :
             {random, std::vector<double>(random.begin(), random.begin() + 3)})
            for (size_t i = 0; const std::string& text : fmt::exactColumn(column))
                QCOMPARE(std::strtod(text.c_str(), nullptr), column[i++]);
    }

    void exactDoubleRoundTrips() {
        std::mt19937_64 rng(7);
        for (int i = 0; i < 100000; ++i) {
            const double d = std::bit_cast<double>(rng());
            if (!std::isfinite(d))
                continue;
            const std::string s = fmt::exact(d);
            QVERIFY2(std::bit_cast<uint64_t>(std::strtod(s.c_str(), nullptr)) ==
                         std::bit_cast<uint64_t>(d),
                     s.c_str());
        }
        QCOMPARE(fmt::exact(0.1), std::string("0.1"));
        QCOMPARE(fmt::exact(-std::numeric_limits<double>::infinity()), std::string("-inf"));
    }
    // A complex value as Python writes it (without the parentheses): each
    // part exact, the imaginary part's sign its own (-0 and a negative NaN
    // included), float32 parts as float32.
    void exactComplexSpellsAsPython() {
        const double inf = std::numeric_limits<double>::infinity();
        const double nan = std::numeric_limits<double>::quiet_NaN();
        QCOMPARE(fmt::exactComplex(1.5, -2.25, false), std::string("1.5-2.25j"));
        QCOMPARE(fmt::exactComplex(-0.0, 0.0, false), std::string("-0+0j"));
        QCOMPARE(fmt::exactComplex(0.0, -0.0, false), std::string("0-0j"));
        QCOMPARE(fmt::exactComplex(nan, inf, false), std::string("nan+infj"));
        QCOMPARE(fmt::exactComplex(-inf, -nan, false), std::string("-inf-nanj"));
        QCOMPARE(fmt::exactComplex(0.1, 0.1, false), std::string("0.1+0.1j"));
        QCOMPARE(fmt::exactComplex(double(0.1f), double(3.4028235e38f), true),
                 std::string("0.1+3.4028235e+38j"));
        QCOMPARE(fmt::exactComplex(5e-324, 1e300, false), std::string("5e-324+1e+300j"));
    }
    void displayUsesSevenSignificantDigits() {
        QCOMPARE(fmt::display(0.1), std::string("0.1"));
        QCOMPARE(fmt::display(1.0 / 3), std::string("0.3333333"));
        QCOMPARE(fmt::display(-2.0 / 3), std::string("-0.6666667"));
        QCOMPARE(fmt::display(1234567.0), std::string("1234567"));
        QCOMPARE(fmt::display(12345678.0), std::string("1.234568e+07"));
        QCOMPARE(fmt::display(double(F::lowest())), std::string("-3.402823e+38"));
        QCOMPARE(fmt::display(double(F::denorm_min())), std::string("1.401298e-45"));
        QCOMPARE(fmt::display(-0.0), std::string("-0"));
        QCOMPARE(fmt::display(0.0), std::string("0"));
        // Display text of an f32 reads back within 7 digits of it.
        std::mt19937 rng(3);
        std::uniform_int_distribution<uint32_t> bits;
        for (int i = 0; i < 20000; ++i) {
            const float f = fromBits(bits(rng));
            if (!std::isfinite(f) || f == 0)
                continue;
            const double back = std::strtod(fmt::display(double(f)).c_str(), nullptr);
            QVERIFY(std::fabs(back - double(f)) <= 5e-7 * std::fabs(double(f)));
        }
    }
    void displaySpellsSpecialAndMissingValues() {
        QCOMPARE(fmt::display(std::numeric_limits<double>::quiet_NaN()), std::string("nan"));
        QCOMPARE(fmt::display(-std::numeric_limits<double>::quiet_NaN()), std::string("nan"));
        QCOMPARE(fmt::display(std::numeric_limits<double>::infinity()), std::string("inf"));
        QCOMPARE(fmt::display(-std::numeric_limits<double>::infinity()), std::string("-inf"));
        QCOMPARE(fmt::display(std::optional<double>()), std::string(fmt::kMissing));
        QCOMPARE(fmt::display(std::optional<double>(2.5)), std::string("2.5"));
        QCOMPARE(std::string(fmt::kMissing), std::string("\u2013")); // en dash
    }
    void bytes() {
        QCOMPARE(fmt::bytes(0), std::string("0 B"));
        QCOMPARE(fmt::bytes(1023), std::string("1023 B"));
        QCOMPARE(fmt::bytes(1024), std::string("1.0 KiB"));
        QCOMPARE(fmt::bytes(1536), std::string("1.5 KiB"));
        QCOMPARE(fmt::bytes(10 * 1024 * 1024 + 512 * 1024), std::string("10.5 MiB"));
        QCOMPARE(fmt::bytes(uint64_t(3) << 30), std::string("3.0 GiB"));
        QCOMPARE(fmt::bytes(uint64_t(1) << 40), std::string("1.0 TiB"));
        QCOMPARE(fmt::bytes(uint64_t(1) << 50), std::string("1.0 PiB"));
        QCOMPARE(fmt::bytes(UINT64_MAX), std::string("16.0 EiB"));
        // The unit follows the rounded value: never "1024.0 KiB".
        QCOMPARE(fmt::bytes((1 << 20) - 1), std::string("1.0 MiB"));
        QCOMPARE(fmt::bytes((uint64_t(1) << 30) - 1), std::string("1.0 GiB"));
        QCOMPARE(fmt::bytes(1023 * 1024 + 900), std::string("1023.9 KiB"));
    }
    void grouped() {
        QCOMPARE(fmt::grouped(0), std::string("0"));
        QCOMPARE(fmt::grouped(999), std::string("999"));
        QCOMPARE(fmt::grouped(1000), std::string("1,000"));
        QCOMPARE(fmt::grouped(123456), std::string("123,456"));
        QCOMPARE(fmt::grouped(1234567), std::string("1,234,567"));
        QCOMPARE(fmt::grouped(UINT64_MAX), std::string("18,446,744,073,709,551,615"));
    }
    void counted() {
        QCOMPARE(fmt::counted(0, "tensor", "tensors"), std::string("0 tensors"));
        QCOMPARE(fmt::counted(1, "tensor", "tensors"), std::string("1 tensor"));
        QCOMPARE(fmt::counted(2, "entry", "entries"), std::string("2 entries"));
        QCOMPARE(fmt::counted(1001, "tensor", "tensors"), std::string("1,001 tensors"));
    }
    void shape() {
        QCOMPARE(fmt::shape({}), std::string("[]"));
        QCOMPARE(fmt::shape({0}), std::string("[0]"));
        QCOMPARE(fmt::shape({2, 3}), std::string("[2, 3]"));
        QCOMPARE(fmt::shape({1, UINT64_MAX}), std::string("[1, 18446744073709551615]"));
    }
};

QTEST_APPLESS_MAIN(TestNumberFormat)
#include "tst_numberformat.moc"
