#include "io/curllib.h"

#include "ckptscope/io/filesource.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>

namespace ckptscope::http {

namespace {

// The sonames of Debian's libcurl4 (OpenSSL) and libcurl3-gnutls: one ABI.
constexpr const char* kSonames[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};

std::atomic<bool> loaded{false};

template <typename F> void resolve(void* lib, F& f, const char* name, std::string& missing) {
    f = reinterpret_cast<F>(::dlsym(lib, name));
    if (!f)
        missing += missing.empty() ? name : std::string(", ") + name;
}

CurlLib load() {
    void* lib = nullptr;
    std::string why;
    for (const char* soname : kSonames) {
        // Never closed: the library lives as long as the process.
        if ((lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL)))
            break;
        const char* e = ::dlerror();
        why += std::string(why.empty() ? "" : "; ") + (e ? e : soname);
    }
    if (!lib)
        throw IoError("cannot read URLs: libcurl could not be loaded (" + why +
                      "); install the libcurl4 package");
    CurlLib c{};
    std::string missing;
    resolve(lib, c.global_init, "curl_global_init", missing);
    resolve(lib, c.easy_init, "curl_easy_init", missing);
    resolve(lib, c.easy_setopt, "curl_easy_setopt", missing);
    resolve(lib, c.easy_perform, "curl_easy_perform", missing);
    resolve(lib, c.easy_reset, "curl_easy_reset", missing);
    resolve(lib, c.easy_cleanup, "curl_easy_cleanup", missing);
    resolve(lib, c.easy_strerror, "curl_easy_strerror", missing);
    resolve(lib, c.slist_append, "curl_slist_append", missing);
    resolve(lib, c.slist_free_all, "curl_slist_free_all", missing);
    resolve(lib, c.url, "curl_url", missing);
    resolve(lib, c.url_set, "curl_url_set", missing);
    resolve(lib, c.url_get, "curl_url_get", missing);
    resolve(lib, c.url_cleanup, "curl_url_cleanup", missing);
    resolve(lib, c.free, "curl_free", missing);
    if (!missing.empty())
        throw IoError("cannot read URLs: the libcurl found lacks " + missing +
                      " (7.80 or newer is needed)");
    if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        throw IoError("cannot read URLs: libcurl failed to initialise");
    return c;
}

} // namespace

const CurlLib& curlLib() {
    // A failed load throws out of the initialiser: the next call tries again.
    static const CurlLib lib = load();
    loaded = true;
    return lib;
}

bool curlLoaded() {
    return loaded;
}

} // namespace ckptscope::http
