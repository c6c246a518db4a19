#pragma once

// codeSumStats of raw blocks against computeStats of their decoding, by the
// kernels and thread counts given: the check tst_codesums and tst_blocksums
// share. Needs the core's private headers (core/src on the include path).
#include "statscompare.h"

#include "formats/gguf/ggmlquants.h"
#include "stats/codesums.h"

#include <initializer_list>

namespace testsupport {

struct CodeBlockType {
    ckptscope::Dtype dtype;
    uint32_t ggmlId;
    size_t bytes, values; // per block
};

inline QString kernelName(ckptscope::stats::Kernel k) {
    return k == ckptscope::stats::Kernel::Auto   ? QStringLiteral("auto")
           : k == ckptscope::stats::Kernel::Avx2 ? QStringLiteral("avx2")
                                                 : QStringLiteral("scalar");
}

// Stops at the first failure (QTest::currentTestFailed).
inline void checkCodeSums(const CodeBlockType& type, const std::vector<uint8_t>& raw, int bins,
                          std::initializer_list<ckptscope::stats::Kernel> kernels,
                          const QString& what) {
    using namespace ckptscope;
    const size_t blocks = raw.size() / type.bytes;
    std::vector<float> values(blocks * type.values);
    gguf::dequantizeBlocks(type.ggmlId, raw.data(), blocks, values.data());
    const StatsResult expected = computeStats(values.data(), values.size(), bins);
    const stats::RawReader read = [&raw, &type](uint64_t first, uint64_t n, void* out) {
        std::memcpy(out, raw.data() + first / type.values * type.bytes,
                    n / type.values * type.bytes);
    };
    const ValueReader decoded = [&values](uint64_t first, uint64_t n, float* out) {
        std::memcpy(out, values.data() + first, n * 4);
    };
    for (const stats::Kernel kernel : kernels)
        for (const unsigned threads : {1u, 2u}) {
            StatsOptions options;
            options.bins = bins;
            options.threads = threads;
            compareUpToRounding(
                stats::codeSumStats(type.dtype, values.size(), read, decoded, options, kernel),
                expected,
                QStringLiteral("%1, %2 thread(s): %3")
                    .arg(kernelName(kernel))
                    .arg(threads)
                    .arg(what));
            if (QTest::currentTestFailed())
                return;
        }
}

} // namespace testsupport
