# SPDX-License-Identifier: GPL-2.0
#
# The lib files every kbench program links (kbench.h's topics), for
# lib/kbench.mk and fuzz/Makefile. KBENCH_LIB: this directory.
KBENCH_CORE := kbench children cleanup cli clock env errno_rule file json knob \
	proc results settle stats
KBENCH_CORE_SRCS := $(KBENCH_CORE:%=$(KBENCH_LIB)/%.c)
KBENCH_CORE_HDRS := $(KBENCH_CORE:%=$(KBENCH_LIB)/%.h) \
	$(addprefix $(KBENCH_LIB)/,compat.h ktap.h mark.h test.h)
