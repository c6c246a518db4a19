#pragma once

#include <exception>
#include <string>

namespace ckptscope {

// A file that could not be opened; what() is "FILE: what went wrong" (or
// "FILE:LINE:COL: …" for JSON) and detail() the part after the file name,
// with a JSON position spelled "line L, column C: …", for front ends that
// format it their way.
class OpenError : public std::exception {
public:
    OpenError(std::string file, std::string message);
    const char* what() const noexcept override { return m_message.c_str(); }
    const std::string& file() const { return m_file; }
    std::string detail() const;

private:
    std::string m_file;
    std::string m_message;
};

} // namespace ckptscope
