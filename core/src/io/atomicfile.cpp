#include "ckptscope/io/atomicfile.h"

#include "ckptscope/io/filesource.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace ckptscope {

namespace {

std::string errnoText(int err) {
    return std::strerror(err);
}

// Removes the temporary unless released, so every failure path cleans up.
struct TempGuard {
    std::string path;
    bool armed = true;
    ~TempGuard() {
        if (armed)
            ::unlink(path.c_str());
    }
};

} // namespace

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    fs::path dir = target.parent_path();
    if (dir.empty())
        dir = ".";
    std::string templ = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(templ.data());
    if (fd < 0)
        throw IoError(path + ": cannot create a temporary file in " + dir.string() + ": " +
                      errnoText(errno));
    ::close(fd);
    TempGuard guard{templ};

    {
        std::ofstream out(templ, std::ios::binary | std::ios::trunc);
        if (!out)
            throw IoError(path + ": cannot write temporary file " + templ);
        fill(out);
        // close() writes what is still buffered; its failure (disk full,
        // quota, RLIMIT_FSIZE) must count too, not vanish in a destructor.
        out.close();
        if (out.fail())
            throw IoError(path + ": write failed (disk full or file too large?); " +
                          "the existing file was left untouched");
    }
    // fsync so a crash after rename cannot leave an empty file behind.
    const int syncFd = ::open(templ.c_str(), O_RDONLY | O_CLOEXEC);
    if (syncFd < 0 || ::fsync(syncFd) != 0) {
        const int err = errno;
        if (syncFd >= 0)
            ::close(syncFd);
        throw IoError(path + ": cannot flush to disk: " + errnoText(err));
    }
    ::close(syncFd);
    // Keep the permissions of the file we replace.
    std::error_code ec;
    const auto perms = fs::status(target, ec).permissions();
    if (!ec && fs::exists(target))
        fs::permissions(templ, perms, ec);
    else
        fs::permissions(templ,
                        fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read,
                        ec);
    if (std::rename(templ.c_str(), path.c_str()) != 0)
        throw IoError(path + ": cannot replace the file: " + errnoText(errno));
    guard.armed = false;
    // Make the rename itself durable; a failure here loses nothing.
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
}

} // namespace ckptscope
