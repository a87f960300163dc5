// SPDX-License-Identifier: MIT
/*
 * archpmu_spin MODE SECONDS [CPU]: a known workload for the sampling tests,
 * pinned to CPU if given. MODE "user" spins in archpmu_spin_user(), a
 * function that is never inlined, so a profile must name it; "syscalls"
 * makes system calls in a loop, so cycles:k samples land in the kernel;
 * "kernel" reads /dev/zero in 16 KiB pieces, so it runs mostly in the kernel.
 * "work" runs a fixed amount of work instead (SECONDS is then millions of
 * iterations) and prints how long it took, for the sampling benchmark.
 * "rusage" spins as "user" does, then prints the user time the process
 * used, loader included (the task-scope tests compare counts with it).
 * "half" spins 3 ms and sleeps 3 ms by turns, then prints as "rusage".
 * "threads" spins as "user" does while threads of 20 ms each come and go.
 * "chain" spins in archpmu_spin_user() called through main() ->
 * archpmu_chain_a() -> archpmu_chain_b() (frame pointers: -g's test);
 * "badfp" spins with a frame pointer that points nowhere.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long archpmu_spin_user(double end)
{
	volatile unsigned long x = 0;
	unsigned long i;

	while (now() < end)
		for (i = 0; i < 100000; i++)
			x = x * 3 + i;
	return x;
}

__attribute__((noinline)) unsigned long archpmu_spin_work(unsigned long millions)
{
	volatile unsigned long x = 0;
	unsigned long i, m;

	for (m = 0; m < millions; m++)
		for (i = 0; i < 1000000; i++)
			x = x * 3 + i;
	return x;
}

__attribute__((noinline)) void archpmu_spin_syscalls(double end)
{
	while (now() < end)
		syscall(SYS_getppid);
}

__attribute__((noinline)) unsigned long archpmu_chain_b(double end)
{
	return archpmu_spin_user(end) + 1;
}

__attribute__((noinline)) unsigned long archpmu_chain_a(double end)
{
	return archpmu_chain_b(end) + 1;
}

/* A loop that runs with RBP pointing into no mapping, as a broken frame chain would. */
__attribute__((noinline)) void archpmu_spin_badfp(double end)
{
	while (now() < end)
		__asm__ volatile("mov %%rbp, %%r12\n\t"
				 "mov $0x10, %%rbp\n\t"
				 "mov $100000, %%rcx\n"
				 "1:\tdec %%rcx\n\t"
				 "jnz 1b\n\t"
				 "mov %%r12, %%rbp"
				 ::: "rcx", "r12", "memory", "cc");
}

__attribute__((noinline)) void archpmu_spin_kernel(double end)
{
	static char buf[16384];
	int zero = open("/dev/zero", O_RDONLY);

	if (zero < 0)
		return;
	while (now() < end)
		if (read(zero, buf, sizeof(buf)) < 0)
			break;
	close(zero);
}

static void *spin_thread(void *arg)
{
	archpmu_spin_user(now() + 0.02);
	return arg;
}

/* Spin and sleep by turns, each 3 ms: the process runs half the time. */
static void spin_half(double end)
{
	const struct timespec nap = { 0, 3000000 };

	while (now() < end) {
		archpmu_spin_user(now() + 0.003);
		nanosleep(&nap, NULL);
	}
}

/* The main thread spins; a thread of 20 ms at a time comes and goes meanwhile. */
static void spin_threads(double end)
{
	pthread_t t;

	while (now() < end) {
		if (pthread_create(&t, NULL, spin_thread, NULL))
			break;
		archpmu_spin_user(now() + 0.02);
		pthread_join(t, NULL);
	}
}

int main(int argc, char **argv)
{
	double end;

	if (argc < 3) {
		fprintf(stderr,
			"usage: archpmu_spin user|syscalls|kernel|rusage|half|threads|chain|badfp SECONDS [CPU] | work MILLIONS [CPU]\n");
		return 2;
	}
	if (argc > 3) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[3]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	if (!strcmp(argv[1], "work")) {
		double start = now();

		archpmu_spin_work(strtoul(argv[2], NULL, 10));
		printf("work_ms %.1f\n", (now() - start) * 1e3);
		return 0;
	}
	end = now() + atof(argv[2]);
	if (!strcmp(argv[1], "user")) {
		archpmu_spin_user(end);
	} else if (!strcmp(argv[1], "chain")) {
		archpmu_chain_a(end);
	} else if (!strcmp(argv[1], "badfp")) {
		archpmu_spin_badfp(end);
	} else if (!strcmp(argv[1], "threads")) {
		spin_threads(end);
	} else if (!strcmp(argv[1], "rusage") || !strcmp(argv[1], "half")) {
		struct rusage ru;

		if (!strcmp(argv[1], "half"))
			spin_half(end);
		else
			archpmu_spin_user(end);
		getrusage(RUSAGE_SELF, &ru);
		printf("utime_us %ld stime_us %ld\n",
		       (long)(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec),
		       (long)(ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec));
		fflush(stdout);
	} else if (!strcmp(argv[1], "kernel")) {
		archpmu_spin_kernel(end);
	} else {
		archpmu_spin_syscalls(end);
	}
	return 0;
}
