#include "ckptscope/run/runscan.h"

#include "ckptscope/common/naturalorder.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/safetensors/shardset.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/run/trainerfiles.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sys/stat.h>

namespace ckptscope {

namespace fs = std::filesystem;

namespace {

// "runs/checkpoint-5/" → "checkpoint-5".
std::string folderName(const std::string& path) {
    const fs::path p = fs::path(path).lexically_normal();
    return (p.has_filename() ? p : p.parent_path()).filename().string();
}

// A file's folder and name: a URL's path without its query (a presigned
// URL's signature) or fragment, split at its last '/'.
std::pair<std::string, std::string> folderAndName(const std::string& path) {
    if (!isUrl(path)) {
        const fs::path p(path);
        return {p.parent_path().string(), p.filename().string()};
    }
    const size_t host = path.find("//") + 2;
    const size_t end = std::min(path.find_first_of("?#", host), path.size());
    const size_t slash = path.rfind('/', end - 1);
    if (slash == std::string::npos || slash < host)
        return {path.substr(0, end), ""};
    return {path.substr(0, slash), path.substr(slash + 1, end - slash - 1)};
}

class Scanner {
public:
    Discovery result;

    void addPath(const std::string& path) {
        // A prefix in a bucket is a folder like a local one.
        if (isS3Url(path) && isFolder(path)) {
            addFolderOfAnyKind(folderPath(path));
            return;
        }
        if (isUrl(path)) {
            addUrl(path);
            return;
        }
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            result.skipped.push_back({path, "does not exist or cannot be read"});
            return;
        }
        if (S_ISDIR(st.st_mode)) {
            addFolderOfAnyKind(path);
            return;
        }
        if (auto f = byName(path, &st, result.sideFiles))
            m_loose.push_back(*f);
    }

    void finish() {
        groupLoose();
        distinguishNames();
        std::sort(result.candidates.begin(), result.candidates.end(),
                  [](const CheckpointCandidate& a, const CheckpointCandidate& b) {
                      return a.name != b.name ? a.name < b.name : a.path < b.path;
                  });
        sortSkipped(result.skipped);
        std::sort(result.sideFiles.begin(), result.sideFiles.end());
    }

private:
    // One entry of a folder: a local one's stat (null on a server, where
    // there are no devices, links or FIFOs), or why it cannot be read.
    struct Entry {
        std::string path, name;
        bool folder = false;
        std::optional<struct stat> st;
        std::string problem;
    };

    // Entries in name order, so the order inside a checkpoint and of
    // `skipped` does not depend on the listing. Dot files are left out.
    static std::vector<Entry> entries(const std::string& folder, std::string& error) {
        std::vector<Entry> out;
        std::vector<FolderEntry> listed;
        try {
            listed = listFolder(folder);
        } catch (const IoError& e) {
            // What went wrong, without the folder's name (the skipped entry
            // names it) or the words the caller puts before it.
            error = e.what();
            for (const std::string& prefix :
                 {folder + "/: ", folder + ": ", std::string("cannot list the folder: ")})
                if (error.starts_with(prefix))
                    error.erase(0, prefix.size());
            return out;
        }
        const bool local = !isUrl(folder);
        for (FolderEntry& f : listed) {
            if (f.name.empty() || f.name[0] == '.')
                continue;
            Entry e{pathInFolder(folder, f.name), std::move(f.name), f.folder, std::nullopt, {}};
            if (local) {
                struct stat st {};
                if (::stat(e.path.c_str(), &st) != 0)
                    e.problem = "cannot be read (dangling link?)";
                e.folder = S_ISDIR(st.st_mode);
                e.st = st;
            }
            out.push_back(std::move(e));
        }
        return out;
    }

    void addFolderOfAnyKind(const std::string& path) {
        if (isTrainerCheckpointFolder(folderName(path)))
            addTrainerFolder(path);
        else if (isModelStepFolder(path))
            addModelFolder(path);
        else
            addFolder(path);
    }

    void addFolder(const std::string& folder) {
        std::string error;
        const std::vector<Entry> files = entries(folder, error);
        const bool safetensors = hasSafetensors(files);
        for (const Entry& e : files) {
            if (!e.problem.empty()) {
                result.skipped.push_back({e.path, e.problem});
                continue;
            }
            if (e.folder) {
                if (isTrainerCheckpointFolder(e.name))
                    addTrainerFolder(e.path);
                else if (isModelStepFolder(e.path))
                    addModelFolder(e.path);
                continue; // other subfolders are not part of the run
            }
            m_safetensorsBeside = safetensors; // a Trainer folder above set its own
            if (auto f = byName(e.path, e.st ? &*e.st : nullptr, result.sideFiles))
                m_loose.push_back(*f);
        }
        if (!error.empty())
            result.skipped.push_back({folder, "cannot list the folder: " + error});
    }

    // One checkpoint: its single model file(s), or the one shard set (an
    // index names it), and the Trainer's side files.
    void addTrainerFolder(const std::string& folder) {
        CheckpointCandidate c;
        c.path = folder;
        c.name = folderName(folder);
        const size_t skippedBefore = result.skipped.size();
        std::string error;
        std::map<std::string, CandidateFile> probed; // by name
        const std::vector<Entry> files = entries(c.path, error);
        m_safetensorsBeside = hasSafetensors(files);
        for (const Entry& e : files) {
            if (!e.problem.empty() || e.folder)
                continue;
            if (auto f = byName(e.path, e.st ? &*e.st : nullptr, c.sideFiles))
                probed.emplace(e.name, *f);
        }
        std::vector<std::string> names;
        for (const auto& [name, f] : probed)
            names.push_back(name);
        ShardGroups groups = groupShards(names);
        for (const std::string& name : groups.others)
            c.files.push_back(probed.at(name));
        if (!groups.sets.empty()) {
            std::vector<std::string> shards;
            for (const ShardSet& set : groups.sets)
                shards.insert(shards.end(), set.files.begin(), set.files.end());
            // One complete set is the model; else why not (incomplete, mixed).
            const ShardedFolder model = findShardedModel(shards, {});
            if (model.set) {
                for (const std::string& name : model.set->files)
                    c.files.push_back(probed.at(name));
                const std::string index = shardIndexName(model.set->stem);
                for (const std::string& side : c.sideFiles)
                    if (fs::path(side).filename() == index)
                        c.index = side;
            } else {
                result.skipped.push_back({probed.at(shards.front()).path, model.problem});
            }
        }
        if (!error.empty())
            result.skipped.push_back({c.path, "cannot list the folder: " + error});
        else if (c.files.empty() && result.skipped.size() == skippedBefore)
            result.skipped.push_back({c.path, "no checkpoint file in this folder"});
        if (!c.files.empty())
            result.candidates.push_back(std::move(c));
    }

    // A folder read as one model (DeepSpeed, DCP): one checkpoint of all
    // its files, summarised together.
    void addModelFolder(const std::string& folder) {
        CheckpointCandidate c;
        c.path = folder;
        c.name = folderName(folder);
        c.folderModel = true;
        const FolderFormat* format = nullptr;
        for (const FolderFormat& f : folderFormats())
            try {
                if (!format && !f.locate(folder).empty())
                    format = &f;
            } catch (const std::exception&) {
            }
        std::string error;
        std::vector<Entry> files = entries(folder, error);
        // The format's entry file (DCP's .metadata) is a dot file the listing skips.
        if (format && format->entryFile && folderHoldsFile(folder, format->entryFile))
            files.insert(files.begin(), Entry{pathInFolder(folder, format->entryFile),
                                              format->entryFile,
                                              false,
                                              std::nullopt,
                                              {}});
        for (const Entry& e : files)
            if (format && format->holds(e.name))
                c.files.push_back({e.path, format->module.format, nullptr});
            else if (e.problem.empty() && !e.folder)
                c.sideFiles.push_back(e.path);
        if (!error.empty())
            result.skipped.push_back({c.path, "cannot list the folder: " + error});
        else if (!c.files.empty())
            result.candidates.push_back(std::move(c));
    }

    // By name first (runFileRole): a side file is listed in `sideFiles`, a
    // PyTorch pickle skipped; any other file is probed.
    std::optional<CandidateFile> byName(const std::string& path, const struct stat* st,
                                        std::vector<std::string>& sideFiles) {
        switch (runFileRole(fs::path(path).filename().string())) {
        case RunFileRole::SideFile:
            if (const std::string problem = st ? fileKindProblem(*st) : std::string();
                !problem.empty())
                result.skipped.push_back({path, problem});
            else
                sideFiles.push_back(path);
            return std::nullopt;
        case RunFileRole::PytorchPickle:
            // transformers reads model.safetensors when both are there: so
            // does the run, and the pickle is a side file.
            if (m_safetensorsBeside) {
                sideFiles.push_back(path);
                return std::nullopt;
            }
            break;
        case RunFileRole::Probe:
            break;
        }
        return probeFile(path, st);
    }

    static bool hasSafetensors(const std::vector<Entry>& files) {
        return std::any_of(files.begin(), files.end(),
                           [](const Entry& e) { return e.name.ends_with(".safetensors"); });
    }

    // The file's format from its first bytes, or a skipped entry. A local
    // file already seen (same device and inode) is passed over silently; a
    // file in a bucket is probed through the source reading it later reuses.
    std::optional<CandidateFile> probeFile(const std::string& path, const struct stat* stp) {
        if (!stp)
            return probeUrl(path);
        const struct stat& st = *stp;
        if (const std::string problem = fileKindProblem(st); !problem.empty()) {
            result.skipped.push_back({path, problem});
            return std::nullopt;
        }
        if (!m_seen.insert({uint64_t(st.st_dev), uint64_t(st.st_ino)}).second)
            return std::nullopt;
        try {
            const FileSource source(path);
            return CandidateFile{path, detectFormat(source).format, nullptr};
        } catch (const OpenError& e) {
            result.skipped.push_back({path, e.detail()});
        } catch (const std::exception& e) {
            result.skipped.push_back({path, OpenError(path, e.what()).detail()});
        }
        return std::nullopt;
    }

    // A file on a server: probed by its first bytes through the source that
    // reading it later reuses.
    void addUrl(const std::string& url) {
        if (!m_seenUrls.insert(url).second)
            return;
        switch (runFileRole(folderAndName(url).second)) {
        case RunFileRole::SideFile:
            result.skipped.push_back({url, "a Trainer side file: read from local folders only"});
            return;
        case RunFileRole::PytorchPickle:
        case RunFileRole::Probe:
            break;
        }
        if (auto f = probeUrl(url))
            m_loose.push_back(std::move(*f));
    }

    std::optional<CandidateFile> probeUrl(const std::string& url) {
        try {
            auto source = std::make_shared<const HttpSource>(url);
            const Format format = detectFormat(*source).format;
            return CandidateFile{url, format, std::move(source)};
        } catch (const OpenError& e) {
            result.skipped.push_back({url, e.detail()});
        } catch (const std::exception& e) {
            result.skipped.push_back({url, OpenError(url, e.what()).detail()});
        }
        return std::nullopt;
    }

    // Shards of one set (same folder, stem, count and extension) become one
    // candidate; every other file is a candidate of its own. Sets of one
    // name with different counts are mixed: none is read.
    void groupLoose() {
        std::map<std::string, std::map<std::string, CandidateFile>>
            byFolder; // folder → name → file
        for (CandidateFile& f : m_loose) {
            const auto [folder, name] = folderAndName(f.path);
            byFolder[folder].emplace(name, f);
        }
        for (auto& [folder, files] : byFolder) {
            std::vector<std::string> names;
            for (const auto& [name, f] : files)
                names.push_back(name);
            ShardGroups groups = groupShards(names);
            // A file inside a Trainer checkpoint folder, given by itself,
            // takes that checkpoint's trainer_state.json (its step).
            std::vector<std::string> state;
            if (isTrainerCheckpointFolder(fs::path(folder).filename().string()) &&
                (isS3Url(folder) || !isUrl(folder)) && folderHoldsFile(folder, kTrainerStateName))
                state.push_back(pathInFolder(folder, kTrainerStateName));
            for (const std::string& name : groups.others) {
                const CandidateFile& f = files.at(name);
                result.candidates.push_back({f.path, name, {f}, state, {}});
            }
            for (const ShardSet& set : groups.sets) {
                std::vector<std::string> sameName; // every set of this stem and extension
                for (const ShardSet& other : groups.sets)
                    if (other.stem == set.stem && other.extension == set.extension)
                        sameName.insert(sameName.end(), other.files.begin(), other.files.end());
                const ShardedFolder model = findShardedModel(sameName, {});
                const CandidateFile& first = files.at(set.files.front());
                if (!model.set) {
                    result.skipped.push_back({first.path, model.problem});
                    continue;
                }
                CheckpointCandidate c{first.path, set.files.front(), {}, {}, {}};
                for (const std::string& name : set.files)
                    c.files.push_back(files.at(name));
                const fs::path index = fs::path(folder) / shardIndexName(set.stem);
                if (std::find(result.sideFiles.begin(), result.sideFiles.end(), index.string()) !=
                    result.sideFiles.end())
                    c.index = index.string();
                result.candidates.push_back(std::move(c));
            }
        }
    }

public:
    // Candidates of one name (model.safetensors in each checkpoint-N/) are
    // named by the shortest end of their paths that tells them apart
    // (checkpoint-50/model.safetensors), as diff names its two files.
    void distinguishNames() {
        for (size_t depth = 1; depth < 8; ++depth) {
            std::map<std::string, std::vector<size_t>> byName;
            for (size_t i = 0; i < result.candidates.size(); ++i)
                byName[result.candidates[i].name].push_back(i);
            bool clash = false;
            for (const auto& [name, which] : byName) {
                if (which.size() < 2)
                    continue;
                clash = true;
                for (size_t i : which) {
                    // The path's last depth + 1 parts.
                    const fs::path p(result.candidates[i].path);
                    std::vector<std::string> parts;
                    for (const auto& part : p)
                        if (!part.empty() && part != "/")
                            parts.push_back(part.string());
                    const size_t from = parts.size() > depth + 1 ? parts.size() - depth - 1 : 0;
                    std::string shown;
                    for (size_t k = from; k < parts.size(); ++k)
                        shown += (shown.empty() ? "" : "/") + parts[k];
                    result.candidates[i].name = shown;
                }
            }
            if (!clash)
                return;
        }
    }

private:
    std::set<std::pair<uint64_t, uint64_t>> m_seen;
    std::set<std::string> m_seenUrls;
    bool m_safetensorsBeside = false; // in the folder being listed
    std::vector<CandidateFile> m_loose;
};

} // namespace

void sortSkipped(std::vector<SkippedPath>& skipped) {
    std::stable_sort(
        skipped.begin(), skipped.end(),
        [](const SkippedPath& a, const SkippedPath& b) { return naturalLess(a.path, b.path); });
}

bool isTrainerCheckpointFolder(const std::string& name) {
    static const std::string prefix = "checkpoint-";
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return false;
    return std::all_of(name.begin() + long(prefix.size()), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

bool isModelStepFolder(const std::string& path) {
    // global_stepN (DeepSpeed), step-N (torchtitan's DCP), iter_N (Megatron).
    static const std::regex name(R"(^(global_step|step[-_]?|iter[-_]?)\d+$)");
    return std::regex_match(folderName(path), name) && Document::isModelFolder(path);
}

Discovery discoverCheckpoints(const std::vector<std::string>& paths) {
    const ListingScope listings; // each prefix of a bucket listed once
    Scanner s;
    for (const std::string& p : paths)
        s.addPath(p);
    s.finish();
    return std::move(s.result);
}

} // namespace ckptscope
