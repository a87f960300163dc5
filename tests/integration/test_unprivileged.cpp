// SPDX-License-Identifier: MIT
// Without CAP_PERFMON: what the module parameter unprivileged allows (perf's
// perf_event_paranoid), to whoever may open the device (the archpmu group's
// members with udev/99-archpmu.rules; here the node is opened to all).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <string>

#include "archpmu.h"
#include "archpmu/counter.hpp"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using namespace std::chrono_literals;

namespace {

// Runs `body` in a child that is nobody without capabilities; its exit
// status (0: every step as expected, else the step that was not).
template <typename Body>
int as_plain_user(Body body)
{
    const pid_t child = ::fork();
    if (child == 0) {
        if (!become_nobody())
            ::_exit(100);
        try {
            ::_exit(body());
        } catch (...) {
            ::_exit(99);
        }
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

// COUNT_OPEN of one event, as the caller: the errno (0: opened) and bad_event.
struct OpenOutcome {
    int err = 0;
    uint32_t bad_event = 0;
};

OpenOutcome open_one(uint64_t config, uint32_t flags, uint32_t task_pid = 0)
{
    const archpmu::UniqueFd dev(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    archpmu_event ev{};
    ev.config = config;
    archpmu_count_open cmd{};
    cmd.size = sizeof(cmd);
    cmd.flags = flags;
    cmd.nr_events = 1;
    cmd.events = reinterpret_cast<uintptr_t>(&ev);
    cmd.task_pid = task_pid;
    const int fd = ::ioctl(dev.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd);
    OpenOutcome out;
    out.err = fd >= 0 ? 0 : errno;
    out.bad_event = cmd.bad_event;
    if (fd >= 0)
        ::close(fd);
    return out;
}

constexpr uint64_t kInstructions = 0x00c0ULL;
constexpr uint32_t kTask = ARCHPMU_COUNT_OPEN_TASK;

}  // namespace

TEST_CASE("without CAP_PERFMON one counts one's own tasks, in user mode only",
          "[unprivileged][task]")
{
    LoadedModule module("backend=model unprivileged=own-user");
    const OpenNode open_node;
    const int status = as_plain_user([] {
        const archpmu::Device dev;
        if (dev.info().privilege != archpmu::Privilege::own_user)
            return 1;
        // The front for one's own code: user mode implied, the names as given.
        archpmu::Counter c{"instructions,cycles"};
        // The model counts by its timer's ticks in user mode: a guest that TCG
        // stalls (a clocksource switch, a busy host) may see none in 50 ms.
        for (int i = 0; i < 40 && c.read().get("instructions") == 0; i++) {
            c.start();
            spin_for(50ms);
            c.stop();
        }
        const archpmu::Results& r = c.read();
        if (r.events[0].name != "instructions" || r.get("instructions") == 0)
            return 2;
        if (open_one(kInstructions | ARCHPMU_EVTSEL_USR, kTask).err != 0)
            return 3;
        // Kernel mode, both modes (neither bit), AnyThread: refused, named.
        for (const uint64_t config : std::initializer_list<uint64_t>{
                 kInstructions | ARCHPMU_EVTSEL_OS, kInstructions,
                 kInstructions | ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_ANY}) {
            const OpenOutcome o = open_one(config, kTask);
            if (o.err != EPERM || o.bad_event != 0)
                return 4;
        }
        // CPUs, not tasks.
        const OpenOutcome cpus = open_one(kInstructions | ARCHPMU_EVTSEL_USR, 0);
        if (cpus.err != EPERM || cpus.bad_event != ~0U)
            return 5;
        // Another user's task (init's): the task scope's rule.
        if (open_one(kInstructions | ARCHPMU_EVTSEL_USR, kTask, 1).err != EACCES)
            return 6;
        // The library names what is wrong.
        try {
            archpmu::SessionOptions o;
            o.task = archpmu::TaskScope{archpmu::TaskScope::Kind::thread, 0, false, false};
            archpmu::Session s("instructions:k", o);
            return 7;
        } catch (const archpmu::Error& e) {
            if (e.code().value() != EPERM ||
                std::string(e.what()).find("user mode only") == std::string::npos)
                return 8;
        }
        return 0;
    });
    CHECK(status == 0);
}

TEST_CASE("the module parameter unprivileged sets what callers without CAP_PERFMON may open",
          "[unprivileged][task]")
{
    const auto run = [](const std::string& policy, archpmu::Privilege expected, int task_err,
                        int cpu_err) {
        LoadedModule module("backend=model unprivileged=" + policy);
        const OpenNode open_node;
        return as_plain_user([&] {
            if (archpmu::Device().info().privilege != expected)
                return 1;
            if (open_one(kInstructions | ARCHPMU_EVTSEL_USR, kTask).err != task_err)
                return 2;
            if (open_one(kInstructions, 0, 0).err != cpu_err)
                return 3;
            return 0;
        });
    };
    CHECK(run("off", archpmu::Privilege::none, EPERM, EPERM) == 0);
    CHECK(run("own-user", archpmu::Privilege::own_user, 0, EPERM) == 0);
    CHECK(run("all", archpmu::Privilege::all, 0, 0) == 0);

    LoadedModule module("backend=model");
    CHECK(read_file("/sys/module/archpmu/parameters/unprivileged") == "off");  // the default
    CHECK(run_command("echo sometimes > /sys/module/archpmu/parameters/unprivileged").status != 0);
    CHECK_THAT(run_command("dmesg | tail -n 5").out,
               Catch::Contains("unprivileged=sometimes: allowed off, own-user, all"));
    write_file("/sys/module/archpmu/parameters/unprivileged", "own-user");
    CHECK(read_file("/sys/module/archpmu/parameters/unprivileged") == "own-user");
}

TEST_CASE("stat without CAP_PERFMON counts the command in user mode, as perf does",
          "[unprivileged][tool]")
{
    LoadedModule module("backend=model unprivileged=own-user");
    const OpenNode open_node;
    const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    const auto own = run_command(as_nobody + ARCHPMU_TOOL +
                                 " stat -e instructions,cycles:D,cpu/event=0xc4/ -x, -- " +
                                 ARCHPMU_SPIN + " user 0.05");
    CHECK(own.status == 0);
    // perf's CSV: count, unit, event; counted in the command's user mode, and
    // named as perf names them.
    CHECK_THAT(own.out, Catch::Matches("(.|\n)*\n?[1-9][0-9]*,,instructions:u,(.|\n)*"));
    CHECK_THAT(own.out, Catch::Contains(",cycles:Du,"));
    CHECK_THAT(own.out, Catch::Contains(",cpu/event=0xc4/u,"));

    const auto cpus = run_command(as_nobody + ARCHPMU_TOOL + " stat -a -e instructions:u -- true");
    CHECK(cpus.status != 0);
    CHECK_THAT(cpus.out, Catch::Contains("counting CPUs needs CAP_PERFMON"));

    const auto kernel = run_command(as_nobody + ARCHPMU_TOOL + " stat -e instructions:k -- true");
    CHECK(kernel.status != 0);
    CHECK_THAT(kernel.out, Catch::Contains("user mode only"));

    const auto regs = run_command(as_nobody + ARCHPMU_TOOL + " regs -C 0");
    CHECK(regs.status != 0);
}

TEST_CASE("record without CAP_PERFMON samples the command's user mode, and perf names it",
          "[unprivileged][tool][task-sample]")
{
    LoadedModule module("backend=model model_version=4 unprivileged=own-user");
    const OpenNode open_node;
    const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    const std::string file = "/tmp/archpmu-record-nobody.data";
    ::unlink(file.c_str());
    // Debian's kernel.perf_event_paranoid 3 gives nobody no side-band events: the
    // command's code is named from /proc as its samples come.
    const auto rec = run_command(as_nobody + ARCHPMU_TOOL + " record -F 1000 -o " + file + " -- " +
                                 ARCHPMU_SPIN + " user 1");
    INFO(rec.out);
    REQUIRE(rec.status == 0);
    const auto report = run_command("perf report -f -i " + file + " --stdio --sort comm,dso,sym");
    INFO(report.out);
    REQUIRE(report.status == 0);
    CHECK(perf_report_share(report.out, "archpmu_spin_user") >= 80.0);
    CHECK(report.out.find("[k]") == std::string::npos);  // cycles:u only
    const auto header = run_command("perf evlist -f -i " + file);
    CHECK_THAT(header.out, Catch::Contains("cycles:u"));

    const auto cpus =
        run_command(as_nobody + ARCHPMU_TOOL + " record -a --duration 0.1 -o " + file + ".a");
    CHECK(cpus.status != 0);
    CHECK_THAT(cpus.out, Catch::Contains("CAP_PERFMON"));
    const auto kernel =
        run_command(as_nobody + ARCHPMU_TOOL + " record -e cycles:k -o " + file + ".k -- true");
    CHECK(kernel.status != 0);
    CHECK_THAT(kernel.out, Catch::Contains("user mode only"));
    const auto init =
        run_command(as_nobody + ARCHPMU_TOOL + " record -p 1 --duration 0.1 -o " + file + ".p");
    CHECK(init.status != 0);
    CHECK_THAT(init.out, Catch::Contains("process 1"));
}
