#include "compare/compareresult.h"

using namespace ckptscope;

namespace {

std::shared_ptr<const Document> openSide(char side, const std::string& path) {
    try {
        return Document::open(path);
    } catch (const OpenError& e) {
        throw CompareFailure(side, e.what());
    }
}

} // namespace

std::shared_ptr<CompareResult> runComparison(const std::string& pathA, const std::string& pathB,
                                             const DiffOptions& options) {
    auto r = std::make_shared<CompareResult>();
    r->a = openSide('A', pathA);
    r->b = openSide('B', pathB);
    auto kind = [](const Document& doc) {
        return !doc.hasTensors() ? std::string("a ") + doc.formatModule().description
                                 : std::string("a tensor file");
    };
    // Any two tensor files compare; a gradient checkpoint only with another.
    const bool gradientA = !r->a->hasTensors();
    if (gradientA != !r->b->hasTensors())
        throw CompareFailure(
            gradientA ? 'A' : 'B',
            "a tensor file and a gradient checkpoint cannot be compared: " + pathA + " is " +
                kind(*r->a) + ", " + pathB + " is " + kind(*r->b));
    try {
        if (gradientA)
            r->gradient = diffGradients(*r->a->gradient(), *r->b->gradient(), options);
        else
            r->tensors = diffTensors(*r->a, *r->b, options);
    } catch (const OpenError& e) { // a side changed or was damaged while read
        throw CompareFailure(e.file() == pathA ? 'A' : 'B', e.what());
    }
    return r;
}
