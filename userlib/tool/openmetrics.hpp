// SPDX-License-Identifier: MIT
// The two formats `archpmu exporter` serves: Prometheus' text format 0.0.4 (prometheus-cpp's
// TextSerializer) and OpenMetrics 1.0.0, picked from the scraper's Accept header.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <string_view>
#include <vector>

namespace archpmu::tool {

inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr std::string_view kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

// Does an Accept header rank OpenMetrics (1.0.0 or 0.0.1, or no version) at least as
// high as the text format? No header, or one that names neither, is text.
bool prefers_openmetrics(std::string_view accept);

// `families` in OpenMetrics 1.0.0: a counter family's name loses its _total in TYPE,
// UNIT and HELP, its samples keep it; a gauge named *_info is of the info type, named
// likewise without _info; a family whose name ends in _seconds (before
// _total) has UNIT seconds; the text ends with # EOF.
std::string serialize_openmetrics(const std::vector<prometheus::MetricFamily>& families);
// The same in the text format 0.0.4.
std::string serialize_text(const std::vector<prometheus::MetricFamily>& families);

}  // namespace archpmu::tool
