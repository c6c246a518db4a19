#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

class Document;

// The metadata a converted file carries (safetensors, OXCK: strings alone):
// every entry of doc but its arrays (a GGUF tokenizer's tokens), whose text
// is only a summary ("[151936 × str]"). Each array left out adds a warning
// naming it, so nothing is dropped unsaid.
std::vector<std::pair<std::string, std::string>> copiedMetadata(const Document& doc,
                                                                std::vector<std::string>& warnings);

} // namespace ckptscope
