#include "io/curllib.h"

#include "ckptscope/io/filesource.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

namespace ckptscope::http {

namespace {

constexpr unsigned kLeastVersion = 0x075500; // 7.85.0

std::atomic<bool> loaded{false};

template <typename F> void resolve(void* lib, F& f, const char* name, std::string& missing) {
    f = reinterpret_cast<F>(::dlsym(lib, name));
    if (!f)
        missing += missing.empty() ? name : std::string(", ") + name;
}

} // namespace

CurlLib loadCurl(std::initializer_list<const char*> sonames) {
    void* lib = nullptr;
    std::string why;
    for (const char* soname : sonames) {
        if ((lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL)))
            break;
        const char* e = ::dlerror();
        why += std::string(why.empty() ? "" : "; ") + (e ? e : soname);
    }
    if (!lib)
        throw IoError("cannot read URLs: libcurl could not be loaded (" + why +
                      "); install the libcurl4 package");
    // Closes the library again when it cannot be used (the next URL retries).
    struct Unload {
        void* lib;
        ~Unload() {
            if (lib)
                ::dlclose(lib);
        }
    } unload{lib};
    // CURLOPT_PROTOCOLS_STR (http and https only, redirects included) is
    // 7.85's: an older libcurl would ignore it and allow every protocol.
    using VersionInfo = decltype(&::curl_version_info);
    const auto versionInfo = reinterpret_cast<VersionInfo>(::dlsym(lib, "curl_version_info"));
    const curl_version_info_data* version = versionInfo ? versionInfo(CURLVERSION_NOW) : nullptr;
    if (!version || version->version_num < kLeastVersion)
        throw IoError(std::string("cannot read URLs: libcurl ") +
                      (version && version->version ? version->version : "of unknown version") +
                      " is older than 7.85.0, the least that can keep requests to http(s)");
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
        throw IoError("cannot read URLs: the libcurl found lacks " + missing);
    if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        throw IoError("cannot read URLs: libcurl failed to initialise");
    unload.lib = nullptr; // in use from now on, for the life of the process
    return c;
}

const CurlLib& curlLib() {
    // A failed load throws out of the initialiser: the next call tries again.
    // The sonames of Debian's libcurl4 (OpenSSL) and libcurl3-gnutls: one ABI.
    static const CurlLib lib = loadCurl({"libcurl.so.4", "libcurl-gnutls.so.4"});
    loaded = true;
    return lib;
}

bool curlLoaded() {
    return loaded;
}

} // namespace ckptscope::http
