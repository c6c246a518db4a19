#include "ckptscope/io/folderlisting.h"

#include "ckptscope/io/filesource.h"
#include "ckptscope/io/httpsource.h"
#include "io/s3listing.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

namespace ckptscope {

namespace fs = std::filesystem;

struct ListingScope::Cache {
    std::map<std::string, std::vector<FolderEntry>> listed; // by folder name
    std::map<std::string, std::string> failed;              // folder → message
};

namespace {

thread_local std::shared_ptr<ListingScope::Cache> t_cache;

std::vector<FolderEntry> listLocal(const std::string& folder) {
    std::vector<FolderEntry> out;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        FolderEntry e;
        e.name = it->path().filename().string();
        std::error_code typeError;
        e.folder = it->is_directory(typeError);
        if (!e.folder && it->is_regular_file(typeError))
            e.size = it->file_size(typeError);
        out.push_back(std::move(e));
    }
    if (ec)
        throw IoError(folder + ": cannot list the folder: " + ec.message());
    return out;
}

std::vector<FolderEntry> listS3(const s3::Location& location, const std::string& name) {
    s3::Location prefix = location;
    if (!prefix.key.empty() && prefix.key.back() != '/')
        prefix.key += '/';
    const s3::ListPage page = s3::listFolder(prefix, defaultHttpOptions(), name + "/");
    std::vector<FolderEntry> out;
    // Keys come whole: the part after the prefix is the name. A key with a
    // name S3 allows and a folder cannot hold ("", ".", "..") is left out.
    const auto child = [&](const std::string& key, bool folder, uint64_t size) {
        if (key.size() <= prefix.key.size() || key.compare(0, prefix.key.size(), prefix.key) != 0)
            return;
        std::string rest = key.substr(prefix.key.size());
        if (folder && rest.back() == '/')
            rest.pop_back();
        if (rest.empty() || rest == "." || rest == ".." || rest.find('/') != std::string::npos)
            return;
        FolderEntry e;
        e.name = std::move(rest);
        e.folder = folder;
        e.size = size;
        out.push_back(std::move(e));
    };
    for (const s3::Object& o : page.objects)
        child(o.key, false, o.size);
    for (const std::string& p : page.prefixes)
        child(p, true, 0);
    return out;
}

// Listed in byte order of the names, whatever order the source gave.
std::vector<FolderEntry> sortedByName(std::vector<FolderEntry> entries) {
    std::sort(entries.begin(), entries.end(),
              [](const FolderEntry& a, const FolderEntry& b) { return a.name < b.name; });
    return entries;
}

} // namespace

ListingScope::ListingScope() {
    if (t_cache) {
        m_outer = true;
        return;
    }
    m_cache = std::make_shared<Cache>();
    t_cache = m_cache;
}

ListingScope::~ListingScope() {
    if (!m_outer)
        t_cache.reset();
}

bool namesS3Prefix(const std::string& path) {
    try {
        const auto location = s3::parseUrl(path);
        return location && (location->key.empty() || path.back() == '/');
    } catch (const IoError&) {
        return false; // no bucket: opening it says so
    }
}

std::string folderPath(const std::string& path) {
    if (!isS3Url(path))
        return path;
    std::string out = path;
    while (out.size() > 5 && out.back() == '/' && out[out.size() - 2] != '/')
        out.pop_back();
    return out;
}

std::vector<FolderEntry> listFolder(const std::string& folderIn) {
    const std::string folder = folderPath(folderIn);
    if (!isS3Url(folder))
        return sortedByName(listLocal(folder));
    if (t_cache) {
        if (const auto it = t_cache->listed.find(folder); it != t_cache->listed.end())
            return it->second;
        if (const auto it = t_cache->failed.find(folder); it != t_cache->failed.end())
            throw IoError(it->second);
    }
    std::vector<FolderEntry> out;
    try {
        out = sortedByName(listS3(*s3::parseUrl(folder), folder));
    } catch (const IoError& e) {
        if (t_cache)
            t_cache->failed.emplace(folder, e.what());
        throw;
    }
    if (t_cache)
        t_cache->listed.emplace(folder, out);
    return out;
}

bool isFolder(const std::string& pathIn) {
    const std::string path = folderPath(pathIn);
    if (!isS3Url(path)) {
        std::error_code ec;
        return fs::is_directory(path, ec);
    }
    if (namesS3Prefix(path))
        return true; // the bucket's root
    // The parent's listing, when one was made, already says.
    if (t_cache) {
        const size_t slash = path.rfind('/');
        const std::string parent = path.substr(0, slash);
        const std::string name = path.substr(slash + 1);
        if (const auto it = t_cache->listed.find(parent); it != t_cache->listed.end())
            return std::any_of(it->second.begin(), it->second.end(),
                               [&](const FolderEntry& e) { return e.folder && e.name == name; });
    }
    try {
        return !listFolder(path).empty();
    } catch (const std::exception&) {
        return false;
    }
}

std::string pathInFolder(const std::string& folder, const std::string& name) {
    if (isS3Url(folder))
        return folderPath(folder) + "/" + name;
    return (fs::path(folder) / name).string();
}

bool folderHoldsFile(const std::string& folder, const std::string& name) {
    if (!isS3Url(folder)) {
        std::error_code ec;
        return fs::is_regular_file(fs::path(folder) / name, ec);
    }
    try {
        const std::vector<FolderEntry> entries = listFolder(folder);
        return std::any_of(entries.begin(), entries.end(),
                           [&](const FolderEntry& e) { return !e.folder && e.name == name; });
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace ckptscope
