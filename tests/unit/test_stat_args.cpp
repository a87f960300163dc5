// SPDX-License-Identifier: MIT
// The archpmu tool's command line: every malformed argument is refused, before
// anything runs, with one line that names the argument and what it takes.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "archpmu/error.hpp"
#include "args.hpp"

using archpmu::tool::Command;
using Catch::Contains;
using Catch::StartsWith;

namespace {

Command parse(std::vector<std::string> args, std::string* out = nullptr)
{
    args.insert(args.begin(), "archpmu");
    std::vector<const char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args)
        argv.push_back(a.c_str());
    argv.push_back(nullptr);
    std::ostringstream help;
    auto cmd = archpmu::tool::parse_command_line(static_cast<int>(args.size()), argv.data(), help);
    if (out)
        *out = help.str();
    return cmd;
}

// The first line of a refused command line's message (the reason), checking that the
// usage follows it and that it asks for perf's exit status, 129.
std::string refused(const std::vector<std::string>& args)
{
    const auto cmd = parse(args);
    CHECK(cmd.action == Command::Action::exit);
    CHECK(cmd.status == archpmu::tool::kUsageStatus);
    const auto eol = cmd.error.find('\n');
    REQUIRE(eol != std::string::npos);
    CHECK_THAT(cmd.error.substr(eol), Contains("\n Usage: archpmu "));
    return cmd.error.substr(0, eol);
}

// The message of the archpmu::Error (EINVAL) that fn throws.
template <typename Fn>
std::string error_of(Fn fn)
{
    try {
        fn();
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == EINVAL);
        return e.what();
    }
    FAIL("no archpmu::Error");
    return {};
}

struct Run {
    int status = -1;
    std::string out;
    std::string err;
};

std::string slurp(std::FILE* f)
{
    std::string text;
    std::rewind(f);
    for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f))
        text += static_cast<char>(c);
    return text;
}

// Runs the built archpmu binary; it gets 10 seconds.
Run run_tool(const std::vector<std::string>& args)
{
    std::vector<std::string> all{ARCHPMU_TOOL};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::tmpfile();
    REQUIRE(out != nullptr);
    REQUIRE(err != nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(::fileno(out), STDOUT_FILENO);
        ::dup2(::fileno(err), STDERR_FILENO);
        ::alarm(10);  // survives the exec: a hang fails the test
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    Run r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    (void)std::fclose(out);
    (void)std::fclose(err);
    return r;
}

}  // namespace

TEST_CASE("stat --duration takes seconds in 0 to 31536000 exclusive of 0", "[stat-args]")
{
    using std::chrono::nanoseconds;
    CHECK(archpmu::tool::parse_duration("0.45") == nanoseconds(450000000));
    CHECK(archpmu::tool::parse_duration("2") == nanoseconds(2000000000));
    CHECK(archpmu::tool::parse_duration("31536000") == nanoseconds(31536000000000000));
    CHECK(archpmu::tool::parse_duration("1e-12") == nanoseconds(1));

    for (const char* bad : {"1e10", "1e30", "31536001", "1e400", "inf", "-inf", "-1", "0", "-0"}) {
        INFO(bad);
        CHECK(error_of([&] { archpmu::tool::parse_duration(bad); }) ==
              std::string("--duration: '") + bad +
                  "' is out of range; give seconds, more than 0 and at most 31536000 (365 days): "
                  "Invalid argument");
    }
    for (const char* bad : {"nan", "NaN", "", "abc", "1s", "0x10", " 1", "1,5"}) {
        INFO(bad);
        CHECK_THAT(
            error_of([&] { archpmu::tool::parse_duration(bad); }),
            Contains(std::string("--duration: '") + bad + "' is not a number; give seconds"));
    }
}

TEST_CASE("stat --duration's refusals are one short line, not DBL_MAX", "[stat-args]")
{
    for (const char* bad : {"1e10", "1e30", "nan", "-1", "inf", "0"}) {
        INFO(bad);
        const auto line = refused({"stat", "--duration", bad});
        CHECK_THAT(line, Contains("archpmu stat: --duration: '"));
        CHECK_THAT(line, Contains("at most 31536000"));
        CHECK(line.size() < 120);
    }
}

TEST_CASE("stat -e refuses an empty modifier and empty events", "[stat-args]")
{
    CHECK(refused({"stat", "-e", "cycles:", "--duration", "1"}) ==
          "archpmu stat: -e/--event: bad event 'cycles:': empty modifier after ':' (use u, k, uk "
          "or D)");
    CHECK_THAT(refused({"stat", "-e", "cycles,", "--duration", "1"}),
               Contains("-e/--event: bad event 'cycles,': empty event (separate events"));
    CHECK_THAT(refused({"stat", "-e", "", "--duration", "1"}),
               Contains("-e/--event: bad event '': empty event list"));
    CHECK_THAT(refused({"stat", "-e", "cycles:uu", "--", "true"}),
               Contains("-e/--event: bad event 'cycles:uu': modifier 'u' given twice"));
    // A refusal shows no caret line and no errno text.
    CHECK(refused({"stat", "-e", "bogus", "--duration", "1"}) ==
          "archpmu stat: -e/--event: bad event 'bogus': unknown event 'bogus' (try cycles, "
          "instructions, r00c0 or cpu/event=0xc0,umask=0/; 'archpmu list' names the events "
          "of this CPU)");
}

TEST_CASE("stat -C refuses empty lists and items, signs and CPUs past 8191", "[stat-args]")
{
    CHECK(refused({"stat", "-C", "", "--duration", "1"}) ==
          "archpmu stat: -C/--cpu: bad CPU list '': it is empty; give CPUs 0-8191 as N or N-M, "
          "comma-separated");
    for (const char* bad : {"1,,2", "3-1", "-1", "99999999999", "1,", "0-99999"}) {
        INFO(bad);
        const auto line = refused({"stat", "-C", bad, "--duration", "1"});
        CHECK_THAT(line, Contains(std::string("archpmu stat: -C/--cpu: bad CPU list '") + bad));
        CHECK_THAT(line, Contains("give CPUs 0-8191 as N or N-M"));
    }
}

TEST_CASE("stat -x refuses an empty separator and line breaks, and \\t is a tab", "[stat-args]")
{
    CHECK(refused({"stat", "-x", "", "--duration", "1"}) ==
          "archpmu stat: -x/--field-separator: the separator is empty; give one or more "
          "characters, no line break (\\t: a tab)");
    CHECK_THAT(refused({"stat", "-x", "a\nb", "--duration", "1"}),
               Contains("-x/--field-separator: the separator has a line break"));
    CHECK(archpmu::tool::parse_separator("\\t") == "\t");
    CHECK(archpmu::tool::parse_separator(";;") == ";;");
}

TEST_CASE("stat -I takes whole milliseconds 10-3600000", "[stat-args]")
{
    CHECK(archpmu::tool::parse_interval_ms("10") == 10);
    CHECK(archpmu::tool::parse_interval_ms("3600000") == 3600000);
    for (const char* bad : {"0", "9", "3600001", "99999999999", "99999999999999999999999"}) {
        INFO(bad);
        CHECK(refused({"stat", "-I", bad}) ==
              std::string("archpmu stat: -I/--interval-print: '") + bad +
                  "' is out of range; give milliseconds 10-3600000");
    }
    for (const char* bad : {"", "abc", "-1", "1e3", "100ms", "0x10"}) {
        INFO(bad);
        CHECK(refused({"stat", "-I", bad}) ==
              std::string("archpmu stat: -I/--interval-print: '") + bad +
                  "' is not a whole number; give milliseconds 10-3600000");
    }
}

TEST_CASE("command-line errors name the argument, show the usage and exit 129", "[stat-args]")
{
    CHECK_THAT(refused({}), Contains("archpmu: A subcommand is required"));
    CHECK_THAT(refused({"stat"}),
               Contains("archpmu stat: give a COMMAND, -p PIDS, -t TIDS, --duration SECONDS"));
    CHECK_THAT(refused({"stat", "--duration", "1", "--", "true"}),
               Contains("--duration and a COMMAND exclude each other"));
    CHECK_THAT(refused({"stat", "--bogus"}), Contains("--bogus"));
    CHECK_THAT(refused({"stat", "-a", "-C", "0", "--duration", "1"}),
               Contains("--all-cpus excludes --cpu"));
    const auto both = refused({"stat", "-x", ",", "-j", "--duration", "1"});
    CHECK_THAT(both,
               Contains("--json-output") && Contains("excludes") && Contains("--field-separator"));
    CHECK_THAT(refused({"stat", "--json", "-j", "--duration", "1"}), Contains("excludes"));
    CHECK_THAT(refused({"stat", "--append", "--", "true"}), Contains("-o/--output"));
    CHECK_THAT(refused({"stat", "-o", "", "--", "true"}), Contains("-o/--output"));
    CHECK_THAT(refused({"stat", "-C", "0", "-C", "1", "--duration", "1"}), Contains("--cpu"));
    CHECK(refused({"info", "--", "ls"}) == "archpmu info: takes no COMMAND");
    CHECK_THAT(refused({"info", "ls"}), Contains("ls"));
    CHECK_THAT(refused({"--device", "", "info"}),
               Contains("archpmu info: --device: the path is empty"));
    // -d is perf stat's --detailed; the device is --device.
    CHECK_THAT(refused({"stat", "-d", "--topdown", "--", "true"}), Contains("-d/--detailed"));
    CHECK_THAT(refused({"-d", "/dev/x", "info"}), Contains("(the device option is --device)"));
    CHECK_THAT(refused({"record", "-d", "/dev/x", "true"}), Contains("--device"));
}

TEST_CASE("stat -d, -dd, -ddd: perf's levels of detailed events", "[stat-args][detailed]")
{
    CHECK(parse({"stat", "--", "true"}).stat.detailed == 0);
    CHECK(parse({"stat", "-d", "--", "true"}).stat.detailed == 1);
    CHECK(parse({"stat", "-dd", "--", "true"}).stat.detailed == 2);
    CHECK(parse({"stat", "-d", "-d", "-d", "-e", "cycles", "true"}).stat.detailed == 3);
    CHECK(parse({"stat", "--detailed", "-a", "--duration", "1"}).stat.detailed == 1);
}

TEST_CASE("stat --topdown takes level 0 (the highest), 1 or 2, and neither -e nor -A",
          "[stat-args][topdown]")
{
    using archpmu::tool::kTopdownHighest;
    CHECK(parse({"stat", "--topdown", "--", "true"}).stat.topdown_level == kTopdownHighest);
    CHECK(parse({"stat", "--topdown", "--td-level", "0", "true"}).stat.topdown_level ==
          kTopdownHighest);
    CHECK(parse({"stat", "--topdown", "--td-level", "1", "-x,", "-I", "100", "-a"})
              .stat.topdown_level == 1);
    CHECK(parse({"stat", "--topdown", "--td-level", "2", "true"}).stat.topdown_level == 2);
    CHECK(parse({"stat", "-e", "cycles", "--", "true"}).stat.topdown_level == 0);
    CHECK_THAT(refused({"stat", "--topdown", "--td-level", "3", "true"}),
               Contains("--td-level: '3': the max level is 2"));
    CHECK_THAT(refused({"stat", "--td-level", "1", "true"}), Contains("add it"));
    CHECK_THAT(refused({"stat", "--topdown", "-e", "cycles", "true"}), Contains("-e/--event"));
    CHECK_THAT(refused({"stat", "--topdown", "-a", "-A", "--duration", "1"}),
               Contains("-A/--per-cpu"));
    // As perf's unsigned option.
    CHECK(parse({"stat", "--topdown", "--td-level", "00", "true"}).stat.topdown_level ==
          kTopdownHighest);
    CHECK(parse({"stat", "--topdown", "--td-level", "002", "true"}).stat.topdown_level == 2);
    CHECK_THAT(refused({"stat", "--topdown", "--td-level", "-1", "true"}),
               Contains("--td-level: '-1': give 0 (the highest level there is), 1 or 2"));
    CHECK_THAT(refused({"stat", "--topdown", "--td-level", "10", "true"}),
               Contains("--td-level: '10': the max level is 2"));
}

TEST_CASE("stat -M TopdownL1 and TopdownL2 are --topdown at that level, as perf's groups",
          "[stat-args][topdown]")
{
    CHECK(parse({"stat", "-M", "TopdownL1", "true"}).stat.topdown_level == 1);
    CHECK(parse({"stat", "-M", "topdownl2", "true"}).stat.topdown_level == 2);
    // The deepest of several, as perf shows them all.
    CHECK(parse({"stat", "-M", "TopdownL2,TopdownL1", "true"}).stat.topdown_level == 2);
    CHECK(parse({"stat", "-M", "TopdownL1", "-M", "TopdownL2", "true"}).stat.topdown_level == 2);
    CHECK(parse({"stat", "--topdown", "-M", "TopdownL1", "true"}).stat.topdown_level == 1);
    CHECK_THAT(refused({"stat", "-M", "Frontend_Bound", "true"}),
               Contains("-M/--metrics: 'Frontend_Bound' is not a metric group archpmu "
                        "computes: give TopdownL1 or TopdownL2"));
    CHECK_THAT(refused({"stat", "-M", "TopdownL1", "--td-level", "2", "true"}),
               Contains("-M/--metrics and --td-level exclude each other"));
    CHECK_THAT(refused({"stat", "-M", "TopdownL1", "-e", "cycles", "true"}),
               Contains("-e/--event"));
    CHECK_THAT(refused({"stat", "-M", "TopdownL1", "-d", "true"}), Contains("-d/--detailed"));
}

TEST_CASE("good command lines parse into checked options", "[stat-args]")
{
    auto cmd = parse({"--device", "/dev/x", "stat", "-e", "cycles:u,instructions", "-e", "branches",
                      "-C", "2,0-1", "-A", "-I", "100", "-x", "\\t", "--duration", "0.5"});
    REQUIRE(cmd.action == Command::Action::stat);
    CHECK(cmd.stat.device == "/dev/x");
    REQUIRE(cmd.stat.events.size() == 3);
    CHECK(cmd.stat.events[0].name == "cycles:u");
    CHECK(cmd.stat.events[2].name == "branches");
    CHECK(cmd.stat.cpus == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(cmd.stat.per_cpu);
    CHECK(cmd.stat.interval_ms == 100);
    CHECK(cmd.stat.separator == "\t");
    CHECK(cmd.stat.duration == std::chrono::nanoseconds(500000000));

    CHECK(cmd.stat.style == archpmu::StatFormat::Style::csv);
    CHECK(cmd.stat.output.empty());

    cmd = parse({"stat", "-j", "-o", "counts.txt", "--append", "--", "sleep", "1"});
    REQUIRE(cmd.action == Command::Action::stat);
    CHECK(cmd.stat.events.size() == 5);  // the default events
    CHECK(cmd.stat.cpus.empty());
    CHECK(cmd.stat.style == archpmu::StatFormat::Style::json_lines);
    CHECK(cmd.stat.output == "counts.txt");
    CHECK(cmd.stat.append);
    CHECK(parse({"stat", "--json", "true"}).stat.style == archpmu::StatFormat::Style::json);
    CHECK(parse({"stat", "true"}).stat.style == archpmu::StatFormat::Style::human);
    CHECK_FALSE(cmd.stat.duration);
    CHECK(cmd.stat.command == std::vector<std::string>{"sleep", "1"});

    cmd = parse({"info", "--json"});
    CHECK(cmd.action == Command::Action::info);
    CHECK(cmd.json);

    std::string help;
    cmd = parse({"stat", "--help"}, &help);
    CHECK(cmd.action == Command::Action::exit);
    CHECK(cmd.status == 0);
    CHECK_THAT(help, Contains("--duration"));
}

TEST_CASE("the archpmu binary refuses bad arguments with the reason and the usage", "[stat-args]")
{
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"stat", "--duration", "1e10"}, "archpmu stat: --duration: '1e10' is out of range"},
        {{"stat", "--duration", "1e30"}, "archpmu stat: --duration: '1e30' is out of range"},
        {{"stat", "--duration", "nan"}, "archpmu stat: --duration: 'nan' is not a number"},
        {{"stat", "-e", "cycles:", "--duration", "1"}, "archpmu stat: -e/--event: "},
        {{"stat", "-e", "bogus", "--duration", "1"}, "archpmu stat: -e/--event: "},
        {{"stat", "-C", "", "--duration", "1"}, "archpmu stat: -C/--cpu: "},
        {{"stat", "-x", "", "--duration", "1"}, "archpmu stat: -x/--field-separator: "},
        {{"stat", "-I", "0"}, "archpmu stat: -I/--interval-print: "},
    };
    for (const auto& [args, start] : cases) {
        INFO(args[1] << " '" << args[2] << "'");
        const Run r = run_tool(args);
        CHECK(r.status == 129);
        CHECK(r.out.empty());
        CHECK(r.err.rfind(start, 0) == 0);
        CHECK_THAT(r.err,
                   Contains("\n\n Usage: archpmu stat [<options>] [--] [<command> [<args>]]\n"));
        CHECK(r.err.back() == '\n');
    }
    const Run r = run_tool({"stat", "--bogus"});
    CHECK(r.status == 129);
    CHECK_THAT(r.err,
               StartsWith("archpmu stat: The following argument was not expected: --bogus\n"));
    const Run none = run_tool({});
    CHECK(none.status == 129);
    CHECK_THAT(none.err, StartsWith("archpmu: A subcommand is required\n"));
}

TEST_CASE("the COMMAND may follow the options without --, as in perf", "[stat-args]")
{
    const auto command_of = [](const std::vector<std::string>& args) {
        const auto cmd = parse(args);
        REQUIRE(cmd.action == Command::Action::stat);
        return cmd.stat.command;
    };
    using Words = std::vector<std::string>;
    CHECK(command_of({"stat", "sleep", "0.1"}) == Words{"sleep", "0.1"});
    // -e takes one list per -e, as perf: the next word is the command.
    CHECK(command_of({"stat", "-e", "cycles", "instructions"}) == Words{"instructions"});
    CHECK(command_of({"stat", "-ecycles", "-x,", "ls", "-l", "-e", "x"}) ==
          Words{"ls", "-l", "-e", "x"});
    CHECK(command_of({"stat", "--event=cycles", "-I", "100", "sh", "-c", "true"}) ==
          Words{"sh", "-c", "true"});
    CHECK(command_of({"stat", "-aA", "sleep", "1"}) == Words{"sleep", "1"});
    CHECK(command_of({"stat", "-e", "cycles", "--", "-dash", "--"}) == Words{"-dash", "--"});
    CHECK(command_of({"stat", "--", "stat"}) == Words{"stat"});
    // --device before or after the subcommand.
    CHECK(parse({"stat", "--device", "/dev/x", "true"}).stat.device == "/dev/x");
    CHECK(parse({"--device=/dev/y", "stat", "true"}).stat.device == "/dev/y");
    const auto rec = parse({"record", "-F", "99", "-o", "p.data", "sleep", "1"});
    REQUIRE(rec.action == Command::Action::record);
    CHECK(rec.record.command == Words{"sleep", "1"});
    CHECK(rec.record.output == "p.data");
}

TEST_CASE("archpmu --version prints the version and exits 0", "[stat-args]")
{
    std::string out;
    const auto cmd = parse({"--version"}, &out);
    CHECK(cmd.action == Command::Action::exit);
    CHECK(cmd.status == 0);
    CHECK(out == std::string("archpmu version ") + ARCHPMU_VERSION + "\n");
}

TEST_CASE("stat -r takes 1-1000000 runs of a COMMAND, without -p, -t or -I", "[stat-args]")
{
    auto cmd = parse({"stat", "-r", "5", "--", "true"});
    REQUIRE(cmd.action == Command::Action::stat);
    CHECK(cmd.stat.repeat == 5);
    CHECK(parse({"stat", "--", "true"}).stat.repeat == 1);
    for (const char* bad : {"0", "1000001"}) {
        INFO(bad);
        CHECK(refused({"stat", "-r", bad, "--", "true"}) ==
              std::string("archpmu stat: -r/--repeat: '") + bad +
                  "' is out of range; give a whole number 1-1000000");
    }
    CHECK(refused({"stat", "-r", "x", "--", "true"}) ==
          "archpmu stat: -r/--repeat: 'x' is not a whole number; give a whole number 1-1000000");
    CHECK_THAT(refused({"stat", "-r", "3", "--duration", "1"}),
               Contains("-r/--repeat runs a COMMAND again and again"));
    CHECK_THAT(refused({"stat", "-r", "3", "-p", "1", "--", "true"}), Contains("without -p"));
    CHECK_THAT(refused({"stat", "-r", "3", "-I", "100", "--", "true"}),
               Contains("-r/--repeat and -I/--interval-print exclude each other"));
}
