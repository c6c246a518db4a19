#include "ckptscope/gradientcheckpoint.h"

#include "ckptscope/atomicfile.h"
#include "gradientjsonreader.h"
#include "gradientjsonwriter.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

namespace ckptscope {

GradientCheckpoint::GradientCheckpoint(ComputationGraphStore graph_, uint64_t step_)
    : graph(std::move(graph_)), step(step_) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    timestamp = uint64_t(std::chrono::duration_cast<std::chrono::seconds>(now).count());
}

GradientCheckpoint GradientCheckpoint::withLossCid(std::string cid) && {
    lossCid = std::move(cid);
    return std::move(*this);
}

void GradientCheckpoint::setOptimizerState(std::string name, std::vector<uint8_t> bytes) {
    optimizerState.insert_or_assign(std::move(name), std::move(bytes));
}

const ComputationNode* GradientCheckpoint::lossNode() const {
    return lossCid ? graph.findProducer(*lossCid) : nullptr;
}

void GradientCheckpoint::save(const std::string& path) const {
    try {
        writeFileAtomically(path, [this](std::ostream& out) { writeJson(out); });
    } catch (const GradientError&) {
        throw;
    } catch (const std::exception& e) {
        // IoError already names the path.
        throw GradientError(GradientError::Kind::Io, e.what());
    }
}

GradientCheckpoint GradientCheckpoint::load(const std::string& path) {
    const auto closer = [](std::FILE* f) { std::fclose(f); };
    std::unique_ptr<std::FILE, decltype(closer)> file(std::fopen(path.c_str(), "rb"), closer);
    if (!file)
        throw GradientError(GradientError::Kind::Io,
                            path + ": cannot open: " + std::strerror(errno));
    std::string text;
    char buffer[1 << 16];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0)
        text.append(buffer, n);
    if (std::ferror(file.get()))
        throw GradientError(GradientError::Kind::Io,
                            path + ": cannot read: " + std::strerror(errno));
    return fromJson(text, path);
}

std::string GradientCheckpoint::toJson() const {
    std::string out;
    gradientjson::writeCheckpoint(out, *this);
    return out;
}

void GradientCheckpoint::writeJson(std::ostream& out) const {
    gradientjson::writeCheckpoint(out, *this);
}

GradientCheckpoint GradientCheckpoint::fromJson(std::string_view text, const std::string& name) {
    return gradientjson::readCheckpoint(text, name);
}

} // namespace ckptscope
