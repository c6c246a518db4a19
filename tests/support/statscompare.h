#pragma once

// Statistics computed another way (levels, code sums) against those of the
// decoded values (computeStats): counts, extremes and histogram equal, sums
// within the rounding of their order.
#include "ckptscope/document/document.h"
#include "ckptscope/formats/gguf/syntheticgguf.h"
#include "ckptscope/stats/tensorstats.h"

#include "testsupport.h"

#include <QString>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

namespace testsupport {

inline bool nearRelative(double a, double b, double rel) {
    return a == b || std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

inline void compareUpToRounding(const ckptscope::StatsResult& got,
                                const ckptscope::StatsResult& values, const QString& what) {
    const ckptscope::TensorStats &a = got.stats, &b = values.stats;
    const QByteArray w = what.toUtf8();
    QVERIFY2(a.count == b.count && a.finite == b.finite && a.nan == b.nan, w);
    QVERIFY2(a.posInf == b.posInf && a.negInf == b.negInf && a.zeros == b.zeros, w);
    QVERIFY2(a.min == b.min && a.max == b.max, w);
    QVERIFY2(a.mean.has_value() == b.mean.has_value(), w);
    if (a.mean) {
        const double scale = std::max(std::fabs(*b.min), std::fabs(*b.max));
        QVERIFY2(std::fabs(*a.mean - *b.mean) <= 1e-9 * scale, w);
        QVERIFY2(nearRelative(*a.std, *b.std, 1e-6), w);
        QVERIFY2(std::fabs(a.finiteSum - b.finiteSum) <= 1e-9 * scale * double(a.finite), w);
        QVERIFY2(nearRelative(a.l2, b.l2, 1e-9), w);
    }
    QVERIFY2(got.histogram.lo == values.histogram.lo, w);
    QVERIFY2(got.histogram.hi == values.histogram.hi, w);
    QVERIFY2(got.histogram.counts == values.histogram.counts, w);
}

// Each tensor of type `dtype` in the corpus's valid GGUF files, opened as a
// Document, with ggml's decoded values of it; returns how many there were.
inline int forEachCorpusTensor(
    ckptscope::Dtype dtype,
    const std::function<void(const ckptscope::Document& doc, size_t index,
                             const std::vector<float>& values, const QString& what)>& fn) {
    int seen = 0;
    guarded([&] {
        forEachGgufReading(
            [&](const QString& file, const nlohmann::json&, const QString& expected) {
                const auto doc =
                    ckptscope::Document::open(str(ggufCorpus() + QStringLiteral("/valid/") + file));
                for (size_t i = 0; i < doc->tensors().size(); ++i) {
                    if (doc->tensors()[i].dtype != dtype || QTest::currentTestFailed())
                        continue;
                    const std::string bytes = readFile(expected + QStringLiteral(".%1.f32").arg(i));
                    std::vector<float> values(bytes.size() / 4);
                    std::memcpy(values.data(), bytes.data(), values.size() * 4);
                    QVERIFY2(values.size() == doc->tensors()[i].dataLen, qPrintable(file));
                    fn(*doc, i, values, QStringLiteral("%1 tensor %2").arg(file).arg(i));
                    ++seen;
                }
            });
    });
    return seen;
}

// The generator's model of `type` with about `bytes` of tensor data, written
// in `dir` and opened.
inline std::shared_ptr<const ckptscope::Document>
openSyntheticModel(const QTemporaryDir& dir, ckptscope::Dtype type, uint64_t bytes) {
    ckptscope::gguf::SyntheticGgufSpec spec;
    spec.type = type;
    spec.totalBytes = bytes;
    const std::string path = str(dir.filePath(QStringLiteral("model.gguf")));
    ckptscope::gguf::writeSyntheticGguf(path, spec);
    return ckptscope::Document::open(path);
}

// The indices of doc's tensors of type `dtype`, in file order.
inline std::vector<size_t> tensorsOfType(const ckptscope::Document& doc, ckptscope::Dtype dtype) {
    std::vector<size_t> indices;
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        if (doc.tensors()[i].dtype == dtype)
            indices.push_back(i);
    return indices;
}

} // namespace testsupport
