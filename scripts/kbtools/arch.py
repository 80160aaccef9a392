# SPDX-License-Identifier: GPL-2.0
"""The guests' architectures as data, on the model of the kernel's
tools/testing/kunit/qemu_configs/: what kbtools.vm boots them with, what
kbtools.images fetches for them, and how the collection is built for
them. A leaf: imports nothing of kbtools.

Exact mode (QEMU's instruction counter) is not an architecture's: it is
the run's policy (kbtools.policy.Icount), the same for all, but for the
backend an architecture boots it with (exact_backend).

Adding an architecture is one Arch below and its packages in
packages.txt.
"""

import os
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

# Debian's short kernel names: NAME -> (metapackage, package regex) with
# {a} for Debian's architecture name. The metapackage depends on the
# series' current package; the regex names the series' packages.
SERIES: Dict[str, Tuple[str, str]] = {
    "debian-6.1": ("linux-image-{a}", r"^linux-image-6\.1\.0-[0-9]+-{a}$"),
    "debian-6.1-rt": ("linux-image-rt-{a}",
                      r"^linux-image-6\.1\.0-[0-9]+-rt-{a}$"),
    "debian-6.12": ("linux-image-6.12-{a}",
                    r"^linux-image-6\.12\.[0-9]+\+deb[0-9]+-{a}$"),
    "debian-6.12-rt": ("linux-image-6.12-rt-{a}",
                       r"^linux-image-6\.12\.[0-9]+\+deb[0-9]+-rt-{a}$"),
}


@dataclass(frozen=True)
class Arch:
    """One guest architecture."""
    name: str                  # as --arch says it
    aliases: Tuple[str, ...]
    debian: str                # Debian's name (amd64, arm64)
    # "vng": virtme-ng over the host's root (9p), the host's binaries;
    # "qemu": QEMU itself, a root filesystem of Debian packages of this
    # architecture (rootfs_packages) as the initramfs, /init the guest's
    # init (init), the collection built for it (cross-built unless
    # native). backend: plain runs; exact_backend: runs under --icount.
    backend: str
    exact_backend: str
    qemu: str                  # the QEMU binary
    qemu_package: str          # its Debian package
    machine: Tuple[str, ...]   # QEMU's -M/-cpu (vng picks its own)
    console: str               # the kernel's console device
    rootfs: str                # "host" (9p) or "initramfs"
    triplet: str               # the GNU triplet (aarch64-linux-gnu)
    cross_prefix: str          # CROSS_COMPILE for the collection ("": none)
    cross_package: str         # the cross compiler's package ("": none)
    cpus: Optional[int]        # default guest CPUs (None: the host's)
    boot_timeout: int          # default --boot-timeout
    vm_timeout: Optional[int]  # default --vm-timeout (None: from the run)
    series: Tuple[str, ...]    # the debian-* names it has
    tree_image: str            # the image in a kernel build tree
    image_magic: Tuple[int, bytes]  # (offset, bytes) of a boot image
    image_what: str            # what a file without them is not
    modules: bool              # fetch a Debian kernel's modules too
    foreign_apt: bool          # Debian's packages from private indices
    kernel_dir_suffix: str     # of its packages in .cache/vm/kernels/
    kvm: bool                  # can use KVM on an x86_64 host
    # The qemu backend's root filesystem: Debian's packages of this
    # architecture (their dependencies come along), the files the guest
    # cannot do without (the build fails without one), its /init.
    rootfs_packages: Tuple[str, ...] = ()
    rootfs_needs: Tuple[str, ...] = ()
    init: str = ""             # below the clone's top
    # LAVA: the device type of a job and the kernel's console there.
    lava_device_type: str = "qemu"
    lava_console: str = ""

    def debian_series(self, name: str) -> Optional[Tuple[str, str]]:
        """(metapackage, regex) of a debian-* name, or None."""
        if name not in self.series:
            return None
        meta, regex = SERIES[name]
        return meta.format(a=self.debian), regex.format(a=self.debian)

    def is_image(self, path: str) -> bool:
        """True when path holds this architecture's boot image header
        (always True when there is none to look for)."""
        offset, magic = self.image_magic
        if not magic:
            return True
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                return f.read(len(magic)) == magic
        except OSError:
            return False


# run_all.sh and its Makefile listing (bash, dash as make's /bin/sh, make,
# coreutils' timeout, mawk, sed, grep, find), the guest's /init (mount,
# util-linux's dmesg, tar, gzip), the collection's libraries (libcap2,
# libnuma1; memcg_ks runs cat), procps for debugging, the users
# (base-passwd) and base-files' /etc. usr-is-merged says the /usr merge
# is done, else apt would pick usrmerge and its perl.
ROOTFS_PACKAGES = ("base-files", "base-passwd", "bash", "dash", "coreutils",
                   "make", "mawk", "sed", "grep", "findutils", "tar", "gzip",
                   "mount", "util-linux", "procps", "libcap2", "libnuma1",
                   "usr-is-merged")
# What every such root must hold, and where its dynamic loader is.
ROOTFS_NEEDS = ("usr/bin/bash", "usr/bin/sh", "usr/bin/awk", "usr/bin/make",
                "usr/bin/timeout", "usr/bin/mount", "usr/bin/dmesg",
                "usr/bin/tar")


def rootfs_needs(loader: str, triplet: str) -> Tuple[str, ...]:
    """ROOTFS_NEEDS, the dynamic loader, the collection's libraries."""
    return ROOTFS_NEEDS + (loader, f"usr/lib/{triplet}/libcap.so.2",
                           f"usr/lib/{triplet}/libnuma.so.1")


# The x86_64 exact guest's root adds libbpf (taskstats' and memcg_ks'
# BPF iterators); no python3: the host merges a guest's repetitions.
X86_64 = Arch(
    name="x86_64", aliases=("amd64",), debian="amd64", backend="vng",
    # Exact mode's deterministic guest (policy.Icount.root "initramfs")
    # boots through QEMU itself, its root in guest memory; with it off,
    # virtme-ng as plain runs.
    exact_backend="qemu",
    qemu="qemu-system-x86_64", qemu_package="qemu-system-x86", machine=(),
    console="ttyS0", rootfs="host", triplet="x86_64-linux-gnu",
    cross_prefix="", cross_package="", cpus=None,
    boot_timeout=300, vm_timeout=None, series=tuple(SERIES),
    tree_image="arch/x86/boot/bzImage",
    # The boot protocol's header: "HdrS" at 0x202.
    image_magic=(0x202, b"HdrS"),
    image_what="an x86 kernel image (no bzImage boot header)",
    modules=True, foreign_apt=False, kernel_dir_suffix="", kvm=True,
    rootfs_packages=ROOTFS_PACKAGES + ("libbpf1",),
    rootfs_needs=rootfs_needs("lib64/ld-linux-x86-64.so.2",
                              "x86_64-linux-gnu") + (
                                  "usr/lib/x86_64-linux-gnu/libbpf.so.1",),
    init="scripts/guest/initramfs_init.sh", lava_console="ttyS0,115200")

ARM64 = Arch(
    name="arm64", aliases=("aarch64",), debian="arm64", backend="qemu",
    exact_backend="qemu",
    qemu="qemu-system-aarch64", qemu_package="qemu-system-arm",
    # pauth-impdef spares the emulated pointer authentication's cost;
    # cntfrq: the generic timer at 1 GHz (as Armv8.6 has it), not QEMU
    # 7.2's 62.5 MHz, whose 16 ns steps are 16 instructions under
    # --icount.
    machine=("-M", "virt", "-cpu", "max,pauth-impdef=on,cntfrq=1000000000"),
    console="ttyAMA0", rootfs="initramfs", triplet="aarch64-linux-gnu",
    cross_prefix=os.environ.get("KBENCH_CROSS_COMPILE_ARM64",
                                "aarch64-linux-gnu-"),
    cross_package="gcc-aarch64-linux-gnu",
    cpus=2, boot_timeout=600, vm_timeout=3600,
    series=("debian-6.1", "debian-6.12"),
    tree_image="arch/arm64/boot/Image",
    # Image, Image.gz and Debian's vmlinuz all boot: nothing to check.
    image_magic=(0, b""), image_what="an arm64 kernel image",
    modules=False, foreign_apt=True, kernel_dir_suffix="_arm64", kvm=False,
    rootfs_packages=ROOTFS_PACKAGES,
    rootfs_needs=rootfs_needs("usr/lib/ld-linux-aarch64.so.1",
                              "aarch64-linux-gnu"),
    init="scripts/guest/initramfs_init.sh", lava_console="ttyAMA0,115200")

ARCHES = (X86_64, ARM64)


def lookup(name: str) -> Optional[Arch]:
    """The architecture --arch NAME means, or None."""
    for a in ARCHES:
        if name == a.name or name in a.aliases:
            return a
    return None
