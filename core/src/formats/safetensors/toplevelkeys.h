#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace ckptscope {

// Hands each key of a JSON text's top-level object, in the order the text
// gives them, to onKey, and keeps nothing else (SAX: no DOM is built).
// onKey returns false to stop reading. A parse error stops too: the caller
// reports it (or, for a probe, the text is simply not the one looked for).
// (nlohmann's parse callback would give the keys in one DOM pass, but its
// builder rescans the parent object at the end of every child: a
// 200 000-tensor header took minutes.)
class TopLevelKeys final : public nlohmann::json_sax<nlohmann::json> {
public:
    explicit TopLevelKeys(std::function<bool(const std::string&)> onKey)
        : m_onKey(std::move(onKey)) {}
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return ++m_depth, true; }
    bool end_object() override { return --m_depth, true; }
    bool start_array(std::size_t) override { return ++m_depth, true; }
    bool end_array() override { return --m_depth, true; }
    bool key(string_t& key) override { return m_depth != 1 || m_onKey(key); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

private:
    std::function<bool(const std::string&)> m_onKey;
    int m_depth = 0;
};

} // namespace ckptscope
