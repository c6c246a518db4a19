#pragma once

#include <exception>
#include <string>
#include <utility>

namespace ckptscope {

// Why a gradient checkpoint could not be read or written. The message names
// the file, the JSON line:column where known, and what was expected.
class GradientError : public std::exception {
public:
    enum class Kind { Io, Parse, Schema, Invalid };
    GradientError(Kind kind, std::string message) : m_kind(kind), m_message(std::move(message)) {}
    Kind kind() const { return m_kind; }
    const char* what() const noexcept override { return m_message.c_str(); }

private:
    Kind m_kind;
    std::string m_message;
};

} // namespace ckptscope
