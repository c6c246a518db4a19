#pragma once

#include <curl/curl.h>

#include <initializer_list>

// libcurl, loaded (dlopen) when the first URL is read rather than linked:
// linked, its 35 libraries (TLS, Kerberos, LDAP, …) were loaded by every run
// of the CLI and the GUI, a URL or not: `ckptscope-cli --version` took 15 ms
// against 4 ms without them.
namespace ckptscope::http {

// The functions httpclient.cpp calls, by the names of curl.h without `curl_`.
struct CurlLib {
    decltype(&::curl_global_init) global_init;
    decltype(&::curl_easy_init) easy_init;
    decltype(&::curl_easy_setopt) easy_setopt;
    decltype(&::curl_easy_perform) easy_perform;
    decltype(&::curl_easy_reset) easy_reset;
    decltype(&::curl_easy_cleanup) easy_cleanup;
    decltype(&::curl_easy_strerror) easy_strerror;
    decltype(&::curl_slist_append) slist_append;
    decltype(&::curl_slist_free_all) slist_free_all;
    decltype(&::curl_url) url;
    decltype(&::curl_url_set) url_set;
    decltype(&::curl_url_get) url_get;
    decltype(&::curl_url_cleanup) url_cleanup;
    decltype(&::curl_free) free;
};

// The library, loaded and initialised (curl_global_init) on the first call;
// throws IoError naming the library and why it could not be loaded.
const CurlLib& curlLib();

// Whether curlLib() has loaded it (tests: nothing but a URL loads it).
bool curlLoaded();

// What curlLib() does once, with the first of `sonames` dlopen finds: the
// functions of a libcurl of 7.85 or newer, initialised; else IoError, the
// library closed again (tests give other names: missing, too old, lacking).
CurlLib loadCurl(std::initializer_list<const char*> sonames);

} // namespace ckptscope::http
