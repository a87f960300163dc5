// SPDX-License-Identifier: MIT
// The VM integration suite loads and unloads archpmu.ko, so it refuses to run
// outside the guest that scripts/vm boots (which sets ARCHPMU_IN_VM).
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace {

bool g_kernel_complained = false;

// Like liburing's runner: after each test case, look for kernel warnings,
// BUGs, Oopses and the like that it caused, and name the test case.
class KernelLogListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    // A random order is only reproducible with its seed.
    void testRunStarting(Catch::TestRunInfo const& info) override
    {
        TestEventListenerBase::testRunStarting(info);
        if (m_config->runOrder() == Catch::RunTests::InRandomOrder)
            std::fprintf(stderr, "itest: random order: --rng-seed %u repeats it\n",
                         m_config->rngSeed());
    }

    void testCaseStarting(Catch::TestCaseInfo const& info) override
    {
        TestEventListenerBase::testCaseStarting(info);
        // A hung run names the test case it hung in, on the console and in dmesg.
        std::fprintf(stderr, "itest: start '%s'\n", info.name.c_str());
        if (FILE* kmsg = std::fopen("/dev/kmsg", "we")) {
            std::fprintf(kmsg, "<6>archpmu_itest: start '%s'\n", info.name.c_str());
            std::fclose(kmsg);
        }
        log_ = std::make_unique<archpmu::itest::KernelLog>();
    }

    void testCaseEnded(Catch::TestCaseStats const& stats) override
    {
        static const char* const bad[] = {
            "WARNING:",
            "BUG:",
            "Oops",
            "cut here",
            "unchecked MSR access",
            "NMI received for unknown reason",
            "general protection fault",
            "KASAN",
            "lockdep",
        };
        for (const auto& line : log_->new_lines())
            for (const char* b : bad)
                if (line.find(b) != std::string::npos) {
                    std::fprintf(stderr, "itest: kernel complained during '%s': %s\n",
                                 stats.testInfo.name.c_str(), line.c_str());
                    g_kernel_complained = true;
                    break;
                }
        log_.reset();
        TestEventListenerBase::testCaseEnded(stats);
    }

private:
    std::unique_ptr<archpmu::itest::KernelLog> log_;
};

}  // namespace

CATCH_REGISTER_LISTENER(KernelLogListener)

int main(int argc, char** argv)
{
    // archpmu_itest --inject CPU CODE COUNT: inject events, as a command for `archpmu stat`;
    // CPU "here": in this process's time slice, on the CPU it runs on (after AFTER_MS ms
    // with a fifth argument).
    if ((argc == 5 || argc == 6) && std::string(argv[1]) == "--inject" &&
        std::string(argv[2]) == "here") {
        if (argc == 6)
            ::usleep(static_cast<useconds_t>(std::stoul(argv[5]) * 1000));
        archpmu::itest::inject_here(static_cast<uint32_t>(std::stoul(argv[3], nullptr, 0)),
                                    std::stoull(argv[4]));
        return 0;
    }
    // archpmu_itest --inject CPU CODE COUNT [CODE COUNT]...: all in one cross-call.
    if (argc >= 5 && argc % 2 == 1 && std::string(argv[1]) == "--inject") {
        std::vector<std::pair<uint32_t, uint64_t>> events;
        for (int i = 3; i + 1 < argc; i += 2)
            events.emplace_back(static_cast<uint32_t>(std::stoul(argv[i], nullptr, 0)),
                                std::stoull(argv[i + 1]));
        archpmu::itest::inject_together(static_cast<unsigned>(std::stoul(argv[2])), events);
        return 0;
    }
    if (!std::getenv("ARCHPMU_IN_VM") && !std::getenv("ARCHPMU_ITEST_ON_HOST")) {
        std::fprintf(stderr,
                     "archpmu_itest loads kernel modules: run it in the test VM "
                     "(scripts/vm -- %s), or set ARCHPMU_ITEST_ON_HOST=1 on a disposable "
                     "machine\n",
                     argv[0]);
        return 2;
    }
    if (::geteuid() != 0) {
        std::fprintf(stderr, "archpmu_itest must run as root\n");
        return 2;
    }
    // Catch2 2.x exits 0 when a filter matches no test case, so a mistyped tag would
    // look like a pass: its NoTests warning makes that exit 2. Set in the parsed
    // configuration, since its command line takes --warn only once.
    Catch::Session session;
    if (const int bad_command_line = session.applyCommandLine(argc, argv))
        return bad_command_line;
    Catch::ConfigData config = session.configData();
    config.warnings =
        static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoTests);
    session.useConfigData(config);
    const int failed = session.run();
    return failed ? failed : (g_kernel_complained ? 1 : 0);
}
