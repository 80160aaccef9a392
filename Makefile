# SPDX-License-Identifier: GPL-2.0
#
# kbench: kernel interface cost selftests.
#
# Standalone:  make [KSRC=/path/to/linux] [TESTS="a b"] [all|run_tests|install|clean]
#              make fuzz         exploration: the libFuzzer harnesses and
#                                the property tests, random (fuzz/)
#              make check        the project's own tests (tests/run.sh)
#              NO_INSTALL=1      never install packages (make check, check-all)
# In a kernel tree (tools/testing/selftests/kbench):
#              make -C tools/testing/selftests TARGETS=kbench/<test> run_tests
#              make -C tools/testing/selftests TARGETS=kbench run_tests
#
# A test directory is one holding a Makefile and a config fragment.

KBENCH_TOP := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
TESTS ?= $(sort $(patsubst $(KBENCH_TOP)/%/config,%,\
	$(filter $(patsubst %/Makefile,%/config,$(wildcard $(KBENCH_TOP)/*/Makefile)),\
		 $(wildcard $(KBENCH_TOP)/*/config))))

# Forwarded per test so that in-tree builds (OUTPUT, INSTALL_PATH and
# COLLECTION set by the selftests Makefile) land in per-test places.
# lib.mk only defaults OUTPUT at the top make level: always pass it.
sub_make = $(MAKE) -C $(KBENCH_TOP)/$(1) \
	OUTPUT=$(if $(OUTPUT),$(OUTPUT)/$(1),$(KBENCH_TOP)/$(1)) \
	$(if $(INSTALL_PATH),INSTALL_PATH=$(INSTALL_PATH)/$(1)) \
	$(if $(COLLECTION),COLLECTION=$(COLLECTION)/$(1))

# An out-of-tree OUTPUT (make O=DIR in a kernel tree, or OUTPUT=DIR here)
# gets one directory per test, made before the test's make writes there.
all run_tests clean:
	@set -e; for t in $(TESTS); do \
		$(if $(OUTPUT),mkdir -p $(OUTPUT)/$$t;) \
		$(call sub_make,$$t) $@; \
	done

install:
ifndef INSTALL_PATH
	$(error Error: set INSTALL_PATH to use install)
endif
	@set -e; for t in $(TESTS); do \
		$(call sub_make,$$t) install; \
	done

emit_tests:
	@for t in $(TESTS); do \
		$(call sub_make,$$t) -s --no-print-directory emit_tests; \
	done

# The project's own tests: unit tests, KTAP checks, build checks;
# check-all also boots Debian's 6.1 kernel under QEMU and runs the
# collection there, and runs taskstats and memcg_ks on the patched test
# kernel (testkernel/, built once and cached). Each first sets up the
# Debian packages it needs (packages.txt): as root on Debian or Ubuntu it
# installs the missing ones, saying which; else, or with NO_INSTALL=1, it
# prints their install line and stops (Error 4).
setup = $(KBENCH_TOP)/scripts/setup.sh $(if $(NO_INSTALL),--no-install) $(1)

check:
	@$(call setup,check)
	$(KBENCH_TOP)/tests/run.sh

check-all:
	@$(call setup,check-all)
	$(KBENCH_TOP)/tests/run.sh --vm --testkernel

# Exploration, beside make check's fixed regression run: each libFuzzer
# harness FUZZ_SECONDS (30) seconds in each of its builds (ASan+UBSan,
# MSan), then the Python readers' property tests with FUZZ_EXAMPLES
# (1000) fresh random examples each. A finding of either does not stop
# the other (docs/fuzzing.md).
fuzz:
	$(MAKE) -k -C $(KBENCH_TOP)/fuzz run properties

# Print the tests this Makefile sees.
list:
	@echo $(TESTS)

.PHONY: all run_tests clean install emit_tests check check-all fuzz list
