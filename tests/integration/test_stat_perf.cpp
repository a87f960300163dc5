// SPDX-License-Identifier: MIT
// `archpmu stat` as perf users script it: perf 6.1's own -x and -j output, from
// Debian's linux-perf in the guest (software events), and archpmu's are read by
// the same parser, written for perf's; the report on stderr or -o FILE; perf's
// exit statuses.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/cpuid_dump.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

std::vector<std::string> split(const std::string& text, char sep)
{
    std::vector<std::string> out;
    std::string field;
    std::istringstream in(text);
    while (std::getline(in, field, sep))
        out.push_back(field);
    if (!text.empty() && text.back() == sep)
        out.emplace_back();
    return out;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            out.push_back(line);
    return out;
}

std::string joined_lines(const std::vector<std::string>& lines)
{
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    return out;
}

bool matches(const std::string& s, const char* re)
{
    return std::regex_match(s, std::regex(re));
}

// A parser for perf 6.1's `stat -x,` lines, as a script written for perf reads
// them: [time,][CPUn,]value,unit,event,[noise%,]run-time,pct-running,
// metric-value,metric-unit. `rest` is what follows perf's fields.
struct PerfCsv {
    double time = -1;
    std::string cpu;
    std::string value;
    std::string unit;
    std::string event;
    std::string noise;
    std::string run;
    double pct = -1;
    std::string metric_value;
    std::string metric_unit;
    std::vector<std::string> rest;
};

std::optional<PerfCsv> parse_perf_csv(const std::string& line, bool interval, bool per_cpu,
                                      bool repeat)
{
    const auto f = split(line, ',');
    std::size_t i = 0;
    const auto next = [&]() -> std::optional<std::string> {
        if (i >= f.size())
            return std::nullopt;
        return f[i++];
    };
    PerfCsv p;
    if (interval) {
        const auto t = next();
        if (!t || !matches(*t, " *[0-9]+\\.[0-9]{9}"))
            return std::nullopt;
        p.time = std::stod(*t);
    }
    if (per_cpu) {
        const auto c = next();
        if (!c || !matches(*c, "CPU[0-9]+"))
            return std::nullopt;
        p.cpu = *c;
    }
    const auto value = next();
    const auto unit = next();
    const auto event = next();
    if (!value || !unit || !event ||
        !matches(*value, "[0-9]+(\\.[0-9]+)?|<not counted>|<not supported>") || event->empty())
        return std::nullopt;
    p.value = *value;
    p.unit = *unit;
    p.event = *event;
    if (repeat) {
        const auto noise = next();
        if (!noise || !matches(*noise, "[0-9]+\\.[0-9]{2}%"))
            return std::nullopt;
        p.noise = *noise;
    }
    const auto run = next();
    const auto pct = next();
    const auto metric_value = next();
    const auto metric_unit = next();
    if (!run || !pct || !metric_value || !metric_unit || !matches(*run, "[0-9]+") ||
        !matches(*pct, "[0-9]+\\.[0-9]{2}") || !matches(*metric_value, "|[0-9]+\\.[0-9]+"))
        return std::nullopt;
    p.run = *run;
    p.pct = std::stod(*pct);
    p.metric_value = *metric_value;
    p.metric_unit = *metric_unit;
    p.rest.assign(f.begin() + static_cast<std::ptrdiff_t>(i), f.end());
    return p;
}

// stderr alone: where perf and archpmu print the counts.
std::string stderr_of(const std::string& command)
{
    return run_command("{ " + command + " 2>&1 >/dev/null; }").out;
}

std::string tool()
{
    return ARCHPMU_TOOL;
}

// A signal sent to a job started with & before archpmu sets its handler is lost (the job
// begins with SIGINT ignored), and one sent before archpmu runs the command means the
// command never runs. So the tests wait for the start: the command touches this file,
// or, without a command, archpmu catches SIGINT.
constexpr const char* kStarted = "/tmp/archpmu-int.started";

// Shell words that wait, up to 10 s, for that start of the background job $!.
std::string wait_for_start(bool command)
{
    if (command)
        return std::string("for i in $(seq 200); do [ -e ") + kStarted +
               " ] && break; sleep 0.05; done; ";
    return "perl -e 'for (1..200) { open(my $f, \"<\", \"/proc/$ARGV[0]/status\") or last; "
           "last if grep { /^SigCgt:\\s*(\\w+)/ && hex(substr($1, -8)) & 2 } <$f>; "
           "select(undef, undef, undef, 0.05) }' $!; ";
}

}  // namespace

TEST_CASE("a parser for perf's -x output reads perf's and archpmu's alike, field by field",
          "[stat-tool][perf][userspace]")
{
    LoadedModule module("backend=model");
    const std::size_t ncpus = online_cpus().size();
    struct Variant {
        const char* options;
        bool interval;
        bool per_cpu;
        bool repeat;
    };
    for (const Variant v :
         {Variant{"", false, false, false}, Variant{"-a -A", false, true, false},
          Variant{"-I 100", true, false, false}, Variant{"-I 100 -a -A", true, true, false},
          Variant{"-r 2", false, false, true}}) {
        INFO("options: " << v.options);
        const std::string perf =
            stderr_of(std::string("perf stat -x, ") + v.options + " -e page-faults -- sleep 0.25");
        const std::string ours = stderr_of(tool() + " stat -x, " + v.options +
                                           " -e instructions,branches -- sleep 0.25");
        INFO("perf:\n" << perf << "archpmu:\n" << ours);
        const auto perf_lines = lines_of(perf);
        const auto our_lines = lines_of(ours);
        REQUIRE_FALSE(perf_lines.empty());
        REQUIRE_FALSE(our_lines.empty());
        for (const auto& line : perf_lines) {
            INFO(line);
            const auto p = parse_perf_csv(line, v.interval, v.per_cpu, v.repeat);
            REQUIRE(p);
            CHECK(p->rest.empty());  // the parser knows every field perf prints
            CHECK(p->event == "page-faults");
        }
        for (const auto& line : our_lines) {
            INFO(line);
            const auto p = parse_perf_csv(line, v.interval, v.per_cpu, v.repeat);
            REQUIRE(p);
            CHECK((p->event == "instructions" || p->event == "branches"));
            CHECK(p->pct == Approx(100.0));
            REQUIRE(p->rest.size() == 1);  // archpmu's counter, after perf's fields
            CHECK(matches(p->rest[0], "fixed[0-9]|gp[0-9]+|mux"));
        }
        // The same lines per event: one, or one per CPU; -I: one per interval and the last.
        const std::size_t per_interval = v.per_cpu ? ncpus : 1;
        CHECK(perf_lines.size() % per_interval == 0);
        CHECK(our_lines.size() % (2 * per_interval) == 0);
        if (v.interval) {
            CHECK(our_lines.size() / (2 * per_interval) >= 3);  // 0.1, 0.2, the last
            CHECK(parse_perf_csv(our_lines.back(), true, v.per_cpu, false)->time >= 0.25);
        }
    }
}

TEST_CASE("stat -j prints perf's JSON lines: perf's keys in perf's order, then the counter",
          "[stat-tool][perf][userspace]")
{
    LoadedModule module("backend=model");
    for (const char* options : {"", "-I 100 -a -A"}) {
        INFO("options: " << options);
        const auto perf = lines_of(
            stderr_of(std::string("perf stat -j ") + options + " -e page-faults -- sleep 0.15"));
        const auto ours =
            lines_of(stderr_of(tool() + " stat -j " + options + " -e instructions -- sleep 0.15"));
        REQUIRE_FALSE(perf.empty());
        REQUIRE_FALSE(ours.empty());
        const auto keys = [](const std::string& line) {
            std::vector<std::string> out;
            const auto object = nlohmann::ordered_json::parse(line);
            for (auto it = object.begin(); it != object.end(); ++it)
                out.push_back(it.key());
            return out;
        };
        auto want = keys(perf.front());
        want.emplace_back("counter");
        for (const auto& line : ours) {
            INFO(line);
            CHECK(keys(line) == want);
            const auto j = nlohmann::json::parse(line);
            CHECK(j["event"] == "instructions");
            CHECK(std::stod(j["counter-value"].get<std::string>()) >= 0);
            CHECK(j["pcnt-running"].get<double>() == Approx(100.0));
        }
    }
}

TEST_CASE("a command counted alone, once, ends with perf's user and sys lines",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model");
    const std::regex user(R"(\n +(\d+\.\d{9}) seconds user\n +\d+\.\d{9} seconds sys\n)");
    const std::string spin = std::string(ARCHPMU_SPIN) + " user 0.3";
    // Only a command alone, once, as perf's ru_display: not with -a, -p or -r.
    for (const char* options : {"", "-a", "-r 2"}) {
        INFO("options '" << options << "'");
        const std::string theirs =
            stderr_of(std::string("perf stat ") + options + " -e task-clock -- " + spin);
        const std::string ours =
            stderr_of(tool() + " stat " + options + " -e instructions -- " + spin);
        INFO("perf:\n" << theirs << "archpmu:\n" << ours);
        std::smatch m;
        const bool perf_has = std::regex_search(theirs, m, user);
        CHECK(perf_has == (*options == '\0'));
        CHECK(std::regex_search(ours, m, user) == perf_has);
        if (perf_has)
            CHECK(std::stod(m[1]) >= 0.1);  // 0.3 s spun in user mode
    }
}

TEST_CASE("stat -r's elapsed line has perf's digits: two past the spread's first",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model");
    const std::regex elapsed(
        R"(\n +(\d+)\.(\d+) \+- \d+\.(\d+) seconds time elapsed  \( \+- +[0-9.]+% \)\n)");
    // The digits perf's rule gives for the spread, read in the line itself.
    const auto check = [&](const std::string& out) {
        INFO(out);
        std::smatch m;
        REQUIRE(std::regex_search(out, m, elapsed));
        const std::string sd = m[3];
        const auto first = sd.find_first_not_of('0');
        REQUIRE(first != std::string::npos);
        CHECK(m.str(2).size() == sd.size());
        CHECK(sd.size() == first + 3);  // the first significant digit, then two
    };
    check(stderr_of("perf stat -r 3 -e task-clock -- sleep 0.05"));
    check(stderr_of(tool() + " stat -r 3 -e instructions -- sleep 0.05"));
}

TEST_CASE("the counts go to stderr or -o FILE; stdout is the command's alone",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model");
    const std::string dir = "/tmp/archpmu-stat-out";
    run_command("rm -rf " + dir + " && mkdir -p " + dir);
    auto r = run_command("{ " + tool() + " stat -e instructions -- echo hello > " + dir +
                         "/out 2> " + dir + "/err; }");
    REQUIRE(r.status == 0);
    CHECK(read_file(dir + "/out") == "hello");
    CHECK_THAT(read_file(dir + "/err"),
               Catch::Contains("Performance counter stats for 'echo hello'"));

    // -o: perf's "# started on" line, then the table; the file is not the command's.
    r = run_command("{ " + tool() + " stat -o " + dir + "/counts -e instructions -- sh -c " +
                    "'ls -l /proc/self/fd/' > " + dir + "/fds 2> " + dir + "/err2; }");
    REQUIRE(r.status == 0);
    const std::string counts = read_file(dir + "/counts");
    CHECK_THAT(counts, Catch::StartsWith("# started on "));
    CHECK_THAT(counts, Catch::Contains("Performance counter stats for"));
    CHECK_THAT(read_file(dir + "/fds"), !Catch::Contains("counts"));
    CHECK(read_file(dir + "/err2").empty());
    // --append adds a second report; without it the file starts over.
    REQUIRE(run_tool("stat -o " + dir + "/counts --append -x, -e instructions -- true").status ==
            0);
    const std::string twice = read_file(dir + "/counts");
    CHECK(twice.find("# started on ", 1) != std::string::npos);
    CHECK_THAT(twice, Catch::Contains(",,instructions,"));
    REQUIRE(run_tool("stat -o " + dir + "/counts -e instructions -- true").status == 0);
    CHECK(read_file(dir + "/counts").find("# started on ", 1) == std::string::npos);
    // --json stays a document a JSON parser reads whole: no "# started on".
    REQUIRE(run_tool("stat -o " + dir + "/doc --json -e instructions -- true").status == 0);
    CHECK(nlohmann::json::parse(read_file(dir + "/doc"))["events"].size() == 1);
    r = run_tool("stat -o /nonexistent/dir/x -e instructions -- true");
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("cannot open '/nonexistent/dir/x'"));
}

TEST_CASE("stat's exit statuses are perf's: 129, 127 without a table, 130 after Ctrl-C",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model");
    CHECK(run_tool("stat --bogus -- true").status == 129);
    CHECK(run_tool("stat -e instructions -I abc -- true").status == 129);

    // A command that cannot be run: the reason, 127, no counts.
    auto r = run_tool("stat -e instructions -- /nonexistent/command");
    CHECK(r.status == 127);
    CHECK_THAT(r.out,
               Catch::Contains("archpmu stat: cannot run '/nonexistent/command': No such file"));
    CHECK_THAT(r.out, !Catch::Contains("Performance counter stats"));
    r = run_tool("stat -x, -e instructions -- /tmp");
    CHECK(r.status == 127);
    CHECK_THAT(r.out, Catch::Contains("Permission denied"));
    CHECK_THAT(r.out, !Catch::Contains("instructions"));
    // A command that itself exits 127 was run: its counts are shown.
    r = run_tool("stat -e instructions -- sh -c 'exit 127'");
    CHECK(r.status == 127);
    CHECK_THAT(r.out, Catch::Contains("Performance counter stats"));
    r = run_tool("stat -e instructions -- sh -c 'exit 3'");
    CHECK(r.status == 3);

    // Ctrl-C: the counts, then the tool ends by SIGINT (a shell says 130), with and
    // without a command; the terminal sends it to the whole process group.
    const std::string touch_started = std::string("touch ") + kStarted + "; ";
    for (const bool command : {false, true}) {
        const std::string what = command ? "-- sh -c '" + touch_started + "exec sleep 10'"
                                         : std::string("-a --duration 10");
        INFO(what);
        r = run_command(std::string("rm -f ") + kStarted + "; setsid " + tool() +
                        " stat -e instructions " + what + " 2>/tmp/archpmu-int.txt & " +
                        wait_for_start(command) +
                        "perl -e 'kill INT => -$ARGV[0]' $!; wait $!; "
                        "echo status=$?; cat /tmp/archpmu-int.txt");
        CHECK_THAT(r.out, Catch::Contains("status=130"));
        CHECK_THAT(r.out, Catch::Contains("Performance counter stats"));
    }
    // SIGINT to archpmu alone: the command runs on to its end, is counted, and
    // archpmu then ends by SIGINT.
    r = run_command(std::string("rm -f ") + kStarted + "; " + tool() +
                    " stat -e instructions -- sh -c '" + touch_started +
                    "sleep 1; echo done' 2>/tmp/archpmu-int.txt & " + wait_for_start(true) +
                    "kill -INT $!; wait $!; echo status=$?; cat /tmp/archpmu-int.txt");
    CHECK_THAT(r.out, Catch::Contains("done\nstatus=130"));
    CHECK_THAT(r.out, Catch::Contains("Performance counter stats"));
}

TEST_CASE("stat -p ends when the process it counts exits", "[stat-tool]")
{
    LoadedModule module("backend=model");
    const auto r = run_command("sleep 0.5 & " + tool() +
                               " stat -x, -e instructions -p $! 2>&1; echo status=$?");
    CHECK_THAT(r.out, Catch::Contains(",,instructions,"));
    CHECK_THAT(r.out, Catch::EndsWith("status=0\n"));
}

TEST_CASE("stat -I: perf's header, the last partial interval, real lengths in --json",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model");
    const auto human = stderr_of(tool() + " stat -I 100 -e instructions -C 0 --duration 0.35");
    CHECK_THAT(human, Catch::StartsWith("#           time             counts unit events\n"));
    const auto docs =
        lines_of(stderr_of(tool() + " stat --json -I 100 -e instructions -C 0 --duration 0.35"));
    REQUIRE(docs.size() >= 3);
    double last_time = 0;
    for (const auto& line : docs) {
        INFO(line);
        const auto doc = nlohmann::json::parse(line);
        const double t = doc["interval"].get<double>();
        CHECK(t > last_time);
        const double length_s = doc["elapsed_ns"].get<double>() / 1e9;
        // Each document covers the time since the one before it, not the nominal 100 ms.
        CHECK(length_s == Approx(t - last_time).margin(0.02));
        last_time = t;
    }
    CHECK(last_time >= 0.35);
}

TEST_CASE("on the impersonated Arrow Lake, slots counts on the P-cores and shows per core type",
          "[stat-tool]")
{
    const auto types = archpmu::test::read_cpuid_dump(std::string(ARCHPMU_CPUID_DIR) +
                                                      "/GenuineIntel00C0662_ArrowLake_07.txt");
    REQUIRE(types.size() == 2);
    LoadedModule module("backend=model model_cpuid=" + archpmu::test::model_cpuid_param(types[0]) +
                        " model_cpuid_hybrid=" + archpmu::test::model_cpuid_param(types[1]) +
                        " model_hybrid_cpus=" + odd_cpu_list());
    // Without -C, as perf: the P-cores count it, the E-cores lack it.
    const auto lines = lines_of(stderr_of(tool() + " stat -x, -e slots,cycles -a --duration 0.2"));
    INFO(joined_lines(lines));
    REQUIRE(lines.size() == 4);
    CHECK(matches(lines[0], "[1-9][0-9]*,,cpu_core/slots/,[0-9]+,100\\.00,,,fixed3"));
    CHECK(matches(lines[1], "<not supported>,,cpu_atom/slots/,0,100\\.00,,,fixed3"));
    CHECK(matches(lines[2], "[1-9][0-9]*,,cpu_core/cycles/,.*"));
    CHECK(matches(lines[3], "[1-9][0-9]*,,cpu_atom/cycles/,.*"));
    // A command is not refused either.
    const auto r = run_tool("stat -e slots -- true");
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("cpu_atom/slots/"));
    // A command that never runs on a P-core (CPU 1 is an E-core): <not counted>
    // there and no IPC, as perf, not a count of 0.
    const auto pinned =
        lines_of(stderr_of("taskset -c 1 " + tool() + " stat -x, -e cycles,instructions -- true"));
    INFO(joined_lines(pinned));
    REQUIRE(pinned.size() == 4);
    CHECK(matches(pinned[0], "<not counted>,,cpu_core/cycles/,0,100\\.00,,,fixed1"));
    CHECK(matches(pinned[1], "[1-9][0-9]*,,cpu_atom/cycles/,[1-9][0-9]*,100\\.00,,,fixed1"));
    CHECK(matches(pinned[2], "<not counted>,,cpu_core/instructions/,0,100\\.00,,,fixed0"));
    CHECK(matches(pinned[3],
                  "[1-9][0-9]*,,cpu_atom/instructions/,[0-9]+,100\\.00,"
                  "[0-9]+\\.[0-9]{2},insn per cycle,fixed0"));
}
