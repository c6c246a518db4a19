#include "ckptscope/run/runscan.h"

#include "ckptscope/io/filesource.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sys/stat.h>

namespace ckptscope {

namespace fs = std::filesystem;

namespace {

// "model-00002-of-00004.oxck" → prefix "model", index 2, total 4, suffix
// ".oxck". The separator before the index may be '-' or '_'.
struct ShardName {
    std::string prefix, suffix;
    uint64_t index = 0, total = 0;
};

std::optional<ShardName> parseShardName(const std::string& name) {
    const size_t of = name.rfind("-of-");
    if (of == std::string::npos || of == 0)
        return std::nullopt;
    size_t b = of;
    while (b > 0 && std::isdigit(uint8_t(name[b - 1])))
        --b;
    size_t e = of + 4;
    while (e < name.size() && std::isdigit(uint8_t(name[e])))
        ++e;
    if (b == of || e == of + 4 || b == 0 || (name[b - 1] != '-' && name[b - 1] != '_'))
        return std::nullopt;
    if (of - b > 18 || e - (of + 4) > 18)
        return std::nullopt;
    ShardName s;
    s.prefix = name.substr(0, b - 1);
    s.suffix = name.substr(e);
    s.index = std::stoull(name.substr(b, of - b));
    s.total = std::stoull(name.substr(of + 4, e - of - 4));
    return s;
}

class Scanner {
public:
    Discovery result;

    void addPath(const std::string& path) {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            result.skipped.push_back({path, "does not exist or cannot be read"});
            return;
        }
        if (S_ISDIR(st.st_mode)) {
            addFolder(path);
            return;
        }
        if (auto f = probeFile(path, st))
            m_loose.push_back(*f);
    }

    void finish() {
        groupLoose();
        std::sort(result.candidates.begin(), result.candidates.end(),
                  [](const CheckpointCandidate& a, const CheckpointCandidate& b) {
                      return a.name != b.name ? a.name < b.name : a.path < b.path;
                  });
    }

private:
    // Files in name order, so the order inside a checkpoint and of `skipped`
    // does not depend on the directory listing.
    static std::vector<fs::path> entries(const std::string& folder, std::string& error) {
        std::vector<fs::path> out;
        std::error_code ec;
        for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (!name.empty() && name[0] != '.')
                out.push_back(it->path());
        }
        if (ec)
            error = ec.message();
        std::sort(out.begin(), out.end());
        return out;
    }

    void addFolder(const std::string& folder) {
        std::string error;
        for (const fs::path& p : entries(folder, error)) {
            struct stat st {};
            if (::stat(p.c_str(), &st) != 0) {
                result.skipped.push_back({p.string(), "cannot be read (dangling link?)"});
                continue;
            }
            if (S_ISDIR(st.st_mode)) {
                if (isTrainerCheckpointFolder(p.filename().string()))
                    addTrainerFolder(p);
                continue; // other subfolders are not part of the run
            }
            if (auto f = probeFile(p.string(), st))
                m_loose.push_back(*f);
        }
        if (!error.empty())
            result.skipped.push_back({folder, "cannot list the folder: " + error});
    }

    void addTrainerFolder(const fs::path& folder) {
        CheckpointCandidate c;
        c.path = folder.string();
        c.name = folder.filename().string();
        std::string error;
        for (const fs::path& p : entries(c.path, error)) {
            struct stat st {};
            if (::stat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
                continue;
            if (auto f = probeFile(p.string(), st))
                c.files.push_back(*f);
        }
        if (!error.empty())
            result.skipped.push_back({c.path, "cannot list the folder: " + error});
        else if (c.files.empty())
            result.skipped.push_back({c.path, "no checkpoint file in this folder"});
        if (!c.files.empty())
            result.candidates.push_back(std::move(c));
    }

    // The file's format from its first bytes, or a skipped entry. A file
    // already seen (same device and inode) is passed over silently.
    std::optional<CandidateFile> probeFile(const std::string& path, const struct stat& st) {
        if (const std::string problem = fileKindProblem(st); !problem.empty()) {
            result.skipped.push_back({path, problem});
            return std::nullopt;
        }
        if (!m_seen.insert({uint64_t(st.st_dev), uint64_t(st.st_ino)}).second)
            return std::nullopt;
        try {
            const FileSource source(path);
            return CandidateFile{path, detectFormat(source).format};
        } catch (const OpenError& e) {
            result.skipped.push_back({path, e.detail()});
        } catch (const std::exception& e) {
            result.skipped.push_back({path, OpenError(path, e.what()).detail()});
        }
        return std::nullopt;
    }

    // Shards of one checkpoint (same folder, prefix, total and suffix) become
    // one candidate; every other file is a candidate of its own.
    void groupLoose() {
        std::map<std::tuple<std::string, std::string, uint64_t, std::string>,
                 std::map<uint64_t, CandidateFile>>
            groups;
        for (CandidateFile& f : m_loose) {
            const fs::path p(f.path);
            const auto shard = parseShardName(p.filename().string());
            if (!shard || shard->total < 2 || shard->index > shard->total) {
                result.candidates.push_back({f.path, p.filename().string(), {f}});
                continue;
            }
            auto& group =
                groups[{p.parent_path().string(), shard->prefix, shard->total, shard->suffix}];
            group.emplace(shard->index, f);
        }
        for (auto& [key, shards] : groups) {
            const uint64_t total = std::get<2>(key);
            const CandidateFile& first = shards.begin()->second;
            if (shards.size() != total) {
                result.skipped.push_back(
                    {first.path, "incomplete set of shards: " + std::to_string(shards.size()) +
                                     " of " + std::to_string(total) + " found"});
                continue;
            }
            CheckpointCandidate c;
            c.path = first.path;
            c.name = fs::path(first.path).filename().string();
            for (auto& [index, f] : shards)
                c.files.push_back(f);
            result.candidates.push_back(std::move(c));
        }
    }

    std::set<std::pair<uint64_t, uint64_t>> m_seen;
    std::vector<CandidateFile> m_loose;
};

} // namespace

bool isTrainerCheckpointFolder(const std::string& name) {
    static const std::string prefix = "checkpoint-";
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return false;
    return std::all_of(name.begin() + long(prefix.size()), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

Discovery discoverCheckpoints(const std::vector<std::string>& paths) {
    Scanner s;
    for (const std::string& p : paths)
        s.addPath(p);
    s.finish();
    return std::move(s.result);
}

} // namespace ckptscope
