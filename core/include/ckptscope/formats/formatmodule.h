#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ckptscope {

// The formats Ckptscope reads, one per module in formats/<name>/. The
// numbers are stored in the summary cache: never reuse or reorder them.
enum class Format : uint8_t { Oxck = 0, Gradient = 1, Safetensors = 2, Gguf = 3, Pytorch = 4 };

// What a conversion of a model that holds more than its weights writes
// (FormatModule::converted): a DeepSpeed folder's fp32 master weights or its
// module as saved; a DCP folder's model with or without the optimizer's
// state.
struct ConvertChoice {
    bool includeOptimizer = false; // the optimizer's state tensors too
    bool moduleWeights = false;    // DeepSpeed: the module as saved, not the fp32 master weights
};

// A tensor a conversion writes (FormatModule::converted).
struct ConvertedTensor {
    uint32_t tensor = 0; // FormatIndex::tensors
    std::string name;    // as written
    // Written as F32 whatever its dtype: a DeepSpeed buffer, as
    // zero_to_fp32.py writes it (`.float()`).
    bool asF32 = false;
};

// One field of a file's own header as front ends give it: `info --json`
// under `key`, `info`'s Format line as "label text" (or a line of its own).
struct HeaderField {
    std::string key;   // "alignment"
    std::string label; // "alignment", "data from byte"; for a line: "File type"
    std::variant<std::monostate, uint64_t, std::string> value; // JSON: null, a number, a string
    std::string text;  // as text ("1,234"); "" leaves it out of the text
    bool line = false; // a line of its own in `info`, not on the Format line
};

// A file format: how to recognise it from its bytes and how to index it.
// Modules are listed once, in formatModules(); nothing else in the code
// branches on which format a file is when reading it.
struct FormatModule {
    Format format;
    const char* name;        // "oxck": in JSON output and messages
    const char* description; // "OXCK checkpoint": what a front end calls it
    const char* extension;   // ".oxck": only to explain a refused file
    const char* looksFor;    // "the OXCK magic": what the probe looks for, for messages
    // True when the first bytes are this format's. Reads only a few bytes and
    // never looks at the file's name.
    bool (*probe)(const ByteSource& source);
    // Why the bytes are not this format ("" when they pass the probe), for a
    // file whose name says it is; null when the probe's reason is plain.
    std::string (*probeFailure)(const ByteSource& source);
    // Indexes the file: tensors (or a graph), metadata, warnings. Throws the
    // format's error (CheckpointError, GradientError) naming the file, the
    // place and what was expected.
    FormatIndex (*open)(const ByteSource& source);

    // What front ends and packaging derive from the table (dialog filters,
    // the shared-mime-info XML, the .desktop file's MimeType=, the AppStream
    // metainfo; tst_formatmodule checks packaging/ against it):
    // the file-name patterns ("*.oxck"), space-separated;
    const char* patterns = "";
    // the MIME type a desktop registers it under, null for a format that
    // claims no type of its own (JSON);
    const char* mimeType = nullptr;
    // the bytes at offset 0 that mark it, null where it has none.
    const char* magic = nullptr;
    // True where every tensor is F32 (OXCK): `info`'s table has no dtype
    // column.
    bool f32Only = false;
    // True where tensors may be block-quantized (GGUF): `info --json` gives
    // each one's bits per weight, the Overview a table of them by type.
    bool quantized = false;
    // What a file of a multi-file model is called ("shard"; llama.cpp's
    // "split"; a folder format's "file").
    const char* partWord = "shard";
    const char* partWords = "shards";
    // The name `info` gives before the header's fields ("OXCK version 1");
    // null: its description.
    const char* title = nullptr;
    // True where metadata rows carry the file's own type names (GGUF's
    // "u32", "arr[str]"): `info --json` gives them as metadata_types.
    bool typedMetadata = false;
    // True where tensors are pickled objects (torch.save files and the
    // folders made of them): `info --json` lists storages, imports, arrays.
    bool pickled = false;
    // True for a computation graph rather than tensors (gradient
    // checkpoints): compared and charted as graphs.
    bool graph = false;
    // True where tensors are named as llama.cpp names them
    // ("blk.0.attn_q.weight"): a comparison with a Hugging Face model maps
    // the names (and q/k rows) between the two.
    bool llamaNames = false;

    // Per-format hooks, null where the format has no such thing:
    // the first `count` items of a metadata array left in the file, with
    // nested arrays among them and the rest (GGUF);
    MetadataArrayRun (*arrayRun)(const ByteSource& source, const MetadataArray& array,
                                 uint64_t count) = nullptr;
    // items [first, first + count) of one as text.
    std::vector<std::string> (*arrayItems)(const ByteSource& source, const MetadataArray& array,
                                           uint64_t first, uint64_t count) = nullptr;
    // The tensors a conversion writes and the names it writes them under,
    // for a format that holds more than the model (DeepSpeed: the fp32
    // master weights under the parameters' names, not the moments; DCP: the
    // model without the optimizer's state); null where a conversion writes
    // every tensor as it is named.
    std::vector<ConvertedTensor> (*converted)(const FormatIndex& index,
                                              const ConvertChoice& choice) = nullptr;
    // The header's own fields in the order `info` gives them (OXCK: version
    // and flags; GGUF: version, alignment, data offset, file type); null
    // where it has none.
    std::vector<HeaderField> (*headerFields)(const FormatIndex& index) = nullptr;
    // What the Overview says of the model beyond the common rows
    // (GGUF: architecture, model name, file type), label and text.
    std::vector<std::pair<std::string, std::string>> (*summary)(const FormatIndex& index) = nullptr;
};

// A format whose model is a folder of files read as one (DeepSpeed ZeRO,
// PyTorch DCP): listed once, in folderFormats(), as file formats are in
// formatModules().
struct FolderFormat {
    const FormatModule& module; // its probe accepts no single file
    // The folder holding the model for a folder given (itself, or the one a
    // pointer such as DeepSpeed's `latest` names); "" when it is not this
    // format's. Throws CheckpointError for a pointer that leads nowhere.
    std::string (*locate)(const std::string& folder);
    // Indexes the folder `locate` gave.
    FormatIndex (*open)(const std::string& located);
    // True for the name of one of the model's files (a run's checkpoint
    // lists them, and its summary is cached against them).
    bool (*holds)(const std::string& fileName);
    // The file that names all the others (DCP's .metadata), null where
    // there is none: opening it opens its folder, on a server too (a
    // folder there cannot be listed, so `locate` is not asked).
    const char* entryFile = nullptr;
};

// The module of a folder format: Format::Pytorch (its files are torch.save
// archives), a probe that accepts no single file and an opener that says
// to open the folder.
FormatModule folderModule(const char* name, const char* description, const char* looksFor);

// Every folder format, in the order they are tried.
std::span<const FolderFormat> folderFormats();

// Every module, in the order their probes are tried.
std::span<const FormatModule> formatModules();
const FormatModule& formatModule(Format format);
const char* formatName(Format format);

// The module whose probe accepts the bytes. Throws OpenError for anything
// else, saying what the first bytes are (and, for a file named like a
// format, which of that format's rules the bytes break).
const FormatModule& detectFormat(const ByteSource& source);

// The file dialogs' filter of every readable file: "Checkpoints (*.oxck
// *.safetensors *.gguf *.json);;All files (*)", from the table's patterns.
std::string checkpointDialogFilter();

} // namespace ckptscope
