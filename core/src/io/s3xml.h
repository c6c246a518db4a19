#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// S3's XML answers, parsed with libexpat: a ListObjectsV2 page and an error.
namespace ckptscope::s3 {

struct Object {
    std::string key;
    uint64_t size = 0;
    std::string etag;
};

// One page of ListObjectsV2 (`list-type=2`, with a delimiter: keys directly
// under the prefix in `objects`, deeper ones as `prefixes`, each ending in
// the delimiter).
struct ListPage {
    std::vector<Object> objects;
    std::vector<std::string> prefixes;
    bool truncated = false;
    std::string nextToken; // NextContinuationToken
};

// Throws IoError ("what: the listing is not S3 XML: … at line L") for XML
// that is malformed, declares a DTD, or is not a ListBucketResult.
ListPage parseListPage(std::string_view xml, const std::string& what);

// <Error><Code>…</Code><Message>…</Message><Region>…</Region></Error>.
struct ErrorReply {
    std::string code, message, region;
};
// nullopt for anything but a well-formed <Error> document.
std::optional<ErrorReply> parseError(std::string_view xml);

} // namespace ckptscope::s3
