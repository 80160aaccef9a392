# SPDX-License-Identifier: GPL-2.0
"""The guests' architectures as data, on the model of the kernel's
tools/testing/kunit/qemu_configs/: what kbtools.vm boots them with, what
kbtools.images fetches for them, and how the collection is built for
them. A leaf: imports nothing of kbtools.

Exact mode (QEMU's instruction counter) is not an architecture's: it is
one field of the machine a guest runs on (Icount), the same for all.
"""

import os
import re
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
    # architecture as the initramfs, the collection cross-built.
    backend: str
    qemu: str                  # the QEMU binary
    qemu_package: str          # its Debian package
    machine: Tuple[str, ...]   # QEMU's -M/-cpu (vng picks its own)
    console: str               # the kernel's console device
    rootfs: str                # "host" (9p) or "initramfs"
    cross_prefix: str          # CROSS_COMPILE for the collection ("": none)
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


X86_64 = Arch(
    name="x86_64", aliases=("amd64",), debian="amd64", backend="vng",
    qemu="qemu-system-x86_64", qemu_package="qemu-system-x86", machine=(),
    console="ttyS0", rootfs="host", cross_prefix="", cpus=None,
    boot_timeout=300, vm_timeout=None, series=tuple(SERIES),
    tree_image="arch/x86/boot/bzImage",
    # The boot protocol's header: "HdrS" at 0x202.
    image_magic=(0x202, b"HdrS"),
    image_what="an x86 kernel image (no bzImage boot header)",
    modules=True, foreign_apt=False, kernel_dir_suffix="", kvm=True)

ARM64 = Arch(
    name="arm64", aliases=("aarch64",), debian="arm64", backend="qemu",
    qemu="qemu-system-aarch64", qemu_package="qemu-system-arm",
    # pauth-impdef spares the emulated pointer authentication's cost;
    # cntfrq: the generic timer at 1 GHz (as Armv8.6 has it), not QEMU
    # 7.2's 62.5 MHz, whose 16 ns steps are 16 instructions under
    # --icount.
    machine=("-M", "virt", "-cpu", "max,pauth-impdef=on,cntfrq=1000000000"),
    console="ttyAMA0", rootfs="initramfs",
    cross_prefix=os.environ.get("KBENCH_CROSS_COMPILE_ARM64",
                                "aarch64-linux-gnu-"),
    cpus=2, boot_timeout=600, vm_timeout=3600,
    series=("debian-6.1", "debian-6.12"),
    tree_image="arch/arm64/boot/Image",
    # Image, Image.gz and Debian's vmlinuz all boot: nothing to check.
    image_magic=(0, b""), image_what="an arm64 kernel image",
    modules=False, foreign_apt=True, kernel_dir_suffix="_arm64", kvm=False)

ARCHES = (X86_64, ARM64)


def lookup(name: str) -> Optional[Arch]:
    """The architecture --arch NAME means, or None."""
    for a in ARCHES:
        if name == a.name or name in a.aliases:
            return a
    return None


# QEMU's instruction counter (--icount): one virtual ns per guest
# instruction (shift=0), virtual time that does not follow the host's
# clock while the vCPU idles (sleep=off), and no attempt to keep it in
# step with real time (align=off). KBENCH_ICOUNT_QEMU replaces the
# options, to study other settings (docs/exact-runs.md).
ICOUNT_QEMU = "shift=0,sleep=off,align=off"


@dataclass(frozen=True)
class Icount:
    """Exact mode: QEMU's -icount options and what they change. TCG only
    (QEMU has no instruction counter under KVM), one CPU unless --cpus
    says otherwise, longer boots, and every program's timeout in the
    guest 4 times as long (run_all.sh: a virtual second is a billion
    instructions)."""
    qemu_opts: str
    shift: int
    cpus: int = 1
    boot_timeout: int = 600
    run_factor: int = 4


def icount(opts: Optional[str] = None) -> Icount:
    """The Icount of these -icount options (KBENCH_ICOUNT_QEMU, else the
    default); ValueError when they set no shift=N."""
    text = opts if opts is not None else \
        os.environ.get("KBENCH_ICOUNT_QEMU") or ICOUNT_QEMU
    m = re.search(r"(?:^|,)shift=([0-9]+)(?:,|$)", text)
    if not m:
        raise ValueError(f"invalid KBENCH_ICOUNT_QEMU '{text}': no shift=N")
    return Icount(text, int(m.group(1)))
