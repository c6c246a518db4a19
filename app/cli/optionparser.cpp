#include "optionparser.h"

#include "clicommon.h"

#include <algorithm>

namespace cli {

namespace {

const OptionSpec* findOption(const CommandSpec& spec, const std::string& arg) {
    for (const OptionSpec& o : spec.options)
        if (arg == o.name || (!o.shortName.empty() && arg == o.shortName))
            return &o;
    return nullptr;
}

bool unlimited(const CommandSpec& spec) {
    return !spec.operands.empty() && spec.operands.back().ends_with("...");
}

std::string missingMessage(const CommandSpec& spec, size_t got) {
    if (spec.missingOperands.empty())
        return "missing " + spec.operands[got];
    std::string text = spec.missingOperands;
    if (const size_t at = text.find("{got}"); at != std::string::npos)
        text.replace(at, 5, std::to_string(got));
    return text;
}

std::string optionLabel(const OptionSpec& o) {
    std::string label = o.shortName.empty() ? o.name : o.shortName + ", " + o.name;
    return o.valueName.empty() ? label : label + " " + o.valueName;
}

std::string synopsis(const CommandSpec& spec) {
    if (!spec.synopsis.empty())
        return spec.synopsis;
    std::string text;
    for (const std::string& operand : spec.operands)
        text += (text.empty() ? "" : " ") + operand;
    for (const OptionSpec& o : spec.options) {
        const std::string name = o.shortName.empty() ? o.name : o.shortName;
        text += " [" + (o.valueName.empty() ? name : name + " " + o.valueName) + "]" +
                (o.repeatable ? "..." : "");
    }
    return text;
}

} // namespace

std::string ParsedArgs::value(const std::string& name) const {
    const auto it = m_values.find(name);
    return it == m_values.end() ? std::string() : it->second.back();
}

std::vector<std::string> ParsedArgs::values(const std::string& name) const {
    const auto it = m_values.find(name);
    return it == m_values.end() ? std::vector<std::string>() : it->second;
}

ParsedArgs parseArgs(const CommandSpec& spec, const std::vector<std::string>& args) {
    ParsedArgs p;
    bool optionsEnded = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (optionsEnded || a.size() < 2 || a[0] != '-') {
            if (!unlimited(spec) && p.m_operands.size() == spec.operands.size())
                throw UsageError("unexpected argument '" + a + "'");
            p.m_operands.push_back(a);
        } else if (a == "--") {
            optionsEnded = true;
        } else if (a == "-h" || a == "--help") {
            p.m_help = true;
            return p;
        } else if (const OptionSpec* o = findOption(spec, a)) {
            std::string value;
            if (!o->valueName.empty()) {
                if (i + 1 >= args.size())
                    throw UsageError(a + " needs a value");
                value = args[++i];
                if (o->check)
                    o->check(value);
            }
            p.m_values[o->name].push_back(value);
        } else {
            throw UsageError("unknown option " + a);
        }
    }
    if (p.m_operands.size() < spec.operands.size()) // "PATH..." needs one at least
        throw UsageError(missingMessage(spec, p.m_operands.size()));
    return p;
}

std::string commandHelp(const CommandSpec& spec) {
    std::string text =
        "Usage: ckptscope-cli " + spec.name + " " + synopsis(spec) + "\n\n" + spec.description;
    if (!spec.options.empty()) {
        size_t width = 16; // the label column, with at least 3 spaces after a label
        for (const OptionSpec& o : spec.options)
            width = std::max(width, optionLabel(o).size() + 3);
        text += "\nOptions:\n";
        for (const OptionSpec& o : spec.options) {
            std::string label = optionLabel(o);
            label.resize(width, ' ');
            std::string help = o.help;
            for (size_t at = help.find('\n'); at != std::string::npos; at = help.find('\n', at + 1))
                help.insert(at + 1, std::string(width + 2, ' '));
            text += "  " + label + help + "\n";
        }
    }
    if (!spec.epilogue.empty())
        text += "\n" + spec.epilogue;
    return text;
}

} // namespace cli
