#pragma once
// Text for the HTML report: escaping and numbers with units, so every figure reads the same everywhere.

#include <string>
#include <string_view>

namespace harness::report {

/// `text` with & < > " ' replaced by entities: safe in element content and in quoted attributes.
/// Control characters but tab and line breaks, noncharacters (U+FFFE, U+FFFF, ...) and bytes that
/// are not UTF-8 become U+FFFD.
std::string html_escape(std::string_view text);

/// Text for XML content and attribute values (junit.xml): as html_escape, so that nothing XML 1.0
/// forbids (control characters from compiler logs, U+FFFE, U+FFFF) reaches the file.
std::string xml_escape(std::string_view text);

/// A number for people: digit groups for large integers, three or four significant digits otherwise.
std::string format_number(double value);

/// A figure with its unit from the metric table ("fraction" is shown as a percentage).
std::string format_with_unit(double value, std::string_view unit);

/// A figure as a plain number in the unit `display_unit` names ("fraction" is shown in percent).
std::string format_in_unit(double value, std::string_view unit);

/// The unit a figure is shown in: "%" for "fraction", otherwise the unit itself.
std::string display_unit(std::string_view unit);

/// The unit of a metric from the metric table ("fraction" for a cliff's verdict, which carries its
/// depth), or "" for a metric the table does not know.
std::string metric_unit(std::string_view metric);

/// Short axis-tick text: 1, 2.5, 10, 1k, 2.5M, 1G, 0.01.
std::string format_tick(double value);

} // namespace harness::report
