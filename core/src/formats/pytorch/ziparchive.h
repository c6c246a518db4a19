#pragma once

#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ckptscope::pytorch {

// One record of a stored (uncompressed) zip archive: where its bytes lie.
struct ZipRecord {
    std::string name;
    uint64_t dataOffset = 0; // absolute, in the source
    uint64_t size = 0;
};

// The records of a zip archive that lies in bytes [begin, end) of a source
// (a whole .pt file, or a torch.save embedded in a DCP file), read from its
// central directory: local headers may hold zeros (torch writes sizes in a
// data descriptor). Only stored records are accepted: torch never
// compresses, and inflating is how a zip bomb works. CRCs are not checked.
// Throws CheckpointError: "truncated" (no end of central directory, a
// record past the end), "compressed", "duplicate record".
class ZipArchive {
public:
    ZipArchive(const ByteSource& source, uint64_t begin, uint64_t end);
    ZipArchive(const ZipArchive&) = delete; // m_byName views the records' names
    ZipArchive& operator=(const ZipArchive&) = delete;

    const std::vector<ZipRecord>& records() const { return m_records; }
    // The record of that name, or null. `near` is where the caller expects
    // it, checked before the hash lookup: storages are named in the order
    // torch wrote their records, and 200 000 lookups were 200 000 cache
    // misses.
    const ZipRecord* find(std::string_view name, size_t near = SIZE_MAX) const;
    // The record's bytes; refuses one over `limit` bytes (a pickle read whole).
    std::string read(const ZipRecord& record, uint64_t limit) const;

private:
    void readCentralDirectory(uint64_t cdOffset, uint64_t cdSize, uint64_t entries);
    void resolveLocalHeaders();
    // Reads from the head or tail window when the bytes lie in one.
    void readAt(uint64_t offset, void* dst, uint64_t n) const;
    const ByteSource& m_source;
    uint64_t m_begin, m_end;
    std::vector<uint8_t> m_head, m_tail; // the archive's first and last bytes
    uint64_t m_tailAt = 0;
    std::vector<ZipRecord> m_records;
    std::unordered_map<std::string_view, size_t> m_byName; // into m_records, never regrown
};

// True when the bytes at `begin` start a zip local header ("PK\3\4").
bool looksLikeZip(const ByteSource& source, uint64_t begin = 0);

} // namespace ckptscope::pytorch
