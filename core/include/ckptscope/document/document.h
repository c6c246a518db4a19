#pragma once

#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/oxckindex.h"
#include "ckptscope/io/bytesource.h"
#include "ckptscope/io/mappedfile.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

enum class Format { Oxck, Gradient, Safetensors };
const char* formatName(Format format);

// What the first bytes say the file is. Throws OpenError for anything else.
Format detectFormat(const ByteSource& source);

// A file that could not be opened; what() is "FILE: what went wrong" (or
// "FILE:LINE:COL: …" for JSON) and detail() the part after the file name,
// with a JSON position spelled "line L, column C: …", for front ends that
// format it their way.
class OpenError : public std::exception {
public:
    OpenError(std::string file, std::string message);
    const char* what() const noexcept override { return m_message.c_str(); }
    const std::string& file() const { return m_file; }
    std::string detail() const;

private:
    std::string m_file;
    std::string m_message;
};

// What a metadata value is, so front ends can show it in their own way
// without knowing which format uses which key.
enum class MetadataKind {
    Text,      // shown as stored
    Integer,   // decimal digits
    Timestamp, // Unix time in seconds, decimal
};

struct MetadataRow {
    std::string key;
    std::string value; // as stored (or, for summary fields, as the file spells them)
    MetadataKind kind = MetadataKind::Text;
};

// One format-neutral, immutable view of an opened file. The UI and the CLI
// talk only to this. Tensor values are read on demand from the file.
class Document {
public:
    // Detects the format by content and indexes the file. Throws OpenError.
    static std::shared_ptr<const Document> open(const std::string& path);
    // Same, over bytes already in hand (fuzzers, tests).
    static std::shared_ptr<const Document> open(std::shared_ptr<const ByteSource> source);

    Format format() const { return m_format; }
    const std::string& path() const { return m_source->name(); }
    uint64_t fileSize() const { return m_source->size(); }

    // OXCK header; version is 0 and flags 0 for gradient files.
    uint32_t version() const { return m_index.version; }
    uint64_t flags() const { return m_index.flags; }
    const std::vector<TensorEntry>& tensors() const { return m_index.tensors; }
    const std::vector<IndexWarning>& warnings() const { return m_index.warnings; }
    // Metadata as key/value rows (OXCK metadata, or gradient summary fields).
    const std::vector<std::pair<std::string, std::string>>& metadata() const { return m_metadata; }
    // The same rows, each saying what kind of value it holds.
    const std::vector<MetadataRow>& metadataRows() const { return m_metadataRows; }
    // Sum of element counts (saturating) and of their sizes in bytes (4 per
    // element for OXCK, the dtype's size for safetensors).
    uint64_t numParams() const;
    uint64_t totalBytes() const;
    // True for formats whose tensors() list the file's content (OXCK,
    // safetensors), false for gradient checkpoints.
    bool hasTensors() const { return m_format != Format::Gradient; }

    // Gradient checkpoints only.
    const GradientCheckpoint* gradient() const { return m_gradient ? &*m_gradient : nullptr; }
    // The graph's topological order and the nodes left out of it, computed
    // once when the file is opened (empty for tensor files): a pass over a
    // large graph costs as much as validating it.
    const ComputationGraphStore::TopologicalSplit& graphSplit() const { return m_graphSplit; }

    // Reads count values of tensor `index` starting at element `first`.
    // Throws SourceChangedError if the file changed while reading.
    // Values of any dtype arrive converted to f32 (exact for F32, F16, BF16,
    // F8, 8/16-bit integers and BOOL; rounded for 32/64-bit integers and F64).
    void readValues(size_t index, uint64_t first, uint64_t count, float* out) const;
    // The same in double (F64 statistics; exact for every dtype but 64-bit
    // integers beyond 2^53).
    void readValues(size_t index, uint64_t first, uint64_t count, double* out) const;
    // The stored little-endian bytes of count elements in the tensor's dtype.
    void readRawValues(size_t index, uint64_t first, uint64_t count, void* out) const;
    // Where the values of an F32 tensor lie in the file's memory map, for
    // scanning them in place (statistics, comparison); empty for other
    // dtypes, or when mapForScan says to copy for this use: then read them.
    std::optional<MappedValues> mappedValues(size_t index,
                                             ScanUse use = ScanUse::Statistics) const;
    const ByteSource& source() const { return *m_source; }

private:
    Document() = default;

    Format m_format = Format::Oxck;
    std::shared_ptr<const ByteSource> m_source;
    OxckIndex m_index;
    std::vector<std::pair<std::string, std::string>> m_metadata;
    std::vector<MetadataRow> m_metadataRows;
    std::optional<GradientCheckpoint> m_gradient;
    ComputationGraphStore::TopologicalSplit m_graphSplit;
};

} // namespace ckptscope
