#include "core/result.h"

namespace attnscope {

std::string inQuotes(const std::string& name) { return "'" + name + "'"; }

} // namespace attnscope
