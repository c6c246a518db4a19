#pragma once

#include "ckptscope/io/httpsource.h"

#include <optional>
#include <string>
#include <string_view>

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
    std::string httpUrl;
    std::optional<AwsSigning> signing;
    std::string source;
};

// Resolves credentials, region and endpoint as the AWS CLI does:
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
// profile AWS_PROFILE names (default "default") in
// AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
// (~/.aws/config, "[profile NAME]"); region from AWS_REGION,
// AWS_DEFAULT_REGION, the profile, else us-east-1; endpoint from
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `s3 = endpoint_url`
// or `endpoint_url`. Throws IoError for a profile named but not found.
Access resolve(const Location& location);

// RFC 3986 encoding of a key as S3 signs it: every byte but A-Z a-z 0-9
// - _ . ~ and '/' as %XX (upper-case hex).
std::string encodeKey(std::string_view key);

} // namespace ckptscope::s3
