#include "ckptscope/io/bytesource.h"

#include "ckptscope/io/filesource.h"
#include "ckptscope/io/httpsource.h"

#include <cstring>

namespace ckptscope {

std::shared_ptr<const ByteSource> openByteSource(const std::string& pathOrUrl) {
    if (isUrl(pathOrUrl))
        return std::make_shared<HttpSource>(pathOrUrl);
    // Another scheme (ftp://, gs://) is not a local path.
    const size_t scheme = pathOrUrl.find("://");
    if (scheme != std::string::npos && scheme > 0 &&
        pathOrUrl.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789+.-") == scheme)
        throw IoError("only http://, https:// and s3:// URLs are read (and local paths); " +
                      pathOrUrl.substr(0, scheme + 3) + " is not supported");
    return std::make_shared<FileSource>(pathOrUrl);
}

std::string readAll(const ByteSource& source) {
    std::string text(size_t(source.size()), '\0');
    source.read(0, text.data(), text.size());
    return text;
}

MemorySource::MemorySource(std::vector<uint8_t> bytes, std::string name)
    : m_bytes(std::move(bytes)), m_name(std::move(name)) {}

void MemorySource::read(uint64_t offset, void* dst, size_t n) const {
    if (offset > m_bytes.size() || n > m_bytes.size() - offset)
        throw SourceChangedError(m_name + ": read past the end of the data at byte " +
                                 std::to_string(offset));
    if (n > 0)
        std::memcpy(dst, m_bytes.data() + offset, n);
}

} // namespace ckptscope
