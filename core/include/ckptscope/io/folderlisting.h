#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// Folders wherever checkpoints lie: a local directory, or an s3:// prefix
// (s3://BUCKET/PREFIX, listed with ListObjectsV2). Readers of folder
// formats (a sharded model, a DCP or DeepSpeed folder, a run) list and join
// through these, so a prefix in a bucket opens as the local folder does.
namespace ckptscope {

struct FolderEntry {
    std::string name; // no '/', as listed (dot files included)
    bool folder = false;
    uint64_t size = 0; // files only
};

// Whether `path` is a folder: a local directory (symbolic links followed),
// or an s3:// URL under which the bucket lists something ("s3://b/p" and
// "s3://b/p/" both mean the prefix "p/"). An s3:// URL costs one listing
// (kept while a ListingScope lives). Never throws: unreadable is not a folder.
bool isFolder(const std::string& path);

// The folder's entries in byte order of their names. Throws IoError naming
// the folder.
std::vector<FolderEntry> listFolder(const std::string& folder);

// A file `name` (one component, or several joined by '/') inside `folder`.
std::string pathInFolder(const std::string& folder, const std::string& name);

// Whether the folder lists a file of that name (a local symbolic link to a
// file counts). Never throws.
bool folderHoldsFile(const std::string& folder, const std::string& name);

// An s3:// URL that can only be a prefix: it ends in '/', or names a
// bucket and no key ("s3://bucket").
bool namesS3Prefix(const std::string& path);

// "s3://b/p/" → "s3://b/p"; a local path as it is. Folders are named
// without a trailing '/' so that their names join and compare alike.
std::string folderPath(const std::string& path);

// While one lives on a thread, listings of s3:// prefixes made there are
// kept and reused: opening a model under a prefix lists it once, however
// many readers ask whether it is theirs. Scopes nest (the outer one keeps).
class ListingScope {
public:
    ListingScope();
    ~ListingScope();
    ListingScope(const ListingScope&) = delete;
    ListingScope& operator=(const ListingScope&) = delete;
    struct Cache;

private:
    std::shared_ptr<Cache> m_cache;
    bool m_outer = false;
};

} // namespace ckptscope
