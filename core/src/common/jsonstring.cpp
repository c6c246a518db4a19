#include "ckptscope/common/jsonstring.h"

#include "formats/gradient/gradientjsonwriter.h"

namespace ckptscope {

void appendJsonString(std::string& out, std::string_view s) {
    gradientjson::appendQuoted(out, s);
}

} // namespace ckptscope
