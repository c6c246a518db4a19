#include "formats/magicbytes.h"

#include "ckptscope/io/bytesource.h"

#include <algorithm>
#include <cstdint>

namespace ckptscope {

std::string magicBytes(const ByteSource& source) {
    char head[4] = {};
    const size_t n = size_t(std::min<uint64_t>(source.size(), 4));
    source.read(0, head, n);
    static const char* hex = "0123456789abcdef";
    std::string found;
    for (size_t k = 0; k < n; ++k) {
        const auto c = uint8_t(head[k]);
        if (c >= 0x20 && c < 0x7f)
            found += char(c);
        else
            found += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    return found;
}

} // namespace ckptscope
