// export FILE --tensor NAME -o OUT [--format npy|csv|raw]
#include "clicommon.h"

#include "ckptscope/export/converter.h"
#include "ckptscope/export/csvwriter.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/io/atomicfile.h"
#include "ckptscope/io/filesource.h"

#include <iostream>

namespace cli {

using namespace ckptscope;

namespace {

enum class ExportFormat { Npy, Csv, Raw };

const CommandSpec kExport = {
    "export",
    {"FILE"},
    "Writes one tensor's values: .npy (its dtype and shape), .csv (rows x last\n"
    "dimension, exact float text) or raw little-endian bytes; -o - writes to\n"
    "standard output and needs --format. Complex values go to .npy as <c8 or\n"
    "<c16 and to .csv as Python writes them (1.5-2j), which NumPy's\n"
    "loadtxt(dtype=complex) reads back.\n",
    {tensorOption("the tensor (exactly one)"),
     outputOption("the file to write, or - for standard output"),
     {"--format", "FORMAT", "npy, csv or raw (default: from OUT's extension)"}},
    {},
    "FILE --tensor NAME -o OUT [--format npy|csv|raw]",
    kFileExitStatus,
};

ExportFormat exportFormat(const std::string& output, std::string name) {
    if (name.empty()) {
        if (output == "-")
            throw UsageError("-o - (standard output) needs --format npy|csv|raw");
        const size_t dot = output.rfind('.');
        const std::string ext = dot == std::string::npos ? "" : output.substr(dot + 1);
        if (ext == "npy" || ext == "csv" || ext == "raw")
            name = ext;
        else if (ext == "bin")
            name = "raw";
        else
            throw UsageError("cannot tell the format from '" + output +
                             "': name it .npy, .csv or .raw, or give --format npy|csv|raw");
    }
    if (name == "npy")
        return ExportFormat::Npy;
    if (name == "csv")
        return ExportFormat::Csv;
    if (name == "raw")
        return ExportFormat::Raw;
    throw UsageError("--format takes npy, csv or raw, not '" + name + "'");
}

} // namespace

int runExport(const std::vector<std::string>& args) {
    const auto p = parseCommand(kExport, args);
    if (!p)
        return kOk;
    const std::string& file = p->operands()[0];
    const std::vector<std::string> tensors = p->values("--tensor");
    const std::string output = p->value("--output");
    if (tensors.size() != 1)
        throw UsageError("export needs exactly one --tensor NAME");
    if (output.empty())
        throw UsageError("export needs -o OUT (or -o - with --format)");
    const ExportFormat format = exportFormat(output, p->value("--format"));
    const auto doc = openDocument(file);
    if (!doc->hasTensors())
        throw UsageError(file + " is a gradient checkpoint; export reads OXCK and safetensors "
                                "tensors");
    size_t index = doc->tensors().size();
    for (size_t i = 0; i < doc->tensors().size() && index == doc->tensors().size(); ++i)
        if (doc->tensors()[i].name == tensors[0])
            index = i;
    if (index == doc->tensors().size())
        throw UsageError(file + " has no tensor named '" + tensors[0] + "'");
    if (output != "-" && sameFile(file, output))
        throw UsageError(output + " is the input file; export never writes over its input");

    NpyLayout layout;
    if (format == ExportFormat::Npy) {
        layout = npyLayout(*doc, index);
        for (const std::string& note : layout.notes)
            std::cerr << file << ": warning: " << note << "\n";
    }
    auto fill = [&](std::ostream& out) {
        switch (format) {
        case ExportFormat::Npy:
            writeNpy(out, *doc, index, layout);
            break;
        case ExportFormat::Csv:
            writeTensorCsv(out, *doc, index);
            break;
        case ExportFormat::Raw:
            writeRaw(out, *doc, index);
            break;
        }
    };
    try {
        if (output == "-") {
            fill(std::cout);
            std::cout.flush();
            if (!std::cout)
                throw IoError("standard output: write failed");
        } else {
            writeFileAtomically(output, fill);
        }
    } catch (const SourceChangedError& e) {
        throw OpenError(doc->path(), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(doc->path(), e.what());
    }
    return kOk;
}

} // namespace cli
