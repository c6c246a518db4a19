#include "compareresult.h"

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
    if (r->a->format() != r->b->format())
        throw CompareFailure(
            r->a->format() == Format::Oxck ? 'B' : 'A',
            "a tensor file (OXCK) and a gradient checkpoint cannot be compared: " + pathA + " is " +
                (r->a->format() == Format::Oxck ? "a tensor file" : "a gradient checkpoint") +
                ", " + pathB + " is " +
                (r->b->format() == Format::Oxck ? "a tensor file" : "a gradient checkpoint"));
    try {
        if (r->a->format() == Format::Gradient)
            r->gradient = diffGradients(*r->a->gradient(), *r->b->gradient(), options);
        else
            r->tensors = diffTensors(*r->a, *r->b, options);
    } catch (const OpenError& e) { // a side changed or was damaged while read
        throw CompareFailure(e.file() == pathA ? 'A' : 'B', e.what());
    }
    return r;
}
