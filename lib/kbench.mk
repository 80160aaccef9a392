# SPDX-License-Identifier: GPL-2.0
#
# Included by every kbench test Makefile instead of the kernel's lib.mk:
# finds the kselftest harness (lib.mk, kselftest.h), sets the collection's
# flags, checks the libraries, then includes lib.mk.
#
# Where the harness comes from, first match wins:
#  1. in a kernel tree: kbench sits at tools/testing/selftests/kbench;
#  2. KSRC=/path/to/linux (a kernel source tree);
#  3. a tree provisioned once from Debian's linux-source package into
#     .cache/ (scripts/provision_ksrc.sh; KSRC_VERSION picks the version).

KBENCH_LIB := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
KBENCH_DIR := $(realpath $(KBENCH_LIB)/..)

ifneq ($(wildcard $(KBENCH_DIR)/../lib.mk),)
KSFT_DIR := $(realpath $(KBENCH_DIR)/..)
else
ifeq ($(KSRC),)
KSRC := $(shell $(KBENCH_DIR)/scripts/provision_ksrc.sh)
ifeq ($(KSRC),)
$(error kbench: no kernel tree: set KSRC=/path/to/linux, or fix the provisioning error above)
endif
export KSRC
endif
KSFT_DIR := $(realpath $(KSRC))/tools/testing/selftests
endif

ifeq ($(wildcard $(KSFT_DIR)/lib.mk),)
$(error kbench: no kselftest lib.mk in $(KSFT_DIR): KSRC must be a kernel source tree)
endif

# Cross builds (CROSS_COMPILE=aarch64-linux-gnu-, i686-linux-gnu-, ...)
# link against the target's libcap and libnuma: Debian's multiarch
# packages (libcap-dev:arm64), or the same packages unpacked into
# .cache/cross/<arch>/ by scripts/cross_libs.sh where multiarch cannot be
# installed. The host's headers are no proof: a cross gcc also searches
# /usr/include, so the checks link.
kb_cc := $(CROSS_COMPILE)gcc
kb_triplet := $(shell $(kb_cc) -dumpmachine 2>/dev/null)
# Debian's name of the target (arm64 for aarch64-linux-gnu): dpkg's own
# table, so that no architecture is listed here; elsewhere the CPU word.
kb_debarch := $(or $(if $(kb_triplet),$(shell dpkg-architecture \
	-t$(kb_triplet) -qDEB_HOST_ARCH 2>/dev/null)),$(firstword \
	$(subst -, ,$(kb_triplet))))
# Listing the programs (emit_tests, as run_all.sh does in a guest without
# a compiler) and clean need no compiler and no libraries.
kb_builds := $(filter-out emit_tests clean,$(or $(MAKECMDGOALS),all))

ifneq ($(kb_builds),)
ifeq ($(kb_triplet),)
$(error kbench: no compiler $(kb_cc): install gcc$(if $(CROSS_COMPILE),-$(CROSS_COMPILE:%-=%)) (Debian package of the cross toolchain))
endif

ifneq ($(CROSS_COMPILE),)
KBENCH_CROSS_LIBS ?= $(or $(KBENCH_CACHE),$(KBENCH_DIR)/.cache)/cross/$(kb_debarch)
ifneq ($(wildcard $(KBENCH_CROSS_LIBS)/usr/include),)
kb_cross_cflags := -isystem $(KBENCH_CROSS_LIBS)/usr/include
kb_multiarch := $(shell $(kb_cc) -print-multiarch)
kb_cross_ldflags := -L$(KBENCH_CROSS_LIBS)/usr/lib/$(kb_multiarch) \
	-Wl,-rpath-link,$(KBENCH_CROSS_LIBS)/lib/$(kb_multiarch)
override CFLAGS += $(kb_cross_cflags)
override LDFLAGS += $(kb_cross_ldflags)
endif
endif

# kb_links HEADER LIB: y when a program including HEADER links with -lLIB.
kb_links = $(shell t=$$(mktemp) && printf '\043include <%s>\nint main(void){return 0;}\n' $(1) | \
	$(kb_cc) $(kb_cross_cflags) -x c - -o $$t $(kb_cross_ldflags) -l$(2) >/dev/null 2>&1 && echo y; rm -f $$t)
# kb_missing DEV-PACKAGE: the message naming what to install.
kb_comma := ,
kb_missing = install $(1)$(if $(CROSS_COMPILE),:$(kb_debarch) (dpkg --add-architecture $(kb_debarch); apt-get update; apt-get install $(1):$(kb_debarch))$(kb_comma) or unpack it with scripts/cross_libs.sh $(kb_debarch)) (Debian/Ubuntu)

ifneq ($(call kb_links,sys/capability.h,cap),y)
$(error kbench: libcap for $(kb_triplet) not found (<sys/capability.h>, -lcap): $(call kb_missing,libcap-dev)$(if $(CROSS_COMPILE),, or libcap-devel))
endif
ifneq ($(KBENCH_NEEDS_NUMA),)
ifneq ($(call kb_links,numa.h,numa),y)
$(error kbench: libnuma for $(kb_triplet) not found (<numa.h>, -lnuma): $(call kb_missing,libnuma-dev)$(if $(CROSS_COMPILE),, or numactl-devel))
endif
endif
endif
ifneq ($(KBENCH_NEEDS_NUMA),)
LDLIBS += -lnuma
endif

KBENCH_WERROR ?= 1
override CFLAGS += -std=gnu11 -O2 -Wall -Wextra $(if $(filter 1,$(KBENCH_WERROR)),-Werror)
override CFLAGS += $(KHDR_INCLUDES) -I$(KSFT_DIR) -I$(KBENCH_LIB)
LDLIBS += -lcap -lm

include $(KBENCH_LIB)/kbench_srcs.mk
# KBENCH_USES: the lib topics a program links beyond the core, said once
# in its Makefile: lib/TOPIC.c (when there is one) and lib/TOPIC.h.
KBENCH_USES_SRCS := $(wildcard $(KBENCH_USES:%=$(KBENCH_LIB)/%.c))
LOCAL_HDRS += $(KBENCH_CORE_HDRS) $(KBENCH_USES:%=$(KBENCH_LIB)/%.h)
# Programs built for another target (make CROSS_COMPILE=... after a native
# build, or back) are rebuilt: they depend on a stamp naming the target
# triplet, rewritten (below) only when the triplet changes. lib.mk's rule
# leaves LOCAL_HDRS out of the compiler's command line.
# Written here, before lib.mk's rules are read (make caches what it has
# seen of a directory); OUTPUT as lib.mk will set it.
KB_TARGET_STAMP := $(or $(OUTPUT),$(CURDIR))/.kbench-target
ifneq ($(kb_builds),)
ifneq ($(shell cat $(KB_TARGET_STAMP) 2>/dev/null),$(kb_triplet))
$(shell mkdir -p $(dir $(KB_TARGET_STAMP)) && echo $(kb_triplet) >$(KB_TARGET_STAMP))
endif
endif
LOCAL_HDRS += $(KB_TARGET_STAMP)
EXTRA_CLEAN += $(KB_TARGET_STAMP)
KBENCH_SRCS := $(KBENCH_CORE_SRCS) $(KBENCH_USES_SRCS)

include $(KSFT_DIR)/lib.mk

# Every test program links the shared helpers; extended helper programs
# opt in by listing themselves in KBENCH_LINKED. KBENCH_PROG_SRCS: the
# files of a test program split in several (not of its helpers).
$(TEST_GEN_PROGS) $(addprefix $(OUTPUT)/,$(KBENCH_LINKED)): $(KBENCH_SRCS)
$(TEST_GEN_PROGS): $(KBENCH_PROG_SRCS)

# An empty recipe: a stamp that is missing after all is made, not an error.
$(KB_TARGET_STAMP): ;
