// SPDX-License-Identifier: MIT
#include "openmetrics.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace archpmu::tool {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0)
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0)
        s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

struct MediaRange {
    std::string type;
    std::string version;  // empty: none given
    double q = 1;
};

MediaRange parse_range(std::string_view text)
{
    MediaRange r;
    std::size_t semi = text.find(';');
    r.type = lower(trim(text.substr(0, semi)));
    while (semi != std::string_view::npos) {
        text.remove_prefix(semi + 1);
        semi = text.find(';');
        const std::string_view param = trim(text.substr(0, semi));
        const std::size_t eq = param.find('=');
        if (eq == std::string_view::npos)
            continue;
        const std::string key = lower(trim(param.substr(0, eq)));
        std::string_view raw = trim(param.substr(eq + 1));
        if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"')
            raw = raw.substr(1, raw.size() - 2);  // a quoted-string
        const std::string value(raw);
        if (key == "q")
            r.q = std::clamp(std::strtod(value.c_str(), nullptr), 0.0, 1.0);
        else if (key == "version")
            r.version = value;
    }
    return r;
}

std::string escaped(std::string_view s, bool quote)
{
    std::string out;
    for (const char c : s) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '"' && quote)
            out += "\\\"";
        else
            out += c;
    }
    return out;
}

std::string number(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    char buf[32];
    // Whole numbers as integers (counts), the rest with every significant digit.
    if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15)
        (void)std::snprintf(buf, sizeof(buf), "%.0f", v);
    else
        (void)std::snprintf(buf, sizeof(buf), "%.17g", v);
    return buf;
}

std::string_view type_name(MetricType t)
{
    switch (t) {
        case MetricType::Counter:
            return "counter";
        case MetricType::Gauge:
            return "gauge";
        case MetricType::Summary:
            return "summary";
        case MetricType::Histogram:
            return "histogram";
        case MetricType::Untyped:
            break;
    }
    return "unknown";
}

bool ends_with(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool prefers_openmetrics(std::string_view accept)
{
    double om = 0;
    double text = 0;
    while (!accept.empty()) {
        const std::size_t comma = accept.find(',');
        const MediaRange r = parse_range(accept.substr(0, comma));
        accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
        if (r.type == "application/openmetrics-text" &&
            (r.version.empty() || r.version == "1.0.0" || r.version == "0.0.1"))
            om = std::max(om, r.q);
        else if ((r.type == "text/plain" && (r.version.empty() || r.version == "0.0.4")) ||
                 r.type == "text/*" || r.type == "*/*")
            text = std::max(text, r.q);
    }
    return om > 0 && om >= text;
}

std::string serialize_openmetrics(const std::vector<MetricFamily>& families)
{
    std::string out;
    for (const auto& f : families) {
        const bool counter = f.type == MetricType::Counter;
        // OpenMetrics keeps _info for its info type: a gauge so named is one.
        const bool info = f.type == MetricType::Gauge && ends_with(f.name, "_info");
        const std::string base = (counter && ends_with(f.name, "_total")) || info
                                     ? f.name.substr(0, f.name.size() - (info ? 5 : 6))
                                     : f.name;
        out += "# TYPE " + base + " " + (info ? "info" : std::string(type_name(f.type))) + "\n";
        if (ends_with(base, "_seconds"))
            out += "# UNIT " + base + " seconds\n";
        out += "# HELP " + base + " " + escaped(f.help, true) + "\n";
        for (const auto& m : f.metric) {
            out += counter ? base + "_total" : info ? base + "_info" : base;
            if (!m.label.empty()) {
                out += '{';
                for (std::size_t i = 0; i < m.label.size(); ++i)
                    out += (i ? "," : "") + m.label[i].name + "=\"" +
                           escaped(m.label[i].value, true) + '"';
                out += '}';
            }
            const double v = counter                       ? m.counter.value
                             : f.type == MetricType::Gauge ? m.gauge.value
                                                           : m.untyped.value;
            out += " " + number(v) + "\n";
        }
    }
    return out + "# EOF\n";
}

std::string serialize_text(const std::vector<MetricFamily>& families)
{
    return prometheus::TextSerializer().Serialize(families);
}

}  // namespace archpmu::tool
