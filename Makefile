# SPDX-License-Identifier: GPL-2.0
# archpmu top-level build.
#
#   make            the module (kbuild, W=1, warnings are errors), the C++
#                   library, the archpmu tool, the examples and the tests
#   make check      everything, then all tests (unit, lint, VM integration on
#                   Debian 12's kernel, the debug kernel, the RT kernel, and
#                   Debian's 6.12 and newest kernels: scripts/matrix-kernel)
#   make run        the main job: load the module, run archpmu selftest, info,
#                   stat, record, who, regs and monitor (on the real PMU of an
#                   Intel host, else in the VM on the model)
#   make bench      bench/archpmu_bench (real PMU on an Intel host, else the VM),
#                   then bench/sampling.py and bench/exporter.py (in the VM on the model)
#   make lint       checkpatch --strict, clang-format, clang-tidy
#   make install    the library, tool, headers, pkg-config and CMake files, man
#                   pages and bash completion under PREFIX (default /usr/local),
#                   built without the tests in build/install; the module in
#                   /lib/modules/KVER/extra (then depmod) and the udev rule in
#                   /etc/udev/rules.d. DESTDIR stages it all (no depmod then).
#   make dkms       the module's sources in /usr/src/archpmu-VERSION, then
#                   dkms add, build and install (DESTDIR: the sources only)
#
# KDIR selects the kernel build tree: the running kernel's if it has one,
# else the newest Debian headers (scripts/install-deps installs them).
# ARCHPMU_KVER is the kernel the test VM boots: the one KDIR belongs to.

KVER_RUNNING := $(shell uname -r)
KDIR ?= $(shell if [ -d /lib/modules/$(KVER_RUNNING)/build ]; then \
		echo /lib/modules/$(KVER_RUNNING)/build; \
	else \
		ls -d /lib/modules/*/build 2>/dev/null | grep -v -- '-rt-' | sort -V | tail -n 1; \
	fi)
# The PREEMPT_RT kernel the suite also runs on (scripts/install-deps installs it).
RT_KDIR ?= $(shell ls -d /lib/modules/*-rt-*/build 2>/dev/null | sort -V | tail -n 1)
export ARCHPMU_KVER ?= $(notdir $(patsubst %/,%,$(dir $(KDIR))))

# The tree's module has the test-only commands (uapi/archpmu_test.h) the tests
# drive the model with; make install builds its own without them (in
# INSTALL_BUILD/kmod), as DKMS does.
ARCHPMU_TEST ?= 1
BUILD ?= build/user
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_BUILD ?= build/install
VERSION := $(shell sed -n 's/^\#define ARCHPMU_VERSION "\(.*\)"/\1/p' module/version.h)
DKMS_SRC = $(DESTDIR)/usr/src/archpmu-$(VERSION)

.PHONY: all module user check check-hw unit run bench lint install dkms clean kmod-debug kmod-rt \
	kmod-backports kmod-newest

all: module user

need_kdir = @test -n "$(KDIR)" -a -d "$(KDIR)" || { \
	echo "no kernel build tree: run scripts/install-deps, or set KDIR=" >&2; exit 1; }

module:
	$(need_kdir)
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 ARCHPMU_TEST=$(ARCHPMU_TEST) modules

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

user: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check: all kmod-debug kmod-rt kmod-backports kmod-newest
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The module built against the debug kernel (built once, cached: scripts/debug-kernel)
# and against the RT kernel, for the suite's runs on them (tests/vm_suite.sh).
kmod-debug:
	scripts/build-kmod "$$(scripts/debug-kernel)" build/kmod-debug

kmod-rt:
	@test -n "$(RT_KDIR)" || { echo "no RT kernel headers: run scripts/install-deps" >&2; exit 1; }
	scripts/build-kmod $(RT_KDIR) build/kmod-rt

# The newer kernels users run, fetched once into a cache (never installed:
# KDIR and scripts/vm keep picking Debian 12's kernel); the newest is built in
# a chroot of its own Debian release.
kmod-backports kmod-newest: kmod-%:
	@set -e; eval "$$(scripts/matrix-kernel $*)"; \
	scripts/build-kmod $${chroot:+-c "$$chroot"} "$$kdir" build/kmod-$*

unit: user
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE vm

run: all
	scripts/run-info

# archpmu selftest on the real PMU (Intel host, root), else in the VM on the model.
check-hw: all
	scripts/run-info --selftest

bench: all
	scripts/bench
	scripts/bench-sample
	scripts/bench-exporter

lint: user
	scripts/lint

install:
	$(need_kdir)
	ARCHPMU_TEST=0 scripts/build-kmod $(KDIR) $(INSTALL_BUILD)/kmod > /dev/null
	cmake -S . -B $(INSTALL_BUILD) -DARCHPMU_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(INSTALL_BUILD) -j $(JOBS) --target archpmu_tool archpmu_shared archpmu_static
	DESTDIR=$(DESTDIR) cmake --install $(INSTALL_BUILD)
	install -D -m 0644 $(INSTALL_BUILD)/kmod/module/archpmu.ko \
		$(DESTDIR)/lib/modules/$(ARCHPMU_KVER)/extra/archpmu.ko
	install -D -m 0644 udev/99-archpmu.rules $(DESTDIR)/etc/udev/rules.d/99-archpmu.rules
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(ARCHPMU_KVER) && ldconfig; \
	else echo "install: staged in $(DESTDIR); run depmod -a $(ARCHPMU_KVER) where it lands"; fi
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && dkms status archpmu 2>/dev/null | grep -q .; then \
		echo "install: warning: DKMS has archpmu too; its module (updates/dkms) is the one modprobe loads:" \
			"dkms remove archpmu/$(VERSION) --all to use this one"; fi

# The sources DKMS builds: Kbuild, dkms.conf, module/ (not the tests' helpers), uapi/.
dkms:
	@if [ -z "$(DESTDIR)" ]; then dkms remove -m archpmu -v $(VERSION) --all >/dev/null 2>&1 || true; fi
	rm -rf "$(DKMS_SRC)"
	install -d "$(DKMS_SRC)"
	tar -c --exclude=module/test --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude=modules.order \
		--exclude=Module.symvers Kbuild dkms.conf module uapi | tar -x -C "$(DKMS_SRC)"
	@if [ -z "$(DESTDIR)" ]; then \
		dkms add -m archpmu -v $(VERSION) && \
		dkms install -m archpmu -v $(VERSION) -k $(ARCHPMU_KVER); \
	else echo "dkms: sources staged in $(DKMS_SRC)"; fi

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf build
