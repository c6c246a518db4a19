#include "ckptscope/run/run.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/httpsource.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace ckptscope {

namespace {

struct NotCached {};

struct FileResult {
    FileSummary summary;
    FileIdentity id;
    std::optional<int64_t> mtimeNs; // none: a URL without Last-Modified
    bool hit = false;
};

// The file's summary, read and stored in the cache (when there is one).
FileSummary summarizeNew(const std::shared_ptr<const Document>& doc, const RunOptions& options,
                         RunProgress& progress) {
    SummaryOptions so;
    so.cancel = options.cancel;
    const uint64_t before = progress.bytesRead;
    if (options.progress)
        so.progress = [&, total = double(summaryBytes(*doc))](double share) {
            progress.bytesRead = before + uint64_t(std::llround(share * total));
            options.progress(progress);
        };
    return summarizeDocument(*doc, so);
}

// One file's summary, from the cache when its identity is unchanged. The
// identity is taken before reading and compared after: a file that changed
// meanwhile is summarised but not cached. A file by URL is identified by
// its first answer (the probe's); one that changes while being read raises
// SourceChangedError (its ETag or size differs).
FileResult summarizeFile(const CandidateFile& file, SummaryCache* cache, const RunOptions& options,
                         RunProgress& progress) {
    const std::string& path = file.path;
    std::shared_ptr<const HttpSource> http = file.source;
    if (!http && isUrl(path)) {
        try {
            http = std::make_shared<const HttpSource>(path);
        } catch (const IoError& e) {
            throw OpenError(path, e.what());
        }
    }
    const auto id = http ? std::optional(urlIdentity(*http)) : fileIdentity(path);
    if (!id)
        throw OpenError(path, "cannot be read any more (removed while scanning?)");
    const std::optional<int64_t> mtimeNs =
        http ? httpDateNs(http->lastModified()) : std::optional(id->mtimeNs);
    if (cache) {
        if (auto cached = cache->load(*id))
            return {std::move(*cached), *id, mtimeNs, true};
    }
    if (options.cacheOnly)
        throw NotCached{};
    const auto doc =
        http ? Document::open(std::shared_ptr<const ByteSource>(http)) : Document::open(path);
    FileSummary summary = summarizeNew(doc, options, progress);
    if (cache && (http || fileIdentity(path) == id))
        cache->store(*id, summary);
    return {std::move(summary), *id, mtimeNs, false};
}

void merge(FileSummary& into, FileSummary&& part, bool first) {
    if (first) {
        into = std::move(part);
        return;
    }
    std::set<std::string> keys;
    for (const auto& kv : into.metadata)
        keys.insert(kv.first);
    for (auto& kv : part.metadata)
        if (keys.insert(kv.first).second)
            into.metadata.push_back(std::move(kv));
    // A tensor a later shard holds again is left out, as the model's
    // merger leaves it out (info warns of it).
    std::set<std::string> names;
    for (const TensorSummary& t : into.tensors)
        names.insert(t.name);
    for (TensorSummary& t : part.tensors)
        if (names.insert(t.name).second)
            into.tensors.push_back(std::move(t));
    for (BlobSummary& b : part.blobs)
        into.blobs.push_back(std::move(b));
}

std::string otherKindReason(Format format, RunKind kind) {
    const FormatModule& m = formatModule(format);
    const std::string what = m.graph ? std::string("a JSON file (") + m.description + " format)"
                                     : std::string("a tensor file (") + m.name + ")";
    return what + " in a run of " +
           (kind == RunKind::Gradient ? "gradient checkpoints" : "tensor checkpoints");
}

bool checkpointBefore(const RunCheckpoint& a, const RunCheckpoint& b) {
    if (a.step.has_value() != b.step.has_value())
        return a.step.has_value();
    if (a.step && *a.step != *b.step)
        return *a.step < *b.step;
    return a.name != b.name ? a.name < b.name : a.path < b.path;
}

// The side file of that name, or null.
const std::string* sideFileNamed(const std::vector<std::string>& sideFiles, const char* name) {
    for (const std::string& path : sideFiles)
        if (std::filesystem::path(path).filename() == name)
            return &path;
    return nullptr;
}

// A checkpoint folder's trainer_state.json: its global_step is the step,
// the log at that step the checkpoint's log.
void readOwnTrainerState(RunCheckpoint& cp, std::vector<std::string>& warnings) {
    const std::string* path = sideFileNamed(cp.sideFiles, kTrainerStateName);
    if (!path)
        return;
    try {
        TrainerState state = readTrainerState(*path);
        if (!state.globalStep) {
            warnings.push_back(
                OpenError(*path, "no global_step; the step is taken from the name").what());
            return;
        }
        cp.step = state.globalStep;
        cp.stepSource = StepSource::TrainerState;
        cp.trainerLog = std::move(state.logAt[*state.globalStep]);
    } catch (const OpenError& e) {
        warnings.push_back(e.what());
    }
}

// The checkpoint whose files lie beside `state` (a trainer_state.json out
// of any checkpoint folder) and that has no step of its own, when there is
// exactly one: the model the Trainer saved with that state (save_model at
// the end of training, or a checkpoint folder opened itself).
RunCheckpoint* modelBeside(Run& run, const std::string& state) {
    const std::filesystem::path folder = std::filesystem::path(state).parent_path();
    RunCheckpoint* found = nullptr;
    for (RunCheckpoint& cp : run.checkpoints) {
        if (cp.step || cp.files.empty() ||
            std::filesystem::path(cp.files.front()).parent_path() != folder)
            continue;
        if (found)
            return nullptr; // two: which one the state is of is not known
        found = &cp;
    }
    return found;
}

// The run folder's trainer_state.json (the Trainer's last, holding the
// whole history) gives the model saved beside it its step, each checkpoint
// the log values its own lacks, and the run its history; the latest
// checkpoint's gives the history when it is further on (a run still
// training, or a folder from an earlier run).
void addRunTrainerLog(Run& run, const std::vector<std::string>& runSideFiles) {
    std::optional<uint64_t> historyStep;
    bool stepped = false;
    for (const std::string& path : runSideFiles) {
        if (std::filesystem::path(path).filename() != kTrainerStateName)
            continue;
        RunCheckpoint* beside = modelBeside(run, path);
        if (!beside && std::none_of(run.checkpoints.begin(), run.checkpoints.end(),
                                    [](const RunCheckpoint& cp) { return cp.step.has_value(); }))
            continue;
        try {
            TrainerState state = readTrainerState(path, true);
            if (beside && state.globalStep) {
                beside->step = state.globalStep;
                beside->stepSource = StepSource::TrainerState;
                stepped = true;
            }
            historyStep = state.globalStep.value_or(0);
            std::set<uint64_t> steps;
            for (const RunCheckpoint& cp : run.checkpoints)
                if (cp.step)
                    steps.insert(*cp.step);
            std::map<uint64_t, TrainerLog> logAt = logsAt(state.history, steps);
            for (RunCheckpoint& cp : run.checkpoints) {
                if (!cp.step)
                    continue;
                for (const auto& entry : logAt[*cp.step]) // (clang 14 captures no bindings)
                    if (std::none_of(cp.trainerLog.begin(), cp.trainerLog.end(),
                                     [&](const auto& kv) { return kv.first == entry.first; }))
                        cp.trainerLog.emplace_back(entry.first, entry.second);
            }
            run.trainerHistory = std::move(state.history);
            run.trainerHistoryFile = path;
        } catch (const OpenError& e) {
            run.warnings.push_back(e.what());
        }
    }
    if (stepped)
        std::stable_sort(run.checkpoints.begin(), run.checkpoints.end(), checkpointBefore);
    for (auto it = run.checkpoints.rbegin(); it != run.checkpoints.rend(); ++it) {
        const std::string* own = sideFileNamed(it->sideFiles, kTrainerStateName);
        if (!own || it->stepSource != StepSource::TrainerState)
            continue;
        if (!historyStep || *it->step > *historyStep) {
            try { // read once already: a failure now is a file changed since
                run.trainerHistory = readTrainerState(*own, true).history;
                run.trainerHistoryFile = *own;
            } catch (const OpenError& e) {
                run.warnings.push_back(e.what());
            }
        }
        break; // the latest checkpoint with its own state
    }
}

// The identities of a checkpoint's files as one text: what a Trainer
// optimizer.pt's cached updates were paired with.
std::string pairingKey(const std::vector<std::string>& files) {
    std::string key;
    for (const std::string& f : files) {
        const auto id = fileIdentity(f);
        if (!id)
            return {};
        key += id->path + '\n' + std::to_string(id->size) + ' ' + std::to_string(id->mtimeNs) +
               ' ' + std::to_string(id->ctimeNs) + ' ' + std::to_string(id->inode) + '\n';
    }
    return key;
}

// A folder that opens as one model (DeepSpeed): summarised as one document,
// cached under its first file's identity with every file's identities
// (pairedWith), so a change to any of them reads it again.
FileResult summarizeModelFolder(const CheckpointCandidate& c, SummaryCache* cache,
                                const RunOptions& options, RunProgress& progress) {
    std::vector<std::string> files;
    for (const CandidateFile& f : c.files)
        files.push_back(f.path);
    const auto id = fileIdentity(files.front());
    const std::string key = pairingKey(files);
    if (!id || key.empty())
        throw OpenError(c.path, "cannot be read any more (removed while scanning?)");
    FileResult r{{}, *id, id->mtimeNs, false};
    r.id.size = 0;
    for (const std::string& f : files)
        if (const auto fid = fileIdentity(f)) {
            r.id.size += fid->size;
            r.mtimeNs = std::max(*r.mtimeNs, fid->mtimeNs);
        }
    if (cache)
        if (auto cached = cache->load(*id); cached && cached->pairedWith == key) {
            r.summary = std::move(*cached);
            r.hit = true;
            return r;
        }
    if (options.cacheOnly)
        throw NotCached{};
    r.summary = summarizeNew(Document::open(c.path), options, progress);
    r.summary.pairedWith = key;
    if (cache && pairingKey(files) == key)
        cache->store(*id, r.summary);
    return r;
}

// A Trainer checkpoint folder's optimizer.pt: the update each parameter
// received, paired with the checkpoint's model, from the cache while
// neither file changed. A failure is a warning: the weights still count.
void addTrainerOptimizer(RunCheckpoint& cp, SummaryCache* cache, const RunOptions& options,
                         std::vector<std::string>& warnings) {
    const std::string* path = sideFileNamed(cp.sideFiles, "optimizer.pt");
    if (!path || isUrl(*path))
        return;
    const auto id = fileIdentity(*path);
    const std::string key = pairingKey(cp.files);
    if (!id || key.empty())
        return;
    if (cache) {
        if (auto cached = cache->load(*id); cached && cached->pairedWith == key) {
            cp.summary.updates = std::move(cached->updates);
            cp.optimizerFile = *path;
            return;
        }
    }
    if (options.cacheOnly)
        return;
    try {
        SummaryOptions so;
        so.cancel = options.cancel;
        FileSummary s =
            summarizeOptimizer(Document::open(cp.openPath()), Document::open(*path), so);
        s.pairedWith = key;
        if (cache && fileIdentity(*path) == id)
            cache->store(*id, s);
        cp.summary.updates = std::move(s.updates);
        cp.optimizerFile = *path;
    } catch (const OpenError& e) {
        warnings.push_back(e.what());
    }
}

// config.json of the latest checkpoint holding one, else of the run folder.
void readRunModelConfig(Run& run, const std::vector<std::string>& runSideFiles) {
    const std::string* path = nullptr;
    for (auto it = run.checkpoints.rbegin(); it != run.checkpoints.rend() && !path; ++it)
        path = sideFileNamed(it->sideFiles, kModelConfigName);
    if (!path)
        path = sideFileNamed(runSideFiles, kModelConfigName);
    if (!path)
        return;
    try {
        run.modelConfig = readModelConfig(*path);
    } catch (const OpenError& e) {
        run.warnings.push_back(e.what());
    }
}

} // namespace

const std::string& RunCheckpoint::openPath() const {
    return !index.empty() ? index : files.empty() ? path : files.front();
}

const char* runKindName(RunKind kind) {
    return kind == RunKind::Gradient ? "gradient" : "tensors";
}

RunKind runKindOf(Format format) {
    // Every format but a graph yields tensors through Document.
    return formatModule(format).graph ? RunKind::Gradient : RunKind::Tensors;
}

std::pair<std::optional<uint64_t>, StepSource> checkpointStep(const FileSummary& merged,
                                                              const std::string& name) {
    if (formatModule(merged.format).graph)
        return {merged.gradientStep, StepSource::GradientStep};
    if (const auto s = stepFromMetadata(merged.metadata))
        return {s, StepSource::MetadataKey};
    if (const auto s = stepFromFileName(name))
        return {s, StepSource::FileName};
    return {std::nullopt, StepSource::None};
}

Run readRun(const std::vector<std::string>& paths, const RunOptions& options) {
    return readCandidates(discoverCheckpoints(paths), options);
}

namespace {

// One pass of readCandidates over the candidates: the run it fills, the
// summary cache and the progress it reports.
class CandidateReader {
public:
    CandidateReader(Run& run, const RunOptions& options) : m_run(run), m_options(options) {
        if (options.useCache && !options.cacheDir.empty())
            m_cache.emplace(options.cacheDir, options.cacheMaxBytes);
    }

    void read(std::vector<CheckpointCandidate>& candidates) {
        for (const CheckpointCandidate& c : candidates)
            m_progress.filesTotal += c.files.size();
        report();
        for (CheckpointCandidate& c : candidates)
            readOne(c);
        if (!m_cache)
            m_run.cacheHits = m_run.cacheMisses = 0;
    }

private:
    using Placement = std::optional<std::map<std::string, std::string>>;

    SummaryCache* cache() { return m_cache ? &*m_cache : nullptr; }
    void report() {
        if (m_options.progress)
            m_options.progress(m_progress);
    }

    void readOne(CheckpointCandidate& c) {
        RunCheckpoint cp;
        cp.path = c.path;
        cp.name = c.name;
        cp.sideFiles = c.sideFiles;
        cp.index = c.index;
        Placement placement;
        if (!placementOf(c, placement))
            return;
        bool allHits = true;
        if (c.folderModel)
            readFolderModel(c, cp, allHits);
        if (!readFiles(c, cp, placement, allHits) || cp.files.empty())
            return;
        std::tie(cp.step, cp.stepSource) = checkpointStep(cp.summary, cp.name);
        readOwnTrainerState(cp, m_run.warnings);
        if (!cp.summary.updates.empty()) // a Lightning checkpoint holds its own, DeepSpeed's folder
            cp.optimizerFile = c.folderModel ? cp.path : cp.files.front();
        else
            addTrainerOptimizer(cp, cache(), m_options, m_run.warnings);
        cp.fromCache = allHits;
        ++(allHits ? m_run.cacheHits : m_run.cacheMisses);
        m_run.checkpoints.push_back(std::move(cp));
    }

    // A shard set with its index is opened as info opens it (the one way to
    // open a sharded model): refused as info refuses it, and each tensor
    // taken from the shard the model takes it from. False when refused.
    bool placementOf(const CheckpointCandidate& c, Placement& placement) {
        if (c.files.size() <= 1 || c.index.empty() || isUrl(c.index))
            return true;
        try {
            const auto model = Document::open(c.index);
            // (an index that maps no tensor places none: each shard's own)
            if (!model->tensors().empty())
                placement.emplace();
            for (size_t i = 0; placement && i < model->tensors().size(); ++i)
                placement->emplace(model->tensors()[i].name, model->shardName(i));
            return true;
        } catch (const OpenError& e) {
            m_run.skipped.push_back({c.path, e.what()});
            m_progress.filesDone += c.files.size();
            return false;
        }
    }

    // A folder read as one model (DeepSpeed, DCP): its files are read here,
    // none is left for readFiles.
    void readFolderModel(CheckpointCandidate& c, RunCheckpoint& cp, bool& allHits) {
        try {
            FileResult r = summarizeModelFolder(c, cache(), m_options, m_progress);
            if (m_run.kind && runKindOf(r.summary.format) != *m_run.kind) {
                m_run.skipped.push_back({c.path, otherKindReason(r.summary.format, *m_run.kind)});
            } else {
                m_run.kind = runKindOf(r.summary.format);
                allHits = r.hit;
                cp.fileSize = r.id.size;
                cp.mtimeNs = r.mtimeNs;
                for (const CandidateFile& f : c.files)
                    cp.files.push_back(f.path);
                if (!m_options.keepHistograms)
                    r.summary.dropHistograms();
                cp.summary = std::move(r.summary);
            }
        } catch (const NotCached&) {
            ++m_run.notCached;
        } catch (const OpenError& e) {
            m_run.skipped.push_back({c.path, e.detail()});
        }
        m_progress.filesDone += c.files.size();
        report();
        c.files.clear();
    }

    // Each file of the checkpoint summarized and merged; false when one
    // spoils the checkpoint (or is not cached).
    bool readFiles(CheckpointCandidate& c, RunCheckpoint& cp, const Placement& placement,
                   bool& allHits) {
        bool failed = false;
        for (CandidateFile& f : c.files) {
            // A URL's connection is let go once read (a run may hold many).
            const auto source = std::move(f.source);
            if (failed || (m_run.kind && runKindOf(f.format) != *m_run.kind)) {
                if (!failed)
                    m_run.skipped.push_back({f.path, otherKindReason(f.format, *m_run.kind)});
                ++m_progress.filesDone;
                continue;
            }
            try {
                FileResult r =
                    summarizeFile({f.path, f.format, source}, cache(), m_options, m_progress);
                if (!m_run.kind)
                    m_run.kind = runKindOf(r.summary.format);
                allHits = allHits && r.hit;
                cp.fileSize += r.id.size;
                if (r.mtimeNs) // the latest known
                    cp.mtimeNs = std::max(cp.mtimeNs.value_or(*r.mtimeNs), *r.mtimeNs);
                cp.files.push_back(f.path);
                if (!m_options.keepHistograms)
                    r.summary.dropHistograms();
                if (placement) {
                    const std::string shard = std::filesystem::path(f.path).filename().string();
                    std::erase_if(r.summary.tensors, [&](const TensorSummary& t) {
                        const auto it = placement->find(t.name);
                        return it == placement->end() || it->second != shard;
                    });
                }
                merge(cp.summary, std::move(r.summary), cp.files.size() == 1);
            } catch (const NotCached&) {
                failed = true; // left out silently; the full read takes it
                cp.files.clear();
                ++m_run.notCached;
            } catch (const OpenError& e) {
                // Before the kind is known a damaged file is just left out;
                // after, it spoils the checkpoint it belongs to.
                const bool alone = c.files.size() == 1 || !m_run.kind;
                m_run.skipped.push_back({alone ? f.path : c.path, alone ? e.detail() : e.what()});
                failed = m_run.kind.has_value();
                if (failed)
                    cp.files.clear();
            }
            ++m_progress.filesDone;
            report();
        }
        return !failed;
    }

    Run& m_run;
    const RunOptions& m_options;
    std::optional<SummaryCache> m_cache;
    RunProgress m_progress;
};

} // namespace

Run readCandidates(Discovery found, const RunOptions& options) {
    Run run;
    run.skipped = std::move(found.skipped);
    run.sideFiles = std::move(found.sideFiles);
    CandidateReader(run, options).read(found.candidates);
    std::stable_sort(run.checkpoints.begin(), run.checkpoints.end(), checkpointBefore);
    addRunTrainerLog(run, run.sideFiles);
    readRunModelConfig(run, run.sideFiles);
    sortSkipped(run.skipped);
    return run;
}

} // namespace ckptscope
