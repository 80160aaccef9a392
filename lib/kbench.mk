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
#     .cache/ (scripts/provision-ksrc.sh; KSRC_VERSION picks the version).

KBENCH_LIB := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
KBENCH_DIR := $(realpath $(KBENCH_LIB)/..)

ifneq ($(wildcard $(KBENCH_DIR)/../lib.mk),)
KSFT_DIR := $(realpath $(KBENCH_DIR)/..)
else
ifeq ($(KSRC),)
KSRC := $(shell $(KBENCH_DIR)/scripts/provision-ksrc.sh)
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

# A missing library header gets a message naming the Debian package.
kb_have_header = $(shell printf '#include <%s>\n' $(1) | \
	$(CROSS_COMPILE)gcc -E -x c - >/dev/null 2>&1 && echo y)
ifneq ($(call kb_have_header,sys/capability.h),y)
$(error kbench: <sys/capability.h> not found: install libcap-dev (Debian/Ubuntu) or libcap-devel)
endif
ifneq ($(KBENCH_NEEDS_NUMA),)
ifneq ($(call kb_have_header,numa.h),y)
$(error kbench: <numa.h> not found: install libnuma-dev (Debian/Ubuntu) or numactl-devel)
endif
LDLIBS += -lnuma
endif

KBENCH_WERROR ?= 1
override CFLAGS += -std=gnu11 -O2 -Wall -Wextra $(if $(filter 1,$(KBENCH_WERROR)),-Werror)
override CFLAGS += $(KHDR_INCLUDES) -I$(KSFT_DIR) -I$(KBENCH_LIB)
LDLIBS += -lcap -lm

LOCAL_HDRS += $(KBENCH_LIB)/kbench.h $(KBENCH_LIB)/kbench_ktap.h
KBENCH_SRCS := $(KBENCH_LIB)/kbench.c $(KBENCH_EXTRA_SRCS)

include $(KSFT_DIR)/lib.mk

# Every test program links the shared helpers; extended helper programs
# opt in by listing themselves in KBENCH_LINKED.
$(TEST_GEN_PROGS) $(addprefix $(OUTPUT)/,$(KBENCH_LINKED)): $(KBENCH_SRCS)
