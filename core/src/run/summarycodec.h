#pragma once

#include "ckptscope/run/summarycache.h"

#include <optional>
#include <string>
#include <string_view>

namespace ckptscope {

// Entry format version: bump on any change to the layout below, or to what
// a summary holds (2: kSummaryHistogramBins went from 256 to 64; entries of
// version 1 are rebuilt; 3: the identity's validator, for files by URL; 4: a
// zero extreme is +0, where older entries may hold -0; 5: the optimizer's
// updates and the model they were paired with).
inline constexpr uint32_t kSummaryEntryVersion = 5;

// magic "CKSCSUM\0", u32 version, u32 0, u64 payload length, u64 FNV-1a of
// the payload, then the payload: the identity, then the summary (varint
// counts, doubles as their bits).
std::string encodeSummaryEntry(const FileIdentity& id, const FileSummary& summary);
// Nothing for anything but an intact entry of this version; every count is
// checked against the bytes left before it is used.
std::optional<std::pair<FileIdentity, FileSummary>> decodeSummaryEntry(std::string_view bytes);

uint64_t fnv1a64(std::string_view bytes);

} // namespace ckptscope
