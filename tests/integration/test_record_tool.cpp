// SPDX-License-Identifier: MIT
// archpmu record end to end on the model's time-driven counting: the file it
// writes is read by Debian's own perf (report and script), which must name the
// function the workload spun in, its comm, pid and tid, and kernel functions
// through kallsyms.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>

#include "harness.hpp"

using namespace archpmu::itest;

namespace {

std::string spin(const char* mode, const char* seconds, unsigned cpu)
{
    return std::string(ARCHPMU_SPIN) + " " + mode + " " + seconds + " " + std::to_string(cpu);
}

}  // namespace

TEST_CASE("record: perf report names the function the command spun in", "[record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-user.data";
    ::unlink(file.c_str());
    // The recorder itself runs on another CPU, so that CPU's user time is the workload's.
    const auto rec = run_command("taskset -c 0 " + std::string(ARCHPMU_TOOL) +
                                 " record -e instructions:u -F 1000 -C " + std::to_string(cpu) +
                                 " -o " + file + " -- " + spin("user", "1.5", cpu));
    INFO(rec.out);
    REQUIRE(rec.status == 0);
    CHECK(rec.out.find("archpmu record: Captured and wrote") != std::string::npos);

    const auto report = run_command("perf report -i " + file + " --stdio --sort sym");
    INFO(report.out);
    REQUIRE(report.status == 0);
    CHECK(perf_report_share(report.out, "archpmu_spin_user") >= 90.0);
    // The command's build id, as perf record writes it and perf reads it from the binary.
    const auto ids = run_command("perf buildid-list -i " + file);
    const auto own = run_command("perf --no-pager buildid-list -i " + std::string(ARCHPMU_SPIN));
    INFO(ids.out);
    REQUIRE(own.out.size() > 20);
    CHECK_THAT(ids.out, Catch::Contains(own.out.substr(0, own.out.find('\n')) + " " +
                                        std::string(ARCHPMU_SPIN)));

    // Every sample in that function is the workload's, with its own pid and tid.
    const auto script = run_command("perf script -i " + file + " -F comm,pid,tid,ip,sym");
    REQUIRE(script.status == 0);
    std::istringstream in(script.out);
    std::string line;
    unsigned in_spin = 0;
    const std::regex row(R"(^\s*(\S+)\s+(\d+)/(\d+)\s+[0-9a-f]+\s+(\S+))");
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, row) || m[4] != "archpmu_spin_user")
            continue;
        CAPTURE(line);
        CHECK(m[1] == "archpmu_spin");
        CHECK(m[2] == m[3]);  // single-threaded: tid == pid
        in_spin++;
    }
    CHECK(in_spin >= 300);  // -F 1000 for a second, under QEMU/TCG

    // By process: the workload's pid and comm carry the samples.
    const auto by_pid = run_command("perf report -i " + file + " --stdio --sort pid,comm");
    INFO(by_pid.out);
    REQUIRE(by_pid.status == 0);
    CHECK(perf_report_share(by_pid.out, "archpmu_spin") >= 90.0);

    // perf annotate reads the same samples into the function's instructions: the
    // loop's lines carry the percentages (objdump disassembles the binary).
    const auto annotate =
        run_command("perf annotate -i " + file + " --stdio --no-source archpmu_spin_user 2>&1");
    INFO(annotate.out);
    REQUIRE(annotate.status == 0);
    CHECK(annotate.out.find("archpmu_spin_user") != std::string::npos);
    double sum = 0;
    std::istringstream lines(annotate.out);
    const std::regex hot(R"(^\s*([0-9]+\.[0-9]+)\s+:\s+[0-9a-f]+:)");
    while (std::getline(lines, line)) {
        std::smatch m;
        if (std::regex_search(line, m, hot))
            sum += std::stod(m[1]);
    }
    CHECK(sum >= 90.0);  // the instructions' shares of the function's samples
}

TEST_CASE("record -e with a cache event writes perf's cache event into perf.data",
          "[record-tool][cache-events]")
{
    LoadedModule mod(dump_params("GenuineIntel00506E3_Skylake.txt"));
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-cache.data";
    ::unlink(file.c_str());
    // The model counts the event as injected (81D0H: Skylake's L1-dcache-loads).
    const auto rec =
        run_command(std::string(ARCHPMU_TOOL) + " record -e L1-dcache-loads -c 100 -o " + file +
                    " -- taskset -c " + std::to_string(cpu) + " " + ARCHPMU_ITEST +
                    " --inject here 0x81d0 1000");
    INFO(rec.out);
    REQUIRE(rec.status == 0);
    // perf names it from its generic cache type and config, as its own recordings.
    const auto header = run_command("perf evlist -i " + file);
    INFO(header.out);
    CHECK(header.out.find("L1-dcache-loads") != std::string::npos);
    const auto report = run_command("perf report -i " + file + " --stdio --sort comm");
    INFO(report.out);
    REQUIRE(report.status == 0);
    // One injection of 1000 is one overflow: one sample, of the injecting command.
    CHECK(report.out.find("# Samples: 1  of event 'L1-dcache-loads'") != std::string::npos);
    CHECK(perf_report_share(report.out, "archpmu_itest") == 100.0);
}

TEST_CASE("record: kernel samples are symbolised through kallsyms", "[record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-kernel.data";
    ::unlink(file.c_str());
    const auto rec = run_tool("record -e cycles:k -F 1000 -C " + std::to_string(cpu) + " -o " +
                              file + " -- " + spin("syscalls", "0.5", cpu));
    INFO(rec.out);
    REQUIRE(rec.status == 0);
    const auto report = run_command("perf report -i " + file + " --stdio --sort dso,sym");
    INFO(report.out);
    REQUIRE(report.status == 0);
    // Lines like "  12.34%  [kernel.kallsyms]  [k] do_syscall_64": named, not hex.
    const std::regex named(R"(%\s+\[kernel\.kallsyms\]\s+\[k\]\s+[A-Za-z_])");
    CHECK(std::regex_search(report.out, named));
    CHECK(report.out.find("[.]") == std::string::npos);  // cycles:k: no user samples
}

TEST_CASE("record: perf record on a software event runs beside it", "[record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string ours = "/tmp/archpmu-record-beside.data";
    const std::string perfs = "/tmp/perf-beside.data";
    ::unlink(ours.c_str());
    ::unlink(perfs.c_str());
    // perf samples cpu-clock on every CPU for the whole of archpmu's recording. Both
    // recorders run on CPU 0, so their own user time stays off the recorded CPU.
    FILE* perf = ::popen(
        ("taskset -c 0 perf record -e cpu-clock -F 1000 -a -o " + perfs + " -- sleep 6 2>&1")
            .c_str(),
        "r");
    REQUIRE(perf != nullptr);
    ::sleep(2);  // perf is recording by then, even under QEMU/TCG
    const auto rec = run_command("taskset -c 0 " + std::string(ARCHPMU_TOOL) +
                                 " record -e instructions:u -F 1000 -C " + std::to_string(cpu) +
                                 " -o " + ours + " -- " + spin("user", "1.5", cpu));
    INFO(rec.out);
    std::string perf_out;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), perf)) > 0)
        perf_out.append(buf.data(), n);
    INFO(perf_out);
    CHECK(::pclose(perf) == 0);
    REQUIRE(rec.status == 0);
    const auto ours_report = run_command("perf report -i " + ours + " --stdio --sort comm,sym");
    INFO(ours_report.out);
    CHECK(perf_report_share(ours_report.out, "archpmu_spin_user") >= 90.0);
    // (Under QEMU/TCG perf's cpu-clock credits nearly every sample to swapper, with
    // or without archpmu: its file is checked for samples, not for the workload.)
    const auto perf_report = run_command("perf report -i " + perfs + " --stdio --sort comm");
    INFO(perf_report.out);
    CHECK(perf_report.status == 0);
    CHECK(
        std::regex_search(perf_report.out, std::regex(R"(# Samples: \d+K? of event 'cpu-clock')")));
}

TEST_CASE(
    "record keeps an earlier FILE as FILE.old as perf does and a command that cannot run loses "
    "no recording",
    "[record-tool][userspace]")
{
    LoadedModule mod("backend=model model_version=4");
    const std::string file = "/tmp/archpmu-record-backup.data";
    const std::string old = file + ".old";
    ::unlink(file.c_str());
    ::unlink(old.c_str());
    (void)run_command("rm -f " + file + ".archpmu-*");
    const auto size_of = [](const std::string& path) -> long long {
        struct stat st {};
        return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
    };
    const std::string record = "record -e cycles -F 500 -C 0 -o " + file + " -- ";
    REQUIRE(run_tool(record + spin("user", "0.2", 0)).status == 0);
    const long long first = size_of(file);
    REQUIRE(first > 0);
    CHECK(size_of(old) == -1);

    // The second recording moves the first aside, as perf does.
    REQUIRE(run_tool(record + spin("user", "0.4", 0)).status == 0);
    const long long second = size_of(file);
    CHECK(second > 0);
    CHECK(size_of(old) == first);

    // A command that cannot run: exit 127, and both files as they were.
    const auto typo = run_tool(record + "/nonexistent/archpmu-no-such-command");
    INFO(typo.out);
    CHECK(typo.status == 127);
    CHECK(typo.out.find("Captured and wrote") == std::string::npos);
    CHECK(size_of(file) == second);
    CHECK(size_of(old) == first);
    CHECK(run_command("perf report -i " + file + " --stdio").status == 0);
    // Nothing left beside them: the run's own file is written aside, then renamed.
    CHECK(run_command("{ ls " + file + ".archpmu-* 2>/dev/null; }").out.empty());
    CHECK(run_command("perf report -i " + old + " --stdio").status == 0);
    // Not a regular file: written in place; a pipe is refused, named.
    CHECK(run_tool("record -e cycles -F 500 -C 0 -o /dev/null -- true").status == 0);
    CHECK(run_command("test -c /dev/null").status == 0);
    const std::string fifo = "/tmp/archpmu-record-fifo";
    ::unlink(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto piped = run_tool("record -e cycles -C 0 -o " + fifo + " -- true");
    CHECK(piped.status != 0);
    CHECK_THAT(piped.out, Catch::Contains("'" + fifo + "' is a pipe or socket"));
    ::unlink(fifo.c_str());
    ::unlink(file.c_str());
    ::unlink(old.c_str());
}

TEST_CASE("record: SIGTERM finishes the recording and ends the command as perf record does",
          "[record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const std::string file = "/tmp/archpmu-record-term.data";
    ::unlink(file.c_str());
    (void)run_command("rm -f " + file + ".archpmu-*");
    const std::string record =
        std::string(ARCHPMU_TOOL) + " record -e cycles -F 500 -C 0 -o " + file + " -- ";
    // timeout(1) signals archpmu and the command: the file is written, the status is TERM's.
    const auto timed = run_command("timeout --preserve-status -s TERM 1 " + record + "sleep 31.25");
    INFO(timed.out);
    CHECK(timed.status == 128 + SIGTERM);
    CHECK(timed.out.find("Captured and wrote") != std::string::npos);
    CHECK(run_command("perf report -i " + file + " --stdio").status == 0);
    ::unlink(file.c_str());

    // SIGTERM to archpmu alone: it ends the command too, and still writes the file.
    const auto alone =
        run_command("{ " + record +
                    "sleep 32.25 & p=$!; sleep 1; kill -TERM $p; wait $p; echo \"status $?\"; }");
    INFO(alone.out);
    CHECK(alone.out.find("status 143") != std::string::npos);
    CHECK(alone.out.find("Captured and wrote") != std::string::npos);
    CHECK(run_command("pgrep -f 'slee[p] 32.25'").status != 0);
    CHECK(run_command("perf report -i " + file + " --stdio").status == 0);
    CHECK(run_command("{ ls " + file + ".archpmu-* 2>/dev/null; }").out.empty());
    ::unlink(file.c_str());
}

TEST_CASE("record killed with SIGKILL leaves what it wrote where perf report reads it",
          "[record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-kill.data";
    ::unlink(file.c_str());
    (void)run_command("rm -f " + file + ".archpmu-*");
    const auto killed = run_command(
        "{ " + std::string(ARCHPMU_TOOL) + " record -g -e instructions:u -F 1000 -o " + file +
        " -- " + spin("chain", "30", cpu) +
        " & p=$!; sleep 2; kill -KILL $p; wait $p; pkill -KILL -f 'archpmu_spi[n] chain 30'; }");
    INFO(killed.out);
    const auto staged = run_command("ls " + file + ".archpmu-*");
    REQUIRE(staged.status == 0);
    const std::string path = staged.out.substr(0, staged.out.find('\n'));
    const auto report =
        run_command("perf report -i " + path + " --stdio --no-children --sort sym 2>&1");
    INFO(report.out);
    CHECK(report.status == 0);
    CHECK(report.out.find("archpmu_spin_user") != std::string::npos);
    CHECK(report.out.find("archpmu_chain_b") != std::string::npos);  // its call graph
    (void)run_command("rm -f " + file + ".archpmu-*");
}

// What the tool writes from the rings' counts: on the stock kernel only ([userspace]), where
// the recorder is stopped while the command runs (on the debug kernel pgrep may not see it in
// time).
TEST_CASE("record: perf report's Total Lost Samples is every sample a full ring dropped",
          "[record-tool][userspace]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-lost.data";
    ::unlink(file.c_str());
    // The recorder stopped for 1.5 s while the command samples into a one-page ring:
    // once the command runs (it is released once the recording has started; on the debug
    // kernel that takes over half a second).
    const auto rec = run_command(
        "{ taskset -c 0 " + std::string(ARCHPMU_TOOL) +
        " record -e instructions:u -F 1000 -m 1 -C " + std::to_string(cpu) + " -o " + file +
        " -- " + spin("user", "2.5", cpu) +
        " & p=$!; i=0; until pgrep -x -P $p archpmu_spin >/dev/null || [ $i -ge 300 ]; do "
        "sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -STOP $p; sleep 1.5; kill -CONT $p; "
        "wait $p; }");
    INFO(rec.out);
    REQUIRE(rec.status == 0);
    std::smatch m;
    const std::string line = "CPU" + std::to_string(cpu) + ": ";
    REQUIRE(std::regex_search(rec.out, m, std::regex(line + R"((\d+) samples, (\d+) lost)")));
    const unsigned long long lost = std::stoull(m[2]);
    REQUIRE(lost > 0);  // the ring holds some 60 samples; the debug kernel drops fewest
    const auto report = run_command("perf report -i " + file + " --stdio 2>&1");
    INFO(report.out);
    CHECK(report.status == 0);
    CHECK_THAT(report.out, Catch::Contains("# Total Lost Samples: " + std::to_string(lost) + "\n"));
    ::unlink(file.c_str());
}
