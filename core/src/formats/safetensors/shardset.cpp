#include "ckptscope/formats/safetensors/shardset.h"

#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

namespace ckptscope {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

uint64_t digitsValue(std::string_view digits) {
    uint64_t v = 0;
    for (char c : digits)
        v = v * 10 + uint64_t(c - '0'); // at most 18 digits: no overflow
    return v;
}

std::string numbered(uint64_t n) {
    std::string s = std::to_string(n);
    return s.size() < 5 ? std::string(5 - s.size(), '0') + s : s;
}

std::string joinNumbers(const std::vector<uint64_t>& numbers) {
    std::string out;
    for (size_t i = 0; i < numbers.size(); ++i)
        out += (i ? ", " : "") + std::to_string(numbers[i]);
    return out;
}

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

} // namespace

std::optional<ShardName> parseShardName(std::string_view name) {
    const size_t of = name.rfind("-of-");
    if (of == std::string_view::npos)
        return std::nullopt;
    size_t b = of;
    while (b > 0 && isDigit(name[b - 1]))
        --b;
    size_t e = of + 4;
    while (e < name.size() && isDigit(name[e]))
        ++e;
    // A separator and a non-empty stem before N; digits on both sides.
    if (b == of || e == of + 4 || b < 2 || (name[b - 1] != '-' && name[b - 1] != '_'))
        return std::nullopt;
    if (of - b > 18 || e - (of + 4) > 18)
        return std::nullopt;
    ShardName s;
    s.stem = std::string(name.substr(0, b - 1));
    s.extension = std::string(name.substr(e));
    s.number = digitsValue(name.substr(b, of - b));
    s.count = digitsValue(name.substr(of + 4, e - of - 4));
    if (s.number < 1 || s.number > s.count)
        return std::nullopt;
    return s;
}

std::string shardFileName(std::string_view stem, uint64_t number, uint64_t count,
                          std::string_view extension) {
    return std::string(stem) + "-" + numbered(number) + "-of-" + numbered(count) +
           std::string(extension);
}

std::string shardIndexName(std::string_view stem) {
    return std::string(stem) + std::string(kShardIndexSuffix);
}

bool isShardIndexName(std::string_view fileName) {
    return fileName.size() > kShardIndexSuffix.size() && endsWith(fileName, kShardIndexSuffix);
}

std::string ShardSet::problem() const {
    if (complete())
        return {};
    std::string why;
    if (!missing.empty()) {
        why = "incomplete set of shards: " + std::to_string(count - missing.size()) + " of " +
              std::to_string(count) + " found (" +
              shardFileName(stem, missing.front(), count, extension) +
              (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : "") +
              " missing)";
    }
    if (!duplicated.empty())
        why += std::string(why.empty() ? "" : "; ") + "shard" +
               (duplicated.size() > 1 ? "s " : " ") + joinNumbers(duplicated) + " of " +
               std::to_string(count) + " given by two files";
    return why;
}

ShardGroups groupShards(const std::vector<std::string>& fileNames, std::string_view extension) {
    ShardGroups groups;
    // (stem, extension, count) → number → names
    std::map<std::tuple<std::string, std::string, uint64_t>,
             std::map<uint64_t, std::vector<std::string>>>
        found;
    for (const std::string& name : fileNames) {
        const auto shard = parseShardName(name);
        if (!shard || (!extension.empty() && shard->extension != extension)) {
            groups.others.push_back(name);
            continue;
        }
        found[{shard->stem, shard->extension, shard->count}][shard->number].push_back(name);
    }
    for (auto& [key, numbers] : found) {
        ShardSet set;
        std::tie(set.stem, set.extension, set.count) = key;
        uint64_t expected = 1;
        for (auto& [number, names] : numbers) {
            for (; expected < number; ++expected)
                set.missing.push_back(expected);
            expected = number + 1;
            std::sort(names.begin(), names.end());
            if (names.size() > 1)
                set.duplicated.push_back(number);
            set.files.push_back(names.front());
        }
        for (; expected <= set.count; ++expected)
            set.missing.push_back(expected);
        groups.sets.push_back(std::move(set));
    }
    return groups;
}

ShardedFolder findShardedModel(const std::vector<std::string>& fileNames,
                               std::string_view extension) {
    ShardedFolder folder;
    std::vector<std::string> indexes;
    for (const std::string& name : fileNames)
        if (isShardIndexName(name))
            indexes.push_back(name);
    std::sort(indexes.begin(), indexes.end());
    if (indexes.size() == 1) {
        folder.index = indexes.front();
        return folder;
    }
    if (indexes.size() > 1) {
        folder.problem = std::to_string(indexes.size()) + " index files (" + indexes[0] + ", " +
                         indexes[1] + "); open one of them";
        return folder;
    }
    ShardGroups groups = groupShards(fileNames, extension);
    if (groups.sets.size() > 1) {
        const ShardSet& a = groups.sets[0];
        const ShardSet& b = groups.sets[1];
        folder.problem = "mixed shard sets: " + std::to_string(groups.sets.size()) +
                         " sets in one folder (" + a.files.front() + ", " + b.files.front() + ")";
    } else if (groups.sets.size() == 1) {
        if (groups.sets.front().complete())
            folder.set = std::move(groups.sets.front());
        else
            folder.problem = groups.sets.front().problem();
    }
    return folder;
}

ShardedFolder findShardedModelIn(const std::string& folder, std::string_view extension) {
    std::vector<std::string> names;
    try {
        for (FolderEntry& e : listFolder(folder))
            if (!e.folder && !e.name.empty() && e.name[0] != '.')
                names.push_back(std::move(e.name));
    } catch (const IoError& e) {
        ShardedFolder failed;
        failed.problem = e.what();
        return failed;
    }
    return findShardedModel(names, extension);
}

std::string shardNameProblem(std::string_view name) {
    if (name.empty())
        return "is empty";
    if (name.front() == '/')
        return "is an absolute path";
    for (unsigned char c : name) {
        if (c < 0x20 || c == 0x7f)
            return "holds a control character";
        if (c == '\\')
            return "holds a backslash";
        if (c == '%')
            return "holds a percent sign (a URL escape)";
    }
    const size_t colon = name.find(':');
    const size_t slash = name.find('/');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash))
        return "names a scheme or drive (\"" + std::string(name.substr(0, colon + 1)) + "\")";
    for (size_t at = 0; at <= name.size();) {
        const size_t end = std::min(name.find('/', at), name.size());
        const std::string_view part = name.substr(at, end - at);
        if (part == "..")
            return "leaves the folder (\"..\")";
        if (part.empty() || part == ".")
            return "has an empty or \".\" path component";
        at = end + 1;
    }
    return {};
}

std::string pathLeavingFolder(const std::string& folder, const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // A name straight inside the folder that is no symbolic link stays
    // inside whatever the folder's own path resolves to: one lstat, not a
    // readlink per component of both paths (a DCP folder's files are many).
    if (fs::path(path).parent_path() == fs::path(folder) &&
        !fs::is_symlink(fs::symlink_status(path, ec)))
        return {};
    ec.clear();
    const fs::path base = fs::weakly_canonical(fs::absolute(folder.empty() ? "." : folder, ec), ec);
    const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
    const fs::path rel = target.lexically_relative(base);
    if (ec || rel.empty() || *rel.begin() == "..")
        return target.empty() ? path : target.string();
    return {};
}

} // namespace ckptscope
