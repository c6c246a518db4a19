#include "formats/pytorch/ziparchive.h"

#include "ckptscope/formats/checkpointerror.h"

#include <algorithm>
#include <cstring>

namespace ckptscope::pytorch {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEnd = 0x06054b50;
constexpr uint32_t kEnd64 = 0x06064b50;
constexpr uint32_t kEnd64Locator = 0x07064b50;
constexpr uint64_t kEndSize = 22, kLocatorSize = 20, kEnd64Size = 56;
constexpr uint64_t kCentralSize = 46, kLocalSize = 30;
constexpr uint64_t kWindow = 4096; // bytes read once at each end of the archive

uint64_t le(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

[[noreturn]] void fail(const ByteSource& source, CheckpointError::Kind kind, uint64_t offset,
                       const std::string& what) {
    throw CheckpointError(kind, source.name() + ": byte " + std::to_string(offset) + ": " + what,
                          offset);
}

} // namespace

bool looksLikeZip(const ByteSource& source, uint64_t begin) {
    uint8_t b[4];
    if (source.size() < begin + 4)
        return false;
    source.read(begin, b, 4);
    return le(b, 4) == kLocalHeader;
}

ZipArchive::ZipArchive(const ByteSource& source, uint64_t begin, uint64_t end)
    : m_source(source), m_begin(begin), m_end(end) {
    using K = CheckpointError::Kind;
    // The end record lies in the last 22 + 65535 bytes (its comment is at
    // most 65535 bytes); search backwards for its signature.
    const uint64_t span = std::min<uint64_t>(end - begin, kEndSize + 65535);
    if (span < kEndSize)
        fail(source, K::Truncated, end, "truncated zip archive: no end of central directory");
    // The first and last few KiB are read once: they hold the end record
    // (torch writes no comment), the central directory, data.pkl and most
    // local headers, which would otherwise be as many small reads (a DCP
    // file holds one archive per chunk).
    m_head.resize(size_t(std::min<uint64_t>(end - begin, kWindow)));
    source.read(begin, m_head.data(), m_head.size());
    m_tail.resize(size_t(std::min<uint64_t>(end - begin, kWindow)));
    m_tailAt = end - m_tail.size();
    source.read(m_tailAt, m_tail.data(), m_tail.size());
    std::vector<uint8_t> tail(m_tail.end() - long(kEndSize), m_tail.end());
    uint64_t searched = kEndSize;
    if (le(tail.data(), 4) != kEnd || le(&tail[20], 2) != 0) {
        tail.resize(span);
        source.read(end - span, tail.data(), span);
        searched = span;
    }
    int64_t at = -1;
    for (int64_t i = int64_t(searched - kEndSize); i >= 0; --i)
        if (le(&tail[size_t(i)], 4) == kEnd &&
            uint64_t(i) + kEndSize + le(&tail[size_t(i) + 20], 2) == searched) {
            at = i;
            break;
        }
    if (at < 0)
        fail(source, K::Truncated, end,
             "truncated zip archive: no end of central directory record in its last " +
                 std::to_string(span) + " bytes");
    const uint8_t* e = &tail[size_t(at)];
    const uint64_t endOffset = end - searched + uint64_t(at);
    uint64_t entries = le(e + 10, 2), cdSize = le(e + 12, 4), cdOffset = le(e + 16, 4);
    // ZIP64: a locator just before the end record points to the 64-bit one.
    if (endOffset >= begin + kLocatorSize) {
        uint8_t loc[kLocatorSize];
        readAt(endOffset - kLocatorSize, loc, kLocatorSize);
        if (le(loc, 4) == kEnd64Locator) {
            const uint64_t e64 = begin + le(loc + 8, 8);
            if (e64 < begin || e64 > endOffset - kLocatorSize ||
                endOffset - kLocatorSize - e64 < kEnd64Size)
                fail(source, K::Truncated, endOffset - kLocatorSize,
                     "the ZIP64 end record lies outside the archive");
            uint8_t r[kEnd64Size];
            readAt(e64, r, kEnd64Size);
            if (le(r, 4) != kEnd64)
                fail(source, K::Invalid, e64, "expected the ZIP64 end of central directory record");
            entries = le(r + 32, 8);
            cdSize = le(r + 40, 8);
            cdOffset = le(r + 48, 8);
        }
    }
    if (cdOffset > end - begin || cdSize > end - begin - cdOffset)
        fail(source, K::Truncated, endOffset,
             "truncated zip archive: the central directory (" + std::to_string(cdSize) +
                 " bytes at " + std::to_string(cdOffset) + ") lies past the end");
    if (entries > cdSize / kCentralSize)
        fail(source, K::Invalid, endOffset,
             "the end record claims " + std::to_string(entries) +
                 " records, more than its central directory of " + std::to_string(cdSize) +
                 " bytes holds");
    readCentralDirectory(begin + cdOffset, cdSize, entries);
}

void ZipArchive::readCentralDirectory(uint64_t cdOffset, uint64_t cdSize, uint64_t entries) {
    using K = CheckpointError::Kind;
    std::vector<uint8_t> cd(cdSize);
    readAt(cdOffset, cd.data(), cdSize);
    m_records.reserve(entries);
    m_byName.reserve(entries);
    size_t p = 0;
    for (uint64_t i = 0; i < entries; ++i) {
        const uint64_t here = cdOffset + p;
        if (cd.size() - p < kCentralSize || le(&cd[p], 4) != kCentralHeader)
            fail(m_source, K::Invalid, here,
                 "central directory record " + std::to_string(i) + " is damaged");
        const uint8_t* h = &cd[p];
        const uint64_t method = le(h + 10, 2), nameLen = le(h + 28, 2), extraLen = le(h + 30, 2),
                       commentLen = le(h + 32, 2);
        uint64_t csize = le(h + 20, 4), usize = le(h + 24, 4), local = le(h + 42, 4);
        if (cd.size() - p - kCentralSize < nameLen + extraLen + commentLen)
            fail(m_source, K::Truncated, here,
                 "central directory record " + std::to_string(i) + " runs past the directory");
        ZipRecord r;
        r.name.assign(reinterpret_cast<const char*>(h + kCentralSize), nameLen);
        // ZIP64 extra field: the 64-bit values of the fields that hold 0xffffffff.
        for (size_t x = 0; x + 4 <= extraLen;) {
            const uint8_t* f = h + kCentralSize + nameLen + x;
            const uint64_t id = le(f, 2), len = le(f + 2, 2);
            if (x + 4 + len > extraLen)
                break;
            if (id == 1) {
                size_t v = 0;
                for (uint64_t* field : {&usize, &csize, &local})
                    if (*field == 0xffffffffu && v + 8 <= len) {
                        *field = le(f + 4 + v, 8);
                        v += 8;
                    }
            }
            x += 4 + len;
        }
        if (method != 0)
            fail(m_source, K::Invalid, here,
                 "record \"" + r.name + "\" is compressed (method " + std::to_string(method) +
                     ", " + std::to_string(usize) +
                     " bytes claimed); torch stores every record and compressed ones are not read");
        if (csize != usize)
            fail(m_source, K::Invalid, here,
                 "record \"" + r.name + "\" is stored with " + std::to_string(csize) +
                     " bytes but claims " + std::to_string(usize));
        const uint64_t span = m_end - m_begin;
        if (local > span || span - local < kLocalSize)
            fail(m_source, K::Truncated, here,
                 "truncated zip archive: record \"" + r.name + "\"'s header lies past the end");
        r.dataOffset = local; // the local header's, until resolveLocalHeaders
        r.size = usize;
        m_records.push_back(std::move(r)); // reserved: names stay where they are
        if (!m_byName.emplace(m_records.back().name, m_records.size() - 1).second)
            fail(m_source, K::Invalid, here, "duplicate record \"" + m_records.back().name + "\"");
        p += kCentralSize + nameLen + extraLen + commentLen;
    }
    resolveLocalHeaders();
}

void ZipArchive::resolveLocalHeaders() {
    using K = CheckpointError::Kind;
    // Each record's data starts after its local header, whose name and extra
    // field may differ in length from the central directory's. An optimizer
    // state holds a storage per tensor (200 000 records of a few hundred
    // bytes): one read per header was 200 000 system calls. Headers are read
    // in file order, as many at once as lie within one window, so dense
    // archives take a read per window and sparse ones a read per header.
    constexpr uint64_t kBatch = 64 * 1024;
    std::vector<uint32_t> order(m_records.size());
    for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return m_records[a].dataOffset < m_records[b].dataOffset;
    });
    const uint64_t span = m_end - m_begin;
    std::vector<uint8_t> window;
    uint64_t windowAt = 0;
    for (size_t k = 0; k < order.size(); ++k) {
        ZipRecord& r = m_records[order[k]];
        const uint64_t local = r.dataOffset; // checked: local + kLocalSize <= span
        if (window.empty() || local < windowAt || local + kLocalSize > windowAt + window.size()) {
            // Extend the window over the following headers while they fit.
            uint64_t last = local + kLocalSize;
            for (size_t j = k + 1; j < order.size(); ++j) {
                const uint64_t next = m_records[order[j]].dataOffset + kLocalSize;
                if (next - local > kBatch)
                    break;
                last = next;
            }
            windowAt = local;
            window.resize(size_t(last - local));
            readAt(m_begin + local, window.data(), window.size());
        }
        const uint8_t* lh = window.data() + (local - windowAt);
        if (le(lh, 4) != kLocalHeader)
            fail(m_source, K::Invalid, m_begin + local,
                 "expected the local header of record \"" + r.name + "\"");
        const uint64_t dataAt = local + kLocalSize + le(lh + 26, 2) + le(lh + 28, 2);
        if (dataAt > span || span - dataAt < r.size)
            fail(m_source, K::Truncated, m_begin + local,
                 "truncated zip archive: record \"" + r.name + "\" (" + std::to_string(r.size) +
                     " bytes) runs past the end");
        r.dataOffset = m_begin + dataAt;
    }
}

const ZipRecord* ZipArchive::find(std::string_view name, size_t near) const {
    if (near < m_records.size() && m_records[near].name == name)
        return &m_records[near];
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : &m_records[it->second];
}

std::string ZipArchive::read(const ZipRecord& record, uint64_t limit) const {
    if (record.size > limit)
        fail(m_source, CheckpointError::Kind::Invalid, record.dataOffset,
             "record \"" + record.name + "\" holds " + std::to_string(record.size) +
                 " bytes, more than the " + std::to_string(limit) + " read whole");
    std::string bytes(record.size, '\0');
    readAt(record.dataOffset, bytes.data(), bytes.size());
    return bytes;
}

void ZipArchive::readAt(uint64_t offset, void* dst, uint64_t n) const {
    if (n == 0) // an empty record: its buffer may be null
        return;
    if (offset >= m_begin && offset - m_begin <= m_head.size() &&
        n <= m_head.size() - (offset - m_begin))
        std::memcpy(dst, m_head.data() + (offset - m_begin), size_t(n));
    else if (offset >= m_tailAt && offset - m_tailAt <= m_tail.size() &&
             n <= m_tail.size() - (offset - m_tailAt))
        std::memcpy(dst, m_tail.data() + (offset - m_tailAt), size_t(n));
    else
        m_source.read(offset, dst, size_t(n));
}

} // namespace ckptscope::pytorch
