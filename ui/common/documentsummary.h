#pragma once

#include <QString>

#include <cstdint>

namespace ckptscope {
class Document;
}

// "10,000 nodes", "1 tensor": a count grouped as everywhere else, with the
// noun agreeing (there are no translations, so tr("%n node(s)") would show
// its "(s)" to the user).
QString countNoun(uint64_t n, const QString& singular, const QString& plural);

// The status-bar line for an opened file, e.g.
// "g.json: gradient checkpoint, step 1,200, 10,000 nodes".
QString documentSummary(const ckptscope::Document& doc, const QString& fileName);
