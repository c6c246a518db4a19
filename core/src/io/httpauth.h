#pragma once

#include <string>

namespace ckptscope::http {

// An environment variable's value, "" when unset.
std::string environment(const char* name);
// Without leading and trailing blanks (spaces, tabs, CR, LF).
std::string trimmed(std::string s);

// The Hugging Face token, as Hugging Face's own tools find it: HF_TOKEN, else
// the file HF_TOKEN_PATH names, else $HF_HOME/token, else
// ~/.cache/huggingface/token; empty when there is none.
std::string huggingFaceToken();

// True for the hosts the token may be sent to: huggingface.co and the host of
// HF_ENDPOINT when that is set. `hostPort` is "host:port", lower case.
bool isHuggingFaceHost(const std::string& hostPort);

} // namespace ckptscope::http
