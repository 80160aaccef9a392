# SPDX-License-Identifier: GPL-2.0
#
# BPF programs of a kbench test, built the way selftests/bpf builds its
# own: vmlinux.h generated from BTF (never committed), clang -target bpf,
# a libbpf skeleton from bpftool gen skeleton. Include it before
# lib/kbench.mk, after setting
#   KBENCH_BPF_PROGS := NAME...    (NAME.bpf.c in the test's directory)
#
# Inputs (make variables):
#   CLANG, BPFTOOL        the compiler and bpftool (default: from PATH)
#   VMLINUX_BTF           BTF for vmlinux.h: the tree's vmlinux in a kernel
#                         tree when built, else /sys/kernel/btf/vmlinux
#   KBENCH_LIBBPF_SRC     a libbpf source directory (tools/lib/bpf) to build
#                         and link statically; default: the kernel tree's
#                         in a kernel tree, else the system's libbpf-dev
#   KBENCH_BPF=n          leave the BPF parts out
#
# When something is missing the BPF parts are left out with a message
# naming the Debian packages; the programs build all the same and their
# BPF rows SKIP ("built without BPF support").

# lib.mk's "all" stays the default goal.
all:

KB_BPF_MK_DIR := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
KB_BPF_OUT := $(or $(OUTPUT),$(CURDIR))
CLANG ?= clang
BPFTOOL ?= bpftool
# A cross build leaves BPF out: the system's libbpf and the running
# kernel's BTF are the host's, not the target's.
ifneq ($(CROSS_COMPILE),)
KBENCH_BPF ?= n
endif
KBENCH_BPF ?= y

# In a kernel tree kbench sits at tools/testing/selftests/kbench.
# The system's libbpf (libbpf-dev) is preferred; the tree's tools/lib/bpf
# is built only where the system has none (an old tree's libbpf, e.g.
# 6.1's, does not build with today's toolchain).
KB_BPF_TREE := $(realpath $(KB_BPF_MK_DIR)/../../../../..)
kb_bpf_sys_libbpf := $(shell printf '\#include <bpf/libbpf.h>\n' | \
	$(CROSS_COMPILE)gcc -E -x c - >/dev/null 2>&1 && echo y)
ifneq ($(wildcard $(KB_BPF_TREE)/tools/lib/bpf/libbpf.h),)
ifneq ($(kb_bpf_sys_libbpf),y)
KBENCH_LIBBPF_SRC ?= $(KB_BPF_TREE)/tools/lib/bpf
endif
KB_BPF_TREE_VMLINUX := $(wildcard $(or $(O),$(KB_BPF_TREE))/vmlinux)
endif
VMLINUX_BTF ?= $(firstword $(KB_BPF_TREE_VMLINUX) \
		$(wildcard /sys/kernel/btf/vmlinux))

kb_bpf_cmd = $(shell command -v $(1) >/dev/null 2>&1 && echo y)
kb_bpf_missing :=
ifneq ($(call kb_bpf_cmd,$(CLANG)),y)
kb_bpf_missing += clang
endif
ifneq ($(call kb_bpf_cmd,$(BPFTOOL)),y)
kb_bpf_missing += bpftool
endif
ifeq ($(KBENCH_LIBBPF_SRC),)
ifneq ($(shell printf '\#include <bpf/libbpf.h>\n' | \
	$(CROSS_COMPILE)gcc -E -x c - >/dev/null 2>&1 && echo y),y)
kb_bpf_missing += libbpf-dev
endif
endif
ifeq ($(VMLINUX_BTF),)
kb_bpf_missing += BTF
endif

# KB_BPF_WHY: why the parts were left out, for the rows' skip reason.
ifneq ($(KBENCH_BPF),y)
KB_BPF_ON :=
ifneq ($(CROSS_COMPILE),)
KB_BPF_WHY := a cross build leaves them out
else
KB_BPF_WHY := KBENCH_BPF=$(KBENCH_BPF)
endif
else ifneq ($(strip $(kb_bpf_missing)),)
KB_BPF_ON :=
KB_BPF_WHY := missing at build time: $(strip $(kb_bpf_missing)); apt-get install clang bpftool libbpf-dev and rebuild
$(warning kbench: BPF iterator rows left out, missing:$(kb_bpf_missing) \
(Debian: apt-get install clang bpftool libbpf-dev; BTF: a kernel with \
CONFIG_DEBUG_INFO_BTF or VMLINUX_BTF=FILE). The rows will SKIP.)
else
KB_BPF_ON := y
endif

ifeq ($(KB_BPF_ON),y)
KB_BPF_SKELS := $(patsubst %,$(KB_BPF_OUT)/%.skel.h,$(KBENCH_BPF_PROGS))
KB_BPF_OBJS := $(patsubst %,$(KB_BPF_OUT)/%.bpf.o,$(KBENCH_BPF_PROGS))
KB_BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' \
	-e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' -e 's/s390x/s390/' \
	-e 's/riscv64/riscv/' -e 's/loongarch64/loongarch/')

ifneq ($(KBENCH_LIBBPF_SRC),)
# Static libbpf from source, headers installed under OUTPUT, as
# selftests/bpf does with the tree's tools/lib/bpf.
KB_LIBBPF_DIR := $(KB_BPF_OUT)/libbpf
KB_LIBBPF_A := $(KB_LIBBPF_DIR)/libbpf.a
KB_BPF_INC := -I$(KB_LIBBPF_DIR)/include
KB_BPF_LIBS := $(KB_LIBBPF_A) -lelf -lz
$(KB_LIBBPF_A):
	$(Q)mkdir -p $(KB_LIBBPF_DIR)
	$(Q)$(MAKE) -s -C $(KBENCH_LIBBPF_SRC) BUILD_STATIC_ONLY=1 \
		OUTPUT=$(KB_LIBBPF_DIR)/ DESTDIR=$(KB_LIBBPF_DIR) prefix= \
		all install_headers
else
KB_LIBBPF_A :=
KB_BPF_INC :=
KB_BPF_LIBS := $(or $(shell pkg-config --libs libbpf 2>/dev/null),-lbpf)
endif

$(KB_BPF_OUT)/vmlinux.h: $(VMLINUX_BTF)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp
	$(Q)mv $@.tmp $@

# The record layouts a program shares with its loader live in lib/NAME.h.
$(KB_BPF_OUT)/%.bpf.o: %.bpf.c $(KB_BPF_OUT)/vmlinux.h $(KB_LIBBPF_A) \
		$(wildcard $(KB_BPF_MK_DIR)/*_iter.h)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(KB_BPF_ARCH) \
		-I$(KB_BPF_OUT) -I$(KB_BPF_MK_DIR) $(KB_BPF_INC) -Wall -Werror \
		-c $< -o $@

$(KB_BPF_OUT)/%.skel.h: $(KB_BPF_OUT)/%.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*) > $@.tmp
	$(Q)mv $@.tmp $@

.SECONDARY: $(KB_BPF_OBJS) $(KB_BPF_SKELS) $(KB_BPF_OUT)/vmlinux.h
CFLAGS += -DKBENCH_HAVE_BPF -I$(KB_BPF_OUT) $(KB_BPF_INC)
LDLIBS += $(KB_BPF_LIBS)
# lib.mk drops LOCAL_HDRS from the link line: the skeletons go there.
LOCAL_HDRS += $(KB_BPF_SKELS)
endif

ifneq ($(KB_BPF_ON),y)
CFLAGS += -DKBENCH_BPF_WHY='"$(KB_BPF_WHY)"'
endif

# Generated files go with "make clean" whether or not BPF was built.
EXTRA_CLEAN += $(KB_BPF_OUT)/vmlinux.h $(KB_BPF_OUT)/libbpf \
	$(foreach p,$(KBENCH_BPF_PROGS),$(KB_BPF_OUT)/$(p).bpf.o \
		$(KB_BPF_OUT)/$(p).skel.h)
