#include "export/copiedmetadata.h"

#include "ckptscope/document/document.h"

namespace ckptscope {

std::vector<std::pair<std::string, std::string>>
copiedMetadata(const Document& doc, std::vector<std::string>& warnings) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const MetadataRow& row : doc.metadataRows()) {
        if (row.array)
            warnings.push_back("metadata \"" + row.key + "\" (" + row.value +
                               ") is an array; not carried over: the output's metadata holds "
                               "strings only");
        else
            out.emplace_back(row.key, row.value);
    }
    return out;
}

} // namespace ckptscope
