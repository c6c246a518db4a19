// A stand-in for libcurl in tst_curllib, built twice: only
// curl_version_info, reporting FAKE_VERSION (too old, or new enough but
// lacking every other function libcurl has).
#include <curl/curl.h>

extern "C" curl_version_info_data* curl_version_info(CURLversion age) {
    static curl_version_info_data data{};
    data.age = age;
    data.version = FAKE_VERSION;
    data.version_num = FAKE_VERSION_NUM;
    return &data;
}
