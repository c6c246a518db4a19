#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

namespace ckptscope {

// Why a tensor file (OXCK, safetensors) could not be read or written. The message is complete and
// meant for a user: file, place (byte offset, tensor index and name) and what
// was expected.
class CheckpointError : public std::exception {
public:
    enum class Kind {
        Io,                 // open/read/write failed
        InvalidMagic,       // not "OXCK"
        UnsupportedVersion, // version 0 or > 1
        Truncated,          // the file ends before a field it promises
        BadMetadata,        // metadata block is not the flat string object
        InvalidUtf8,        // a name is not UTF-8
        Invalid,            // anything else a writer refuses (name too long…)
    };

    CheckpointError(Kind kind, std::string message, std::optional<uint64_t> offset = {})
        : m_kind(kind), m_message(std::move(message)), m_offset(offset) {}

    Kind kind() const { return m_kind; }
    std::optional<uint64_t> offset() const { return m_offset; }
    const char* what() const noexcept override { return m_message.c_str(); }

private:
    Kind m_kind;
    std::string m_message;
    std::optional<uint64_t> m_offset;
};

// A tensor name in quotes for a message, cut at 80 bytes ("…" after): a
// hostile file's name may be megabytes long.
inline std::string quotedName(const std::string& name) {
    constexpr size_t kMax = 80;
    return "\"" + (name.size() > kMax ? name.substr(0, kMax) + "…" : name) + "\"";
}

} // namespace ckptscope
