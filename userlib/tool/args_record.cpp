// SPDX-License-Identifier: MIT
// record's options (args_sub.hpp).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "archpmu.h"
#include "args.hpp"
#include "args_sub.hpp"

namespace archpmu::tool {

CLI::App* add_record(CLI::App& app, RecordArgs& a, RecordOptions& rec)
{
    auto* record = app.add_subcommand(
        "record",
        "sample events into a perf.data file: COMMAND and its children (record [options] [--] "
        "COMMAND ARGS), processes (-p) or threads (-t), or system-wide on CPUs (-a, -C)");
    record->add_option("-e,--event", a.events, "events, comma-separated (default: cycles)")
        ->type_name("EVENTS")
        ->allow_extra_args(false);
    a.count_opt = record->add_option("-c,--count", a.count, "sample every PERIOD events")
                      ->type_name("PERIOD");
    a.freq_opt = record
                     ->add_option("-F,--freq", a.freq,
                                  "sample FREQ times a second (default " +
                                      std::to_string(kDefaultRecordFreq) + ")")
                     ->type_name("FREQ")
                     ->excludes(a.count_opt);
    a.all_opt = record->add_flag("-a,--all-cpus", a.all_cpus,
                                 "system-wide on every online CPU (the default without a "
                                 "COMMAND, -p or -t)");
    a.cpu_opt =
        record->add_option("-C,--cpu", a.cpus, "system-wide on these CPUs only (e.g. 0-3,6)")
            ->type_name("LIST")
            ->excludes(a.all_opt);
    a.pid_opt = record
                    ->add_option("-p,--pid", a.pids,
                                 "sample these processes (every thread, and what they start "
                                 "from now on), e.g. 1234,5678")
                    ->type_name("PIDS")
                    ->excludes(a.all_opt)
                    ->excludes(a.cpu_opt);
    a.tid_opt = record
                    ->add_option("-t,--tid", a.tids,
                                 "sample these threads (and what they start from now on)")
                    ->type_name("TIDS")
                    ->excludes(a.all_opt)
                    ->excludes(a.cpu_opt);
    record->add_option("-o,--output", rec.output, "the perf.data file to write")
        ->capture_default_str();
    a.pages_opt = record
                      ->add_option("-m,--mmap-pages", a.pages,
                                   "data pages of each CPU's ring (a power of 2; default 64)")
                      ->type_name("PAGES");
    record->add_flag("--sample-read", rec.read_group, "samples carry every event's count");
    a.graph_opt =
        record->add_flag("-g", a.graph, "samples carry their call chains (--call-graph fp)");
    a.call_graph_opt =
        record
            ->add_option("--call-graph", a.call_graph,
                         "samples carry their call chains, kernel and user: fp (user frames by "
                         "frame pointers) or dwarf[,SIZE] (SIZE bytes of user stack, default "
                         "8192, for perf to unwind code built without frame pointers)")
            ->type_name("MODE");
    a.duration_opt = record
                         ->add_option("--duration", a.duration,
                                      "record for SECONDS, without a COMMAND (else until the "
                                      "COMMAND exits or Ctrl-C)")
                         ->type_name("SECONDS");
    return record;
}

void check_record(const RecordArgs& a, RecordOptions& rec)
{
    rec.events = a.events.empty() ? parse_events({"cycles"}) : parse_events(a.events);
    if (a.cpu_opt->count())
        rec.cpus = parse_cpus(a.cpus);
    if (a.pid_opt->count())
        rec.pids = parse_ids("-p/--pid", a.pids);
    if (a.tid_opt->count())
        rec.tids = parse_ids("-t/--tid", a.tids);
    if (a.count_opt->count()) {
        rec.period = parse_count("-c/--count", a.count, (1ULL << 48) - 1);
        rec.freq_hz = 0;
    }
    if (a.freq_opt->count())
        rec.freq_hz = parse_count("-F/--freq", a.freq, 1000000);
    if (a.pages_opt->count())
        rec.ring_pages = parse_mmap_pages(a.pages);
    if (a.duration_opt->count())
        rec.duration = parse_duration(a.duration);
    if (a.call_graph_opt->count()) {
        // perf's --call-graph mode[,size].
        const std::size_t comma = a.call_graph.find(',');
        const std::string mode = a.call_graph.substr(0, comma);
        if (mode == "dwarf") {
            rec.user_stack = kDefaultUserStack;
            if (comma != std::string::npos) {
                const std::uint64_t size = parse_count(
                    "--call-graph", a.call_graph.substr(comma + 1), ARCHPMU_STACK_USER_MAX);
                // As perf: rounded up to 8 bytes.
                rec.user_stack = static_cast<std::uint32_t>((size + 7) / 8 * 8);
            }
        } else if (mode == "lbr") {
            refuse("--call-graph", "'lbr' is not supported; give fp or dwarf");
        } else if (mode != "fp" || comma != std::string::npos) {
            refuse("--call-graph", "'" + a.call_graph + "' is not a mode; give fp or dwarf[,SIZE]");
        }
    }
    rec.callchain = a.graph_opt->count() || a.call_graph_opt->count();
    // The module keeps a sample within half a ring.
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (rec.ring_pages && rec.user_stack > rec.ring_pages * page / 2)
        refuse("-m/--mmap-pages",
               "a ring of " + std::to_string(rec.ring_pages) +
                   (rec.ring_pages == 1 ? " page" : " pages") + " cannot hold a sample with " +
                   std::to_string(rec.user_stack) +
                   " bytes of user stack (--call-graph dwarf): a sample must fit in half a ring");
    if (rec.output.empty())
        refuse("-o/--output", "the file name is empty");
}

}  // namespace archpmu::tool
