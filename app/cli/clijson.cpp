#include "clijson.h"

#include <ostream>

namespace cli {

void printJson(std::ostream& out, const nlohmann::ordered_json& j) {
    out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

} // namespace cli
