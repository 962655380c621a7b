# factory: top-level GNU Makefile.
#
# Every directory of the design builds one program; libcommon/ builds
# libcommon.a, linked by all of them.  Objects and programs go to $(O).

PREFIX		?= /usr/local
SBINDIR		?= $(PREFIX)/sbin
LIBEXECDIR	?= $(PREFIX)/libexec/factory
MANDIR		?= $(PREFIX)/share/man
SHAREDIR	?= $(PREFIX)/share/factory
DESTDIR		?=

O		?= build
OBJ		= $(O)/obj
CC		?= cc
PKG_CONFIG	?= pkg-config

# Debian packages the build, the tests and the demo need.  deps
# installs them with services kept stopped (policy-rc.d): the tests
# start the PostgreSQL they need themselves, never the system's.
DEBS = build-essential pkg-config libevent-dev libbsd-dev libssl-dev \
	libgit2-dev libyaml-dev check libseccomp-dev libjansson-dev \
	mandoc git jq bubblewrap util-linux iproute2 procps python3 openssl \
	clang-14 libclang-rt-14-dev llvm-14 libarchive-dev umoci busybox-static zstd \
	debhelper dpkg-dev lintian debootstrap python3-cryptography \
	postgresql-15 postgresql-client-15 libpq-dev
# What only the tests need: a real browser and client for the previews.
DEBS_CHECK = curl chromium

PKGS_COMMON	= libbsd-overlay libbsd-ctor libevent libcrypto yaml-0.1 libseccomp jansson
PKGS_GIT	= libgit2
PKGS_TLS	= libevent_openssl libssl

CFLAGS		?= -O2 -g
CFLAGS		+= -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
		   -Wmissing-prototypes -Wstrict-prototypes -Wshadow \
		   -Wno-format-truncation \
		   -D_GNU_SOURCE -Ilibcommon \
		   -DFACTORY_LIBEXECDIR=\"$(LIBEXECDIR)\" \
		   $(shell $(PKG_CONFIG) --cflags $(PKGS_COMMON) $(PKGS_GIT) 2>/dev/null)
ifdef SAN
CFLAGS		+= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer
LDFLAGS		+= -fsanitize=address,undefined
endif
ifdef TESTBUILD
CFLAGS		+= -DFACTORY_TESTBUILD
endif

LIBS_COMMON	= $(shell $(PKG_CONFIG) --libs $(PKGS_COMMON) 2>/dev/null)
LIBS_GIT	= $(shell $(PKG_CONFIG) --libs $(PKGS_GIT) 2>/dev/null)
LIBS_TLS	= $(shell $(PKG_CONFIG) --libs $(PKGS_TLS) 2>/dev/null)
LIBS_ARCHIVE	= $(shell $(PKG_CONFIG) --libs libarchive 2>/dev/null)

PROGS_SBIN	= factoryd factoryctl
PROGS_LIBEXEC	= factory-worker factory-verifier factory-reconciler \
		  factory-publisher factory-sandbox factory-egress \
		  factory-image factory-gateway factory-fswalk \
		  factory-fleet factory-preview
PROGS		= $(PROGS_SBIN) $(PROGS_LIBEXEC)

dir_factoryd		= supervisord-factory
dir_factoryctl		= factoryctl
dir_factory-worker	= worker
dir_factory-verifier	= verifier
dir_factory-reconciler	= reconciler
dir_factory-publisher	= publisher
dir_factory-sandbox	= sandbox
dir_factory-egress	= egress
dir_factory-image	= image
dir_factory-gateway	= gateway
dir_factory-fswalk	= fswalk
dir_factory-fleet	= fleet
dir_factory-preview	= preview

libs_factoryd		= $(LIBS_COMMON)
libs_factoryctl		= $(LIBS_ARCHIVE) $(LIBS_COMMON)
libs_factory-worker	= $(LIBS_GIT) $(LIBS_COMMON)
libs_factory-verifier	= $(LIBS_GIT) $(LIBS_COMMON)
libs_factory-reconciler	= $(LIBS_GIT) $(LIBS_COMMON)
libs_factory-publisher	= $(LIBS_GIT) $(LIBS_TLS) $(LIBS_COMMON)
libs_factory-egress	= $(LIBS_COMMON)
libs_factory-image	= $(LIBS_ARCHIVE) $(LIBS_COMMON)
libs_factory-gateway	= $(LIBS_TLS) $(LIBS_COMMON)
libs_factory-fswalk	= $(LIBS_COMMON)
libs_factory-preview	= $(LIBS_COMMON)
# factory-fleet is the only program that links libpq.
libs_factory-fleet	= $(shell $(PKG_CONFIG) --libs libpq 2>/dev/null) \
			  $(LIBS_COMMON)
$(OBJ)/fleet/%.o: CFLAGS += $(shell $(PKG_CONFIG) --cflags libpq 2>/dev/null)
# The launcher is exec'd for every sandbox: static, with the one library
# it needs, so no dynamic loading is paid for on each spawn.
libs_factory-sandbox	= $(shell $(PKG_CONFIG) --static --libs libbsd-overlay 2>/dev/null)
ifndef SAN
ldflags_factory-sandbox	= -static
endif

# No program takes objects from another directory: what the parent and
# the launcher share (the plan, libcommon/plan.c) is in libcommon.

COMMON_SRCS	= $(wildcard libcommon/*.c)
COMMON_OBJS	= $(COMMON_SRCS:%.c=$(OBJ)/%.o)
HEADERS		= $(wildcard libcommon/*.h */*.h)

# Unit tests (check): regress/unit/test_NAME.c links libcommon.a and,
# where it says so in unit_objs_NAME, objects of one program.
UNIT_SRCS	= $(wildcard regress/unit/test_*.c)
UNIT_TESTS	= $(UNIT_SRCS:regress/unit/%.c=$(O)/regress/unit/%)
LIBS_CHECK	= $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

# Helper programs of the regress suite (regress/*/NAME.c, one file each).
REGRESS_SRCS	= $(wildcard regress/*/prog_*.c regress/hostile/*.c)
REGRESS_PROGS	= $(REGRESS_SRCS:%.c=$(O)/%)

# libFuzzer harnesses (regress/fuzz/fuzz_NAME.c), built with clang
# into $(O)/fuzz over an instrumented libcommon (FUZZ=1); fuzz_objs_NAME
# in regress/fuzz/objs.mk names the program objects one links.
FUZZ_CC		?= clang-14
FUZZ_S		?= 60
FUZZ_SRCS	= $(wildcard regress/fuzz/fuzz_*.c)
FUZZ_PROGS	= $(FUZZ_SRCS:%.c=$(O)/%)
FUZZ_SAN	= -fsanitize=fuzzer,address,undefined
ifdef FUZZ
CFLAGS		+= -fsanitize=fuzzer-no-link,address,undefined \
		   -fno-sanitize-recover=all -fno-omit-frame-pointer \
		   -Wno-unknown-warning-option -Wno-include-next-absolute-path \
		   -Wno-missing-field-initializers
endif

BENCH_SRCS	= $(wildcard bench/*.c)
BENCH_PROGS	= $(BENCH_SRCS:%.c=$(O)/%)

.PHONY: FORCE all tests deps deps-check check check-unit check-asan check-lint deb check-deb check-host check-regress \
	demo install clean bench fuzz fuzz-build fuzz-progs

all: $(PROGS:%=$(O)/%)

# The compiled-in paths: objects are rebuilt when PREFIX or LIBEXECDIR
# change, so `make PREFIX=/usr install` installs what it says.
$(O)/paths.stamp: FORCE
	@mkdir -p $(O)
	@echo '$(LIBEXECDIR)' | cmp -s - $@ || echo '$(LIBEXECDIR)' >$@

$(OBJ)/%.o: %.c $(HEADERS) $(O)/paths.stamp
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) -c -o $@ $<

$(O)/libcommon.a: $(COMMON_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

.SECONDEXPANSION:
$(PROGS:%=$(O)/%): $(O)/%: $$(addprefix $(OBJ)/,$$(subst .c,.o,$$(wildcard $$(dir_$$*)/*.c))) $$(objs_$$*) $(O)/libcommon.a
	$(CC) $(LDFLAGS) $(ldflags_$*) -o $@ $(filter %.o,$^) $(O)/libcommon.a $(libs_$*)

$(UNIT_TESTS): $(O)/regress/unit/%: $(OBJ)/regress/unit/%.o $(O)/libcommon.a $$(unit_objs_$$*)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(unit_objs_$*) $(O)/libcommon.a \
		$(LIBS_CHECK) $(LIBS_GIT) $(LIBS_TLS) $(LIBS_COMMON)

$(REGRESS_PROGS) $(BENCH_PROGS): $(O)/%: $(OBJ)/%.o $(O)/libcommon.a $$(prog_objs_$$(notdir $$*))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(prog_objs_$(notdir $*)) $(O)/libcommon.a \
		$(LIBS_GIT) $(LIBS_TLS) $(LIBS_COMMON)

$(FUZZ_PROGS): $(O)/regress/fuzz/fuzz_%: $(OBJ)/regress/fuzz/fuzz_%.o $(O)/libcommon.a $$(fuzz_objs_$$*)
	@mkdir -p $(dir $@)
	$(CC) $(FUZZ_SAN) $(fuzz_ldflags_$*) -o $@ $< $(fuzz_objs_$*) \
		$(O)/libcommon.a $(LIBS_GIT) $(LIBS_TLS) $(LIBS_COMMON)

-include $(wildcard regress/*/objs.mk)

deps-check: DEBS += $(DEBS_CHECK)
deps deps-check:
	@missing=""; for p in $(DEBS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		    grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing$$missing"; \
		rc=/usr/sbin/policy-rc.d; own=""; \
		if [ ! -e $$rc ]; then own=1; \
			printf '#!/bin/sh\nexit 101\n' >$$rc && chmod 755 $$rc; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		    apt-get install -y -qq --no-install-recommends $$missing; \
		st=$$?; [ -z "$$own" ] || rm -f $$rc; exit $$st; \
	else echo "deps: as root, run: apt-get install$$missing"; exit 1; fi

# The bench programs too: they link the parent's and the worker's
# objects, and a changed interface must not break make bench unseen.
tests: all $(UNIT_TESTS) $(REGRESS_PROGS) $(BENCH_PROGS)

# The regress suite runs a test build (crash points compiled in) of its
# own, beside the release build, and the unit tests once more with the
# sanitizers.  REGRESS=regress/NAME ... runs those suites alone, without
# the unit tests.
check: deps-check
	$(MAKE) O=$(O)/test TESTBUILD=1 tests
	$(MAKE) O=$(O)/asan SAN=1 TESTBUILD=1 $(O)/asan/libcommon.a \
		$(UNIT_TESTS:$(O)/%=$(O)/asan/%)
	$(MAKE) fuzz-build
	$(MAKE) check-lint
	O=$(O)/test ASAN_O=$(O)/asan FUZZ_O=$(O)/fuzz sh regress/run-all.sh \
		$(REGRESS)

# The harnesses, instrumented: regress/fuzz/run.sh replays their
# corpora in check; fuzz runs each for FUZZ_S seconds, one at a time.
fuzz-build:
	$(MAKE) O=$(O)/fuzz FUZZ=1 CC=$(FUZZ_CC) fuzz-progs

fuzz-progs: $(FUZZ_PROGS)

fuzz: fuzz-build
	FUZZ_O=$(O)/fuzz sh regress/fuzz/run.sh -f $(FUZZ_S)

# The Debian package (debian/, debhelper), into $(O)/deb; check-deb
# installs it into a fresh Debian 12 root and runs an attempt there.
DEB_VERSION	= $(shell dpkg-parsechangelog -S Version 2>/dev/null)
DEB_ARCH	= $(shell dpkg --print-architecture 2>/dev/null)
DEB		= $(O)/deb/factory_$(DEB_VERSION)_$(DEB_ARCH).deb

deb: deps
	dpkg-buildpackage -b -us -uc
	@mkdir -p $(O)/deb
	mv ../factory_$(DEB_VERSION)_$(DEB_ARCH).deb \
	    ../factory-dbgsym_$(DEB_VERSION)_$(DEB_ARCH).deb \
	    ../factory_$(DEB_VERSION)_$(DEB_ARCH).buildinfo \
	    ../factory_$(DEB_VERSION)_$(DEB_ARCH).changes $(O)/deb/
	lintian --fail-on error,warning $(O)/deb/factory_$(DEB_VERSION)_$(DEB_ARCH).changes

check-deb: deb
	DEB=$(DEB) sh regress/deb/check.sh

# check-host boots the package on Debian's kernels under qemu, systemd
# as pid 1 and pure cgroup v2 (regress/host/check.sh says which).
check-host: deb $(O)/regress/control/prog_ctlflood
	O=$(O) DEB=$(DEB) sh regress/host/check.sh

check-lint:
	mandoc -Tlint -Wwarning man/*.[0-9]

bench: all $(BENCH_PROGS)
	O=$(O) sh bench/run.sh

demo: deps
	$(MAKE) all
	O=$(O) sh etc/demo.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR) \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SHAREDIR)
	install -m 0555 $(PROGS_SBIN:%=$(O)/%) $(DESTDIR)$(SBINDIR)
	install -m 0555 $(PROGS_LIBEXEC:%=$(O)/%) $(DESTDIR)$(LIBEXECDIR)
	install -m 0444 man/*.5 $(DESTDIR)$(MANDIR)/man5
	install -m 0444 man/*.7 $(DESTDIR)$(MANDIR)/man7
	install -m 0444 man/*.8 $(DESTDIR)$(MANDIR)/man8
	install -m 0444 etc/factoryd.conf $(DESTDIR)$(SHAREDIR)

clean:
	rm -rf $(O)
