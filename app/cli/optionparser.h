#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cli {

// One option of a command: a flag (`--json`) or an option with a value
// (`--bins N`, `-o OUT`).
struct OptionSpec {
    std::string name;      // "--bins": the name the command asks for
    std::string valueName; // "N"; empty for a flag
    std::string help;      // lines after the first start with '\n'
    bool repeatable = false;
    std::string shortName = {}; // "-o", or empty
    // Called on each value as it is read, so errors come in command-line
    // order; throws UsageError naming the option.
    std::function<void(const std::string& value)> check = {};
};

// What a command accepts: its operands, its options and its `--help`.
struct CommandSpec {
    std::string name;                  // "diff"
    std::vector<std::string> operands; // {"A", "B"}; a last "PATH..." takes any number
    std::string description;           // the paragraphs of `--help` (text ends with '\n')
    std::vector<OptionSpec> options;
    // Fewer operands than declared: this message ("{got}" replaced by the
    // count); empty: "missing FILE" naming the first one absent.
    std::string missingOperands = {};
    std::string synopsis = {}; // the usage line after the name; empty: built from the above
    std::string epilogue = {}; // after the options (exit status), ends with '\n'
};

// The command line as one command's spec reads it.
class ParsedArgs {
public:
    bool help() const { return m_help; }
    bool has(const std::string& name) const { return m_values.count(name) != 0; }
    // The last value given, or empty.
    std::string value(const std::string& name) const;
    // Every value given, in order (a repeatable option).
    std::vector<std::string> values(const std::string& name) const;
    const std::vector<std::string>& operands() const { return m_operands; }

private:
    friend ParsedArgs parseArgs(const CommandSpec&, const std::vector<std::string>&);
    bool m_help = false;
    std::map<std::string, std::vector<std::string>> m_values; // a flag: one empty value
    std::vector<std::string> m_operands;
};

// Reads args by spec: -h/--help anywhere ends parsing (help() is then set
// and nothing else is checked); "--" ends the options; "-" is an operand.
// Throws UsageError: "unknown option X", "X needs a value", "unexpected
// argument 'Y'", the spec's missing-operands message, or a check's message.
ParsedArgs parseArgs(const CommandSpec& spec, const std::vector<std::string>& args);

// `ckptscope-cli NAME --help`: usage line, description, options, epilogue.
std::string commandHelp(const CommandSpec& spec);

} // namespace cli
