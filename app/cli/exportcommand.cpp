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

ExportFormat exportFormat(const Options& o) {
    std::string name = o.format;
    if (name.empty()) {
        if (o.output == "-")
            throw UsageError("-o - (standard output) needs --format npy|csv|raw");
        const size_t dot = o.output.rfind('.');
        const std::string ext = dot == std::string::npos ? "" : o.output.substr(dot + 1);
        if (ext == "npy" || ext == "csv" || ext == "raw")
            name = ext;
        else if (ext == "bin")
            name = "raw";
        else
            throw UsageError("cannot tell the format from '" + o.output +
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
    const Options o = parseOptions(args, {"--tensor", "-o", "--output", "--format"});
    if (o.tensors.size() != 1)
        throw UsageError("export needs exactly one --tensor NAME");
    if (o.output.empty())
        throw UsageError("export needs -o OUT (or -o - with --format)");
    const ExportFormat format = exportFormat(o);
    const auto doc = openDocument(o.file);
    if (!doc->hasTensors())
        throw UsageError(o.file + " is a gradient checkpoint; export reads OXCK and safetensors "
                                  "tensors");
    size_t index = doc->tensors().size();
    for (size_t i = 0; i < doc->tensors().size() && index == doc->tensors().size(); ++i)
        if (doc->tensors()[i].name == o.tensors[0])
            index = i;
    if (index == doc->tensors().size())
        throw UsageError(o.file + " has no tensor named '" + o.tensors[0] + "'");
    if (o.output != "-" && sameFile(o.file, o.output))
        throw UsageError(o.output + " is the input file; export never writes over its input");

    NpyLayout layout;
    if (format == ExportFormat::Npy) {
        layout = npyLayout(*doc, index);
        for (const std::string& note : layout.notes)
            std::cerr << o.file << ": warning: " << note << "\n";
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
        if (o.output == "-") {
            fill(std::cout);
            std::cout.flush();
            if (!std::cout)
                throw IoError("standard output: write failed");
        } else {
            writeFileAtomically(o.output, fill);
        }
    } catch (const SourceChangedError& e) {
        throw OpenError(doc->path(), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(doc->path(), e.what());
    }
    return kOk;
}

} // namespace cli
