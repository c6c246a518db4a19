#include "ckptscope/formats/formatlist.h"

#include "ckptscope/formats/formatmodule.h"

namespace ckptscope {

std::string readableFormatsText() {
    const auto modules = formatModules();
    std::string out;
    for (size_t i = 0; i < modules.size(); ++i) {
        if (i > 0)
            out += i + 1 == modules.size() ? " and " : ", ";
        out += std::string(modules[i].description) + "s"; // "checkpoint", "file": plural by -s
    }
    return out;
}

} // namespace ckptscope
