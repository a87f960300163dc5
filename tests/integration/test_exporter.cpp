// SPDX-License-Identifier: MIT
// archpmu exporter in the VM: promtool on its scrapes, a real Prometheus scraping it,
// and what a daemon must survive. Prometheus and promtool are Debian's, unpacked into
// build/prometheus by scripts/install-deps.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

using namespace archpmu::itest;

namespace {

const std::string kListen = "127.0.0.1:10738";
const std::string kUrl = "http://" + kListen + "/metrics";
constexpr const char* kOpenMetrics =
    "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";

// `archpmu exporter ARGS...` in the background (under `wrapper`, a command such as
// setpriv's, if given), its stderr in a file; SIGTERM at the end.
class Exporter {
public:
    explicit Exporter(std::vector<std::string> args, std::vector<std::string> wrapper = {})
        : log_("/tmp/itest-exporter.log")
    {
        (void)run_command("ip link set lo up");
        args.insert(args.begin(), {ARCHPMU_TOOL, "exporter", "--listen", kListen});
        args.insert(args.begin(), wrapper.begin(), wrapper.end());
        // Everything the child needs is ready before the fork: another thread may hold
        // malloc's lock, so the child only makes async-signal-safe calls.
        std::vector<char*> argv;
        argv.reserve(args.size() + 1);
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        // The last exporter's log says "serving" too: gone before this one starts.
        ::unlink(log_.c_str());
        pid_ = ::fork();
        if (pid_ == 0) {
            const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0)
                ::_exit(126);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        // Serving once the log says so (TCG: a few seconds at most).
        for (int i = 0; i < 200 && !serving(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        INFO(log());
        INFO(state());
        REQUIRE(serving());
    }
    Exporter(const Exporter&) = delete;
    Exporter& operator=(const Exporter&) = delete;
    ~Exporter() { (void)stop(SIGTERM); }

    // Send `sig` and reap it: its exit status, 128 + the signal that killed it, or -1.
    int stop(int sig)
    {
        if (pid_ <= 0)
            return -1;
        ::kill(pid_, sig);
        int status = 0;
        const pid_t got = ::waitpid(pid_, &status, 0);
        pid_ = -1;
        if (got < 0)
            return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    // Its exit status once it ends by itself within `limit`, else -1 (still running).
    int wait_exit(std::chrono::milliseconds limit)
    {
        const auto until = std::chrono::steady_clock::now() + limit;
        int status = 0;
        while (pid_ > 0 && std::chrono::steady_clock::now() < until) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return -1;
    }
    void signal(int sig) const { ::kill(pid_, sig); }
    [[nodiscard]] pid_t pid() const { return pid_; }
    // What the child is doing: for a failure's message.
    [[nodiscard]] std::string state() const
    {
        const std::string p = "/proc/" + std::to_string(pid_);
        return "pid " + std::to_string(pid_) + ": " +
               run_command("cat " + p + "/status | head -3; cat " + p + "/wchan; echo; cat " + p +
                           "/stack; ls -l " + p +
                           "/fd; ps -ef | grep -v grep | grep exporter; "
                           "ls -l /tmp/itest-exporter.log")
                   .out;
    }
    [[nodiscard]] bool serving() const { return log().find("serving") != std::string::npos; }
    // Empty until the child has opened it.
    [[nodiscard]] std::string log() const { return path_exists(log_) ? read_file(log_) : ""; }

private:
    std::string log_;
    pid_t pid_ = -1;
};

std::string scrape(const std::string& accept = "")
{
    const std::string header = accept.empty() ? "" : " -H 'Accept: " + accept + "'";
    return run_command("curl -sS --max-time 20" + header + " " + kUrl).out;
}

// The value of the sample line that starts with `series` (name and labels), or -1.
double sample(const std::string& text, const std::string& series)
{
    std::size_t pos = 0;
    while ((pos = text.find(series + " ", pos)) != std::string::npos) {
        if (pos == 0 || text[pos - 1] == '\n')
            return std::stod(text.substr(pos + series.size() + 1));
        pos += series.size();
    }
    return -1;
}

// A family's series on CPU `cpu` of a part that is not hybrid.
std::string on_cpu(const std::string& family, unsigned cpu)
{
    return family + R"({core_type="none",cpu=")" + std::to_string(cpu) + R"("})";
}

bool promtool_clean(const std::string& text)
{
    write_file("/tmp/itest-scrape.txt", text);
    return run_command(std::string(ARCHPMU_PROMETHEUS_BIN) +
                       "/promtool check metrics < /tmp/itest-scrape.txt")
               .status == 0;
}

}  // namespace

TEST_CASE("exporter: both formats, promtool clean on every scrape, and it lets go as found",
          "[exporter]")
{
    LoadedModule module("backend=model");
    const archpmu::Device dev;
    const auto before = pmu_msr_snapshot(dev, 0);
    {
        Exporter exporter({"-e", "instructions,cycles,branch-misses"});
        for (int i = 0; i < 3; ++i) {
            const std::string text = scrape();
            INFO(text);
            CHECK(promtool_clean(text));
            CHECK(sample(text, "archpmu_up") == 1);
            CHECK(sample(text, on_cpu("archpmu_instructions_total", 0)) > 0);
            CHECK(sample(text, on_cpu("archpmu_branch_misses_total", 1)) > 0);
            CHECK(text.find("# TYPE archpmu_enabled_seconds_total counter") != std::string::npos);
        }
        // OpenMetrics when the scraper prefers it, as Prometheus does.
        const auto om =
            run_command("curl -sS -D - -H 'Accept: " + std::string(kOpenMetrics) + "' " + kUrl).out;
        INFO(om);
        CHECK(om.find("Content-Type: application/openmetrics-text; version=1.0.0") !=
              std::string::npos);
        CHECK(om.find("# TYPE archpmu_instructions counter\n") != std::string::npos);
        CHECK(om.find("# UNIT archpmu_running_seconds seconds\n") != std::string::npos);
        CHECK(om.size() > 6);
        CHECK(om.substr(om.size() - 6) == "# EOF\n");
        CHECK(sample(om, on_cpu("archpmu_instructions_total", 0)) > 0);
        CHECK(exporter.stop(SIGTERM) == 0);
    }
    CHECK(pmu_msr_snapshot(dev, 0) == before);
}

TEST_CASE("exporter: a real Prometheus' rate() agrees with archpmu stat over the same window",
          "[exporter][prometheus]")
{
    LoadedModule module("backend=model");
    Exporter exporter({"-e", "instructions,cycles"});
    const std::string dir = "/tmp/itest-prometheus";
    (void)run_command("rm -rf " + dir + " && mkdir -p " + dir);
    write_file(dir + "/prometheus.yml",
               "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
               "scrape_configs:\n  - job_name: archpmu\n    static_configs:\n"
               "      - targets: ['" +
                   kListen + "']\n");
    struct Stop {
        std::string pid_file;
        ~Stop() { (void)run_command("kill $(cat " + pid_file + ") 2>/dev/null; sleep 1"); }
    } stop_prometheus{dir + "/pid"};
    const auto server =
        run_command(std::string(ARCHPMU_PROMETHEUS_BIN) + "/prometheus --config.file=" + dir +
                    "/prometheus.yml --storage.tsdb.path=" + dir +
                    "/data --web.listen-address=127.0.0.1:9090 > " + dir +
                    "/log 2>&1 & echo $! > " + dir + "/pid");
    REQUIRE(server.status == 0);
    const auto query = [](const std::string& promql) {
        const auto r = run_command(
            "curl -sS --max-time 20 http://127.0.0.1:9090/api/v1/query --data-urlencode 'query=" +
            promql + "'");
        return nlohmann::json::parse(r.out, nullptr, false);
    };
    // Ready and scraping: the target's up series is 1.
    bool scraping = false;
    for (int i = 0; i < 60 && !scraping; ++i) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        const auto up = query("up{job=\"archpmu\"}");
        scraping = !up.is_discarded() && up.value("status", "") == "success" &&
                   !up["data"]["result"].empty() && up["data"]["result"][0]["value"][1] == "1";
    }
    if (!scraping)
        FAIL(run_command("tail -20 " + dir + "/log").out);
    // The same 5 s: archpmu stat counts instructions on GP counters (the exporter holds
    // fixed counter 0), then Prometheus is asked for the rate over the 5 s that just ended.
    const auto stat = run_command(std::string(ARCHPMU_TOOL) +
                                  " stat -a -x, -o /tmp/itest-stat.csv -e r00c0 -- sleep 5");
    const auto rate = query("rate(archpmu_instructions_total[5s])");
    REQUIRE(stat.status == 0);
    const std::string csv = read_file("/tmp/itest-stat.csv");
    INFO(csv);
    INFO(rate.dump());
    REQUIRE(rate.value("status", "") == "success");
    double stat_total = 0;
    for (std::size_t pos = 0; pos < csv.size();) {
        const std::size_t end = csv.find('\n', pos);
        const std::string line = csv.substr(pos, end - pos);
        if (line.find("r00c0") != std::string::npos)
            stat_total += std::stod(line);
        pos = end == std::string::npos ? csv.size() : end + 1;
    }
    double rate_total = 0;
    for (const auto& series : rate["data"]["result"])
        rate_total += std::stod(series["value"][1].get<std::string>());
    CHECK(rate["data"]["result"].size() == online_cpus().size());
    // The model counts at its documented rate whatever runs: both see the same rate,
    // within what TCG's timer jitter and rate()'s extrapolation leave.
    const double stat_rate = stat_total / 5.0;
    std::printf("itest: exporter: Prometheus' rate() %.4g/s, archpmu stat %.4g/s\n", rate_total,
                stat_rate);
    CHECK(stat_rate > 0);
    CHECK(std::fabs(rate_total - stat_rate) <= 0.10 * stat_rate);
}

TEST_CASE("exporter: waits for the module, counts afresh on SIGHUP, keeps an offline CPU's series",
          "[exporter][hotplug]")
{
    const std::string online = "/sys/devices/system/cpu/cpu1/online";
    REQUIRE(path_exists(online));
    // Declared first, gone last: the module outlives the exporter's session, and CPU 1
    // comes back whatever fails.
    std::optional<LoadedModule> module;
    struct Online {
        std::string path;
        ~Online() { write_file(path, "1"); }
    } back_online{online};
    // Started before the module: up 0, then counting once it is there.
    Exporter exporter({});
    std::string text = scrape();
    CHECK(sample(text, "archpmu_up") == 0);
    CHECK(promtool_clean(text));
    module.emplace("backend=model");
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    text = scrape();
    INFO(text);
    INFO(exporter.log());
    CHECK(sample(text, "archpmu_up") == 1);
    CHECK(sample(text, "archpmu_sessions_opened_total") == 1);

    write_file(online, "0");
    text = scrape();
    CHECK(sample(text, on_cpu("archpmu_cpu_online", 1)) == 0);
    CHECK(sample(text, on_cpu("archpmu_instructions_total", 1)) > 0);
    CHECK(promtool_clean(text));
    write_file(online, "1");
    text = scrape();
    CHECK(sample(text, on_cpu("archpmu_cpu_online", 1)) == 1);

    const double before = sample(text, on_cpu("archpmu_instructions_total", 0));
    exporter.signal(SIGHUP);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    text = scrape();
    CHECK(sample(text, "archpmu_sessions_opened_total") == 2);
    // A new session: the count restarted, which Prometheus' rate() takes as a reset.
    CHECK(sample(text, on_cpu("archpmu_instructions_total", 0)) < before);
    CHECK(exporter.stop(SIGTERM) == 0);
}

TEST_CASE(
    "exporter: lets go of the module when its unload is asked for, and counts afresh "
    "once it is back",
    "[exporter][lifecycle]")
{
    std::optional<LoadedModule> module;  // the reloaded one, unloaded last whatever fails
    if (module_loaded())
        (void)unload_module();
    REQUIRE(load_module("backend=model") == 0);
    Exporter exporter({"-e", "instructions"});
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::string text = scrape();
    CHECK(sample(text, "archpmu_up") == 1);
    const double before = sample(text, on_cpu("archpmu_instructions_total", 0));
    CHECK(unload_module() == EWOULDBLOCK);  // its session keeps the module
    write_file("/sys/class/misc/archpmu/unloading", "1");
    // Within its next tick (a second) it closes the session: nothing holds the module.
    bool unused = false;
    for (int i = 0; i < 50 && !unused; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        unused = read_file("/sys/module/archpmu/refcnt") == "0";
    }
    INFO(exporter.log());
    REQUIRE(unused);
    REQUIRE(unload_module() == 0);
    text = scrape();
    CHECK(sample(text, "archpmu_up") == 0);
    CHECK(promtool_clean(text));

    module.emplace("backend=model");
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    text = scrape();
    CHECK(sample(text, "archpmu_up") == 1);
    CHECK(sample(text, "archpmu_sessions_opened_total") == 2);
    // A new session: the count restarted, which Prometheus' rate() takes as a reset.
    CHECK(sample(text, on_cpu("archpmu_instructions_total", 0)) < before);
    CHECK_THAT(exporter.log(), Catch::Contains("the module is being unloaded"));

    // Asked for, then called off: a SIGHUP meanwhile opens nothing; 0 and it counts again.
    const std::string unloading = "/sys/class/misc/archpmu/unloading";
    write_file(unloading, "1");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    exporter.signal(SIGHUP);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    CHECK(sample(scrape(), "archpmu_up") == 0);
    write_file(unloading, "0");
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    CHECK(sample(scrape(), "archpmu_sessions_opened_total") == 3);
    CHECK(exporter.stop(SIGTERM) == 0);

    // Started while an unload is asked for: it waits (no 78), and counts once called off.
    write_file(unloading, "1");
    Exporter waiting({"-e", "instructions"});
    CHECK(sample(scrape(), "archpmu_up") == 0);
    write_file(unloading, "0");
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    CHECK(sample(scrape(), "archpmu_up") == 1);
    CHECK(waiting.stop(SIGTERM) == 0);
}

TEST_CASE(
    "exporter: an event others hold is not counted until they let go; a refused event "
    "ends it",
    "[exporter]")
{
    LoadedModule module("backend=model");
    std::optional<archpmu::Session> holder;
    // Fixed counter 0 and the model's 4 GP counters: instructions has nowhere to go.
    holder.emplace("instructions,branches,branch-misses,r00c4,r00c5", on_cpus({}));
    Exporter exporter({});
    // Multiplexed, as perf: instructions crowded out (<not counted>, no sample), cycles counted.
    std::string text = scrape();
    INFO(text);
    CHECK(sample(text, "archpmu_up") == 1);
    CHECK(sample(text, on_cpu("archpmu_instructions_total", 0)) == -1);
    CHECK(sample(text, on_cpu("archpmu_cycles_total", 0)) > 0);
    holder.reset();
    // The session grows into the counter let go (at its next turn).
    double instructions = -1;
    for (int i = 0; i < 20 && instructions <= 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        instructions = sample(scrape(), on_cpu("archpmu_instructions_total", 0));
    }
    CHECK(instructions > 0);
    CHECK(exporter.stop(SIGTERM) == 0);
    // No retry mends an event this CPU lacks: EX_CONFIG, which the service does not restart.
    const auto refused = run_command("timeout 30 " + std::string(ARCHPMU_TOOL) +
                                     " exporter --listen 127.0.0.1:10739 -e cpu_atom/cycles/");
    INFO(refused.out);
    CHECK(refused.status == 78);
}

TEST_CASE("exporter: a device node it may not open is waited for 10 s and then ends it with 78",
          "[exporter][userspace]")
{
    LoadedModule module("backend=model");
    REQUIRE(::chmod("/dev/archpmu", 0600) == 0);
    // As the service runs: its own user, with CAP_PERFMON alone.
    const std::vector<std::string> as_service = {"/usr/bin/setpriv",    "--reuid=65534",
                                                 "--regid=65534",       "--clear-groups",
                                                 "--inh-caps=+perfmon", "--ambient-caps=+perfmon"};
    {
        // udev gives the node its group a moment after the module made it: counted then.
        Exporter exporter({"-e", "instructions"}, as_service);
        CHECK(sample(scrape(), "archpmu_up") == 0);
        {
            const OpenNode open_node;  // 0666 until the end of this scope
            std::this_thread::sleep_for(std::chrono::milliseconds(2500));
            INFO(exporter.log());
            CHECK(sample(scrape(), "archpmu_up") == 1);
            CHECK(exporter.stop(SIGTERM) == 0);
        }
    }
    // Never: EX_CONFIG once the grace is over, not at once.
    Exporter exporter({"-e", "instructions"}, as_service);
    CHECK(exporter.wait_exit(std::chrono::seconds(5)) == -1);
    const int status = exporter.wait_exit(std::chrono::seconds(15));
    INFO(exporter.log());
    CHECK(status == 78);
    CHECK_THAT(exporter.log(), Catch::Contains("/dev/archpmu"));
}

TEST_CASE("exporter: started before the module, an event the CPUs lack still ends it with 78",
          "[exporter]")
{
    std::optional<LoadedModule> module;
    if (module_loaded())
        (void)unload_module();
    Exporter exporter({"-e", "cpu_atom/cycles/"});
    CHECK(sample(scrape(), "archpmu_up") == 0);
    module.emplace("backend=model");  // not hybrid: no cpu_atom
    const int status = exporter.wait_exit(std::chrono::seconds(10));
    INFO(exporter.log());
    CHECK(status == 78);
    CHECK_THAT(exporter.log(), Catch::Contains("cpu_atom"));
}

TEST_CASE("exporter: kill -9 leaves the PMU as found", "[exporter][release]")
{
    LoadedModule module("backend=model");
    const archpmu::Device dev;
    const auto before = pmu_msr_snapshot(dev, 1);
    Exporter exporter({"-e", "instructions,cycles,branches,branch-misses"});
    CHECK(sample(scrape(), "archpmu_up") == 1);
    CHECK(exporter.stop(SIGKILL) == 128 + SIGKILL);
    CHECK(pmu_msr_snapshot(dev, 1) == before);
    CHECK(
        archpmu::Session("instructions,cycles,branches,branch-misses", on_cpus({1})).cpu_count() ==
        1);
}

TEST_CASE(
    "exporter: a sampling session beside it shows in archpmu_throttled_total and "
    "archpmu_lost_samples_total",
    "[exporter][sampling]")
{
    // A rate the model's PMIs always outrun, so that they throttle.
    LoadedModule module("backend=model model_version=4 sample_max_rate=2000");
    const unsigned cpu = online_cpus().back();
    REQUIRE(cpu > 0);
    Exporter exporter({"-e", "cycles"});
    std::string text = scrape();
    CHECK(sample(text, on_cpu("archpmu_throttled_total", cpu)) == 0);
    CHECK(sample(text, on_cpu("archpmu_lost_samples_total", cpu)) == 0);
    (void)run_lossy_sampling(cpu, std::chrono::milliseconds(200));
    const double throttled = std::stod(cpu_sysfs(cpu, "throttled"));
    const double lost = std::stod(cpu_sysfs(cpu, "lost_samples"));
    REQUIRE(throttled > 0);
    REQUIRE(lost > 0);
    text = scrape();
    CHECK(promtool_clean(text));
    CHECK(sample(text, on_cpu("archpmu_throttled_total", cpu)) == throttled);
    CHECK(sample(text, on_cpu("archpmu_lost_samples_total", cpu)) == lost);
    CHECK(sample(text, on_cpu("archpmu_throttled_total", 0)) == 0);
    CHECK(sample(text, on_cpu("archpmu_cycles_total", cpu)) > 0);  // its own session counted on
    const std::string open_metrics = scrape(kOpenMetrics);
    CHECK_THAT(open_metrics, Catch::Contains("# TYPE archpmu_throttled counter"));
    CHECK_THAT(open_metrics, Catch::Contains("# TYPE archpmu_lost_samples counter"));
}

TEST_CASE("exporter: 50 scrapers at once for 20 s, each answered, no fd or memory growth",
          "[exporter][load]")
{
    LoadedModule module("backend=model");
    Exporter exporter({"-e", "instructions,cycles,branches"});
    const std::string proc = "/proc/" + std::to_string(exporter.pid());
    const auto fds = [&] { return run_command("ls " + proc + "/fd | wc -l").out; };
    const auto rss_kb = [&] {
        return std::stol(run_command("awk '/^VmRSS/ {print $2}' " + proc + "/status").out);
    };
    for (int i = 0; i < 20; ++i)
        (void)scrape();
    const std::string fds_before = fds();
    const long rss_before = rss_kb();
    // Each scraper a loop of curl; every answer's time and status.
    write_file("/tmp/itest-load.sh",
               "end=$((SECONDS + 20))\nfor i in $(seq 50); do\n"
               "  (while [ $SECONDS -lt $end ]; do\n"
               "    curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}\\n' " +
                   kUrl + "\n  done) &\ndone\nwait\n");
    const auto load = run_command("bash /tmp/itest-load.sh");
    std::vector<double> times;
    std::size_t failed = 0;
    for (std::size_t pos = 0; pos < load.out.size();) {
        const std::size_t end = load.out.find('\n', pos);
        const std::string line = load.out.substr(pos, end - pos);
        if (line.rfind("200 ", 0) == 0)
            times.push_back(std::stod(line.substr(4)));
        else if (!line.empty())
            ++failed;
        pos = end == std::string::npos ? load.out.size() : end + 1;
    }
    std::sort(times.begin(), times.end());
    REQUIRE(times.size() >= 50);
    const double p50 = times[times.size() / 2];
    const double p99 = times[times.size() * 99 / 100];
    std::printf(
        "itest: exporter under 50 scrapers: %zu scrapes in 20 s, p50 %.3f s, p99 %.3f s, "
        "RSS %ld -> %ld kB\n",
        times.size(), p50, p99, rss_before, rss_kb());
    report_figure("exporter-load-scrapes", times.size());
    CHECK(failed == 0);
    CHECK(fds() == fds_before);
    // The allocator may keep what a burst took: a bound, not a leak per scrape.
    CHECK(rss_kb() <= rss_before + 4096);
    CHECK(sample(scrape(), "archpmu_up") == 1);
    CHECK(exporter.stop(SIGTERM) == 0);
}

TEST_CASE("exporter: scrapers that connect and say nothing do not stop it for long",
          "[exporter][load]")
{
    LoadedModule module("backend=model");
    Exporter exporter({});
    // More idle connections than the exporter has threads: each is dropped after its
    // request timeout, so a scrape behind them is answered within a few of those.
    write_file("/tmp/itest-idle.sh",
               "for i in $(seq 12); do (exec 3<>/dev/tcp/127.0.0.1/10738; sleep 30) & done\n"
               "sleep 1\ncurl -s -o /dev/null --max-time 25 -w '%{http_code} %{time_total}' " +
                   kUrl + "\nkill $(jobs -p) 2>/dev/null\nwait\n");
    const auto r = run_command("bash /tmp/itest-idle.sh");
    INFO(r.out);
    CHECK(r.out.rfind("200 ", 0) == 0);
}
