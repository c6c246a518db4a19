#pragma once

// Bytes in memory that count the reads made of them and the bytes those
// reads asked for: what a test checks to know a feature read no more (or
// no sooner) than it should.
#include "ckptscope/io/bytesource.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace testsupport {

class CountingSource final : public ckptscope::ByteSource {
public:
    CountingSource(std::vector<uint8_t> bytes, std::string name)
        : m_inner(std::move(bytes), std::move(name)) {}
    uint64_t size() const override { return m_inner.size(); }
    void read(uint64_t offset, void* dst, size_t n) const override {
        ++reads;
        bytesRead += n;
        m_inner.read(offset, dst, n);
    }
    const std::string& name() const override { return m_inner.name(); }

    mutable std::atomic<int> reads{0};
    mutable std::atomic<uint64_t> bytesRead{0};

private:
    ckptscope::MemorySource m_inner;
};

} // namespace testsupport
