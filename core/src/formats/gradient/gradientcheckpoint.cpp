#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include "ckptscope/io/filesource.h"

#include "ckptscope/io/atomicfile.h"
#include "formats/gradient/gradientjsonreader.h"
#include "formats/gradient/gradientjsonwriter.h"

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
    std::string text;
    try {
        text = readAll(FileSource(path));
    } catch (const IoError& e) {
        throw GradientError(GradientError::Kind::Io, e.what());
    } catch (const SourceChangedError& e) {
        throw GradientError(GradientError::Kind::Io, e.what());
    }
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
