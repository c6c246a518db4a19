#include "ckptscope/export/npzwriter.h"
#include "export/tensorskept.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/export/safetensorswriter.h"

#include <zlib.h>

#include <algorithm>
#include <vector>

namespace ckptscope {

namespace {

constexpr uint32_t kMax32 = 0xffffffffu;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1; // 1980-01-01: reproducible archives
constexpr uint16_t kUtf8Names = 1 << 11;

void put16(std::string& s, uint16_t v) {
    s += char(v & 0xff);
    s += char(v >> 8);
}
void put32(std::string& s, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        s += char((v >> (8 * i)) & 0xff);
}
void put64(std::string& s, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        s += char((v >> (8 * i)) & 0xff);
}

struct Entry {
    std::string name;
    uint64_t size = 0;     // the .npy bytes
    uint64_t headerAt = 0; // local header offset
    uint32_t crc = 0;
    bool zip64 = false;
};

// Counts bytes and the CRC of what passes through to the archive.
class CrcStream {
public:
    CrcStream(std::ostream& out, uint64_t& position) : m_out(out), m_position(position) {}
    void write(const char* data, size_t n) {
        m_crc = uint32_t(::crc32_z(m_crc, reinterpret_cast<const Bytef*>(data), n));
        m_out.write(data, std::streamsize(n));
        m_position += n;
    }
    uint32_t crc() const { return m_crc; }

private:
    std::ostream& m_out;
    uint64_t& m_position;
    uint32_t m_crc = uint32_t(::crc32_z(0, nullptr, 0));
};

// A streambuf that feeds CrcStream, so the .npy writer writes through it.
class CrcBuf : public std::streambuf {
public:
    explicit CrcBuf(CrcStream& s) : m_s(s) {}

protected:
    std::streamsize xsputn(const char* data, std::streamsize n) override {
        m_s.write(data, size_t(n));
        return n;
    }
    int_type overflow(int_type c) override {
        if (c != traits_type::eof()) {
            const char ch = char(c);
            m_s.write(&ch, 1);
        }
        return traits_type::not_eof(c);
    }

private:
    CrcStream& m_s;
};

// The local header of entry e, whose name holds tensor `tensor`; its CRC-32
// is 0 at crcAt, patched once the values are written.
std::string localHeader(const Entry& e, const Document& doc, const std::string& tensor,
                        size_t& crcAt) {
    std::string local;
    put32(local, 0x04034b50);
    put16(local, e.zip64 ? 45 : 20);
    put16(local, kUtf8Names);
    put16(local, 0); // stored
    put16(local, 0);
    put16(local, kDosDate);
    crcAt = local.size();
    put32(local, 0); // CRC-32, patched below
    put32(local, e.zip64 ? kMax32 : uint32_t(e.size));
    put32(local, e.zip64 ? kMax32 : uint32_t(e.size));
    put16(local, uint16_t(std::min<size_t>(e.name.size(), 0xffff)));
    put16(local, e.zip64 ? 20 : 0);
    if (e.name.size() > 0xffff)
        throw ExportError(doc.path() + ": tensor \"" + tensor.substr(0, 80) +
                          "…\": the name is too long for a ZIP entry (65 531 bytes at most)");
    local += e.name;
    if (e.zip64) {
        put16(local, 0x0001);
        put16(local, 16);
        put64(local, e.size);
        put64(local, e.size);
    }
    return local;
}

// One central directory record.
void putCentralRecord(std::string& cd, const Entry& e) {
    const bool bigOffset = e.headerAt >= kMax32;
    put32(cd, 0x02014b50);
    put16(cd, 45 | (3 << 8)); // made by: Unix, ZIP 4.5
    put16(cd, e.zip64 || bigOffset ? 45 : 20);
    put16(cd, kUtf8Names);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, kDosDate);
    put32(cd, e.crc);
    put32(cd, e.zip64 ? kMax32 : uint32_t(e.size));
    put32(cd, e.zip64 ? kMax32 : uint32_t(e.size));
    put16(cd, uint16_t(e.name.size()));
    const uint16_t extra = uint16_t((e.zip64 ? 16 : 0) + (bigOffset ? 8 : 0));
    put16(cd, extra ? uint16_t(extra + 4) : 0);
    put16(cd, 0);              // comment
    put16(cd, 0);              // disk
    put16(cd, 0);              // internal attributes
    put32(cd, 0100644u << 16); // external: a regular file, rw-r--r--
    put32(cd, bigOffset ? kMax32 : uint32_t(e.headerAt));
    cd += e.name;
    if (extra) {
        put16(cd, 0x0001);
        put16(cd, extra);
        if (e.zip64) {
            put64(cd, e.size);
            put64(cd, e.size);
        }
        if (bigOffset)
            put64(cd, e.headerAt);
    }
}

// The central directory of the entries, which starts at cdStart, and the
// end records (ZIP64 when a count or an offset needs it).
std::string centralDirectory(const std::vector<Entry>& entries, uint64_t cdStart) {
    std::string cd;
    for (const Entry& e : entries)
        putCentralRecord(cd, e);
    const uint64_t cdSize = cd.size();
    const uint64_t cdEnd = cdStart + cdSize;
    const bool zip64End = entries.size() >= 0xffff || cdStart >= kMax32 || cdSize >= kMax32;
    if (zip64End) {
        put32(cd, 0x06064b50);
        put64(cd, 44);
        put16(cd, 45 | (3 << 8));
        put16(cd, 45);
        put32(cd, 0);
        put32(cd, 0);
        put64(cd, entries.size());
        put64(cd, entries.size());
        put64(cd, cdSize);
        put64(cd, cdStart);
        put32(cd, 0x07064b50); // locator
        put32(cd, 0);
        put64(cd, cdEnd);
        put32(cd, 1);
    }
    put32(cd, 0x06054b50);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, zip64End ? 0xffff : uint16_t(entries.size()));
    put16(cd, zip64End ? 0xffff : uint16_t(entries.size()));
    put32(cd, zip64End ? kMax32 : uint32_t(cdSize));
    put32(cd, zip64End ? kMax32 : uint32_t(cdStart));
    put16(cd, 0);
    return cd;
}

} // namespace

std::vector<std::string> writeNpz(std::ostream& out, const Document& doc,
                                  const TaskControl& control) {
    checkExportNames(doc, false);
    std::vector<std::string> warnings;
    if (!doc.metadataRows().empty()) // NumPy's archive has no place for it
        warnings.push_back("the metadata (" +
                           fmt::counted(doc.metadataRows().size(), "entry", "entries") +
                           ") is not carried over: .npz holds arrays only");
    const std::vector<size_t> kept = tensorsKept(doc, quantizedLeftOut, warnings);
    std::vector<Entry> entries;
    uint64_t position = 0, totalValues = 0, doneValues = 0;
    for (const size_t i : kept)
        totalValues += doc.tensors()[i].dataLen;
    for (const size_t i : kept) {
        const TensorEntry& t = doc.tensors()[i];
        const NpyLayout layout = npyLayout(doc, i);
        warnings.insert(warnings.end(), layout.notes.begin(), layout.notes.end());
        Entry e;
        e.name = t.name + ".npy";
        const uint64_t valueBytes = t.dataLen * (layout.converted ? 4 : dtypeSize(t.dtype));
        e.size = npyHeader(layout.descr, layout.shape).size() + valueBytes;
        e.headerAt = position;
        e.zip64 = e.size >= kMax32;
        size_t crcAt = 0;
        const std::string local = localHeader(e, doc, t.name, crcAt);
        out.write(local.data(), std::streamsize(local.size()));
        position += local.size();

        CrcStream crc(out, position);
        CrcBuf buf(crc);
        std::ostream npy(&buf);
        TaskControl inner(control.cancel);
        if (control.progress)
            inner.progress = [&](double p) {
                control.report(doneValues + uint64_t(p * double(t.dataLen)), totalValues);
            };
        writeNpy(npy, doc, i, layout, inner);
        doneValues += t.dataLen;
        e.crc = crc.crc();
        // Patch the CRC into the local header, then continue at the end.
        const auto end = out.tellp();
        out.seekp(std::streamoff(e.headerAt + crcAt));
        std::string c;
        put32(c, e.crc);
        out.write(c.data(), 4);
        out.seekp(end);
        if (!out)
            throw ExportError(doc.path() + ": the .npz output is not seekable");
        entries.push_back(std::move(e));
    }
    const std::string cd = centralDirectory(entries, position);
    out.write(cd.data(), std::streamsize(cd.size()));
    control.report(1, 1);
    return warnings;
}

} // namespace ckptscope
