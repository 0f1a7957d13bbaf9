#include "harness/core/error.hxx"

#include <fmt/format.h>

namespace harness {

namespace {
std::string located(const std::string& file, int line, int column, const std::string& field, const std::string& message)
{
    std::string where = file;
    if (line > 0) where += fmt::format(":{}:{}", line, column);
    return field.empty() ? fmt::format("{}: {}", where, message) : fmt::format("{}: {}: {}", where, field, message);
}
} // namespace

InputError::InputError(const std::string& file, int line, int column, const std::string& field,
                       const std::string& message)
    : Error(ErrorKind::bad_input, located(file, line, column, field, message))
{
}

} // namespace harness
