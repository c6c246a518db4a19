#include "ckptscope/export/converter.h"

#include "ckptscope/export/npzwriter.h"
#include "ckptscope/formats/oxck/oxckwriter.h"
#include "ckptscope/formats/safetensors/safetensorswriter.h"
#include "ckptscope/io/atomicfile.h"

#include <cctype>
#include <filesystem>

namespace ckptscope {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size())
        return false;
    for (size_t i = 0; i < suffix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i])
            return false;
    return true;
}

} // namespace

std::optional<ConvertTarget> convertTargetFor(const std::string& path) {
    if (endsWith(path, ".safetensors"))
        return ConvertTarget::Safetensors;
    if (endsWith(path, ".npz"))
        return ConvertTarget::Npz;
    if (endsWith(path, ".oxck"))
        return ConvertTarget::Oxck;
    return std::nullopt;
}

bool sameFile(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::equivalent(a, b, ec) && !ec)
        return true;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

std::string conversionRefusal(const Document& doc, ConvertTarget target,
                              const std::string& outPath) {
    if (!doc.hasTensors())
        return doc.path() + " is a gradient checkpoint; convert reads OXCK and safetensors files";
    if ((target == ConvertTarget::Oxck && doc.format() == Format::Oxck) ||
        (target == ConvertTarget::Safetensors && doc.format() == Format::Safetensors))
        return doc.path() + " is already " +
               (doc.format() == Format::Oxck ? std::string("an OXCK checkpoint")
                                             : std::string("a safetensors file"));
    if (sameFile(doc.path(), outPath))
        return outPath + " is the input file; a conversion never writes over its input";
    return {};
}

std::vector<std::string> convertDocument(const Document& doc, ConvertTarget target,
                                         const std::string& outPath, const TaskControl& control) {
    if (const std::string why = conversionRefusal(doc, target, outPath); !why.empty())
        throw ExportError(why);
    std::vector<std::string> warnings;
    writeFileAtomically(outPath, [&](std::ostream& out) {
        switch (target) {
        case ConvertTarget::Safetensors:
            warnings = writeSafetensors(out, doc, control);
            break;
        case ConvertTarget::Npz:
            warnings = writeNpz(out, doc, control);
            break;
        case ConvertTarget::Oxck:
            warnings = writeOxck(out, doc, control);
            break;
        }
    });
    return warnings;
}

} // namespace ckptscope
