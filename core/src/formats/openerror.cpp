#include "ckptscope/formats/openerror.h"

namespace ckptscope {

OpenError::OpenError(std::string file, std::string message)
    : m_file(std::move(file)), m_message(std::move(message)) {
    if (m_message.rfind(m_file + ":", 0) != 0)
        m_message = m_file + ": " + m_message;
}

std::string OpenError::detail() const {
    std::string rest = m_message.substr(m_file.size() + 1);
    // "FILE:12:5: msg" (JSON position) reads better as "line 12, column 5: msg".
    const size_t colon1 = rest.find(':');
    const size_t colon2 = colon1 == std::string::npos ? colon1 : rest.find(':', colon1 + 1);
    auto digits = [&](size_t from, size_t to) {
        return to > from && rest.find_first_not_of("0123456789", from) >= to;
    };
    if (colon2 != std::string::npos && digits(0, colon1) && digits(colon1 + 1, colon2))
        return "line " + rest.substr(0, colon1) + ", column " +
               rest.substr(colon1 + 1, colon2 - colon1 - 1) + rest.substr(colon2);
    return rest.size() > 0 && rest[0] == ' ' ? rest.substr(1) : rest;
}

} // namespace ckptscope
