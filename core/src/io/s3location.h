#pragma once

#include "ckptscope/io/httpsource.h"

#include <cstdint>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckptscope::s3 {

// s3://BUCKET/KEY.
struct Location {
    std::string bucket, key;
};

// The bucket and key of an s3:// URL (scheme case-insensitive); nullopt for
// anything else. Throws IoError for an s3:// URL without a bucket.
std::optional<Location> parseUrl(std::string_view url);

// How to reach an object: the HTTP URL (virtual-hosted on AWS, path-style
// on an S3-compatible endpoint) and the signing (nullopt: no credentials
// found, the request goes unsigned, as to a public bucket). `source` says
// where the credentials, region and endpoint came from, for messages —
// never the secret.
struct Access {
    std::string bucket;
    std::string httpUrl;
    std::string bucketUrl; // where a listing goes: the URL above, without its key

    std::optional<AwsSigning> signing;
    std::string region;
    std::string source;
};

// Resolves credentials, region and endpoint as the AWS CLI does:
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
// profile AWS_PROFILE names (default "default") in
// AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
// (~/.aws/config, "[profile NAME]"); region from AWS_REGION,
// AWS_DEFAULT_REGION, the profile, else us-east-1; endpoint from
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `s3 = endpoint_url`
// or `endpoint_url`. `region`, when given, replaces the region found (the
// one a bucket answered that it lives in). Throws IoError for a profile
// named but not found.
Access resolve(const Location& location, const std::string& region = {});

// The options a request to `access` goes with: `base`'s, signed with the
// access's credentials unless base.noSignRequest or the bucket is marked
// public (isPublicBucket; then `access` says so), and
// what a 401/403 should tell the user.
HttpOptions requestOptions(HttpOptions base, Access& access);

// An object's or a prefix's access and the options its requests go with
// (resolve, then requestOptions): what every request to S3 starts from.
struct Connection {
    Access access;
    HttpOptions options;
};
Connection connect(const Location& location, const HttpOptions& base,
                   const std::string& region = {});

// "NAME: the bucket is in neither ASKED nor SAID, where it said it was":
// a bucket that answers again from another region after one redirect.
std::string regionLostMessage(const std::string& name, const std::string& asked,
                              const std::string& said);

// The region an S3 answer redirects to (a 301 PermanentRedirect, a 400
// AuthorizationHeaderMalformed; from x-amz-bucket-region or the XML's
// <Region>) when it differs from `region`; nullopt otherwise.
std::optional<std::string> redirectRegion(long status, const std::string& bucketRegion,
                                          const std::string& errorBody, const std::string& region);

// The canonical query S3 signs: parameters sorted by name, names and values
// encoded as RFC 3986 with upper-case hex ('/' too). Sent in this form,
// libcurl's signature (over the query as sent) is the one S3 computes.
std::string canonicalQuery(std::vector<std::pair<std::string, std::string>> parameters);

// RFC 3986 encoding of a key as S3 signs it: every byte but A-Z a-z 0-9
// - _ . ~ and '/' as %XX (upper-case hex).
std::string encodeKey(std::string_view key);

} // namespace ckptscope::s3
