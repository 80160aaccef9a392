# SPDX-License-Identifier: GPL-2.0
"""kbench's QEMU TCG plugin (scripts/plugin/where_count.c, kbench where
--plugin), built against the plugin header of the QEMU installed here.

No Debian package ships qemu-plugin.h. It comes from Debian's qemu source
package of the installed qemu-system-x86's source version, fetched with
apt-get source through the host's own apt sources turned into deb-src
entries (same mirrors, suites, components and keys), with apt's state in
a private directory: the host's APT configuration is not touched. Only
the header is extracted, into ~/.cache/kbench/qemu-plugin/VERSION/
(KBENCH_QEMU_PLUGIN_CACHE), shared by the clones and locked; nothing of
QEMU enters the repository. The plugin is built there with gcc, again
when its source changes.
"""

import glob
import hashlib
import os
import re
import shutil
from typing import List, Sequence, Tuple

from kbtools import cli, paths, proc
from kbtools.output import msg

QEMU_PACKAGE = "qemu-system-x86"
SOURCE_PACKAGE = "qemu"
HEADER = "qemu-plugin.h"
HEADER_IN_TARBALL = "*/include/qemu/" + HEADER
PLUGIN_SOURCE = "scripts/plugin/where_count.c"
CFLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared",
          "-fPIC")


def cache_dir() -> str:
    """~/.cache/kbench/qemu-plugin (XDG_CACHE_HOME honoured), or
    KBENCH_QEMU_PLUGIN_CACHE."""
    return (os.environ.get("KBENCH_QEMU_PLUGIN_CACHE")
            or paths.user_cache("qemu-plugin"))


def source_version() -> str:
    """The installed qemu-system-x86's source version (without a
    binNMU's +bN); cli.Failure (3) when it is not installed."""
    try:
        text = proc.capture(["dpkg-query", "-W", "-f=${source:Version}",
                             QEMU_PACKAGE]).strip()
    except proc.Failed as e:
        raise cli.Failure(f"{QEMU_PACKAGE} is not installed ({e})",
                          cli.EXIT_SETUP) from e
    if not text:
        raise cli.Failure(f"{QEMU_PACKAGE} is not installed", cli.EXIT_SETUP)
    return text


def _deb822_to_src(text: str) -> str:
    """A deb822 .sources file's stanzas of type deb, as deb-src."""
    out = []
    for stanza in re.split(r"\n\s*\n", text):
        lines = stanza.strip("\n").splitlines()
        types = [ln for ln in lines if ln.lower().startswith("types:")]
        if not types or "deb" not in types[0].split(":", 1)[1].split():
            continue
        out.append("\n".join("Types: deb-src" if ln in types else ln
                             for ln in lines))
    return "\n\n".join(out) + "\n" if out else ""


def _one_line_to_src(text: str) -> str:
    """A one-line-style .list file's deb lines, as deb-src."""
    return "".join(re.sub(r"^deb(\s)", r"deb-src\1", ln) + "\n"
                   for ln in text.splitlines()
                   if re.match(r"^deb\s", ln.strip()))


def src_sources(files: Sequence[str]) -> List[Tuple[str, str]]:
    """The deb-src twins of the host's apt source files, as
    (file name, text) pairs worth writing: one per source file with a
    deb entry."""
    out = []
    for path in files:
        with cli.reading(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        if path.endswith(".sources"):
            src, ext = _deb822_to_src(text), ".sources"
        else:
            src, ext = _one_line_to_src(text), ".list"
        if src:
            stem = os.path.splitext(os.path.basename(path))[0]
            out.append((f"{stem}-src{ext}", src))
    return out


def host_source_files() -> List[str]:
    return sorted(p for pattern in paths.APT_SOURCES
                  for p in glob.glob(pattern) if os.path.isfile(p))


def apt_options(apt_dir: str) -> List[str]:
    """apt-get's options for the private deb-src sources and state in
    apt_dir (the host's own lists are not read)."""
    opts = {"Dir::Etc::sourcelist": "/dev/null",
            "Dir::Etc::sourceparts": f"{apt_dir}/sources.list.d",
            "Dir::State": f"{apt_dir}/state",
            "Dir::State::status": f"{apt_dir}/state/status",
            "Dir::Cache": f"{apt_dir}/cache",
            "Acquire::Languages": "none",
            "APT::Sandbox::User": "root"}
    return [w for k, v in opts.items() for w in ("-o", f"{k}={v}")]


def write_sources(apt_dir: str, files: Sequence[str]) -> None:
    """The private sources, state and cache directories; cli.Failure (3)
    when the host's sources have no deb entry to turn into deb-src."""
    pairs = src_sources(files)
    if not pairs:
        raise cli.Failure("no deb entry in the host's apt sources ("
                          + ", ".join(paths.APT_SOURCES)
                          + ") to fetch Debian's "
                          f"{SOURCE_PACKAGE} source package from",
                          cli.EXIT_SETUP)
    parts = os.path.join(apt_dir, "sources.list.d")
    for sub in ("sources.list.d", "state/lists/partial",
                "cache/archives/partial"):
        os.makedirs(os.path.join(apt_dir, sub), exist_ok=True)
    open(os.path.join(apt_dir, "state", "status"), "a").close()
    for old in glob.glob(os.path.join(parts, "*")):
        os.unlink(old)
    for name, text in pairs:
        with open(os.path.join(parts, name), "w", encoding="utf-8") as f:
            f.write(text)


def fetch_header(prog: str, version: str, dest: str) -> str:
    """dest/qemu-plugin.h from Debian's qemu source package VERSION;
    cli.Failure (3) when the host's mirrors do not give it."""
    apt_dir = os.path.join(dest, "apt")
    write_sources(apt_dir, host_source_files())
    src = os.path.join(dest, "src")
    os.makedirs(src, exist_ok=True)
    log = os.path.join(dest, "apt.log")
    msg(prog, f"fetching Debian's {SOURCE_PACKAGE} {version} source package "
        f"for {HEADER} into {dest}")
    for args in (["update", "--error-on=any"],
                 ["--download-only", "source",
                  f"{SOURCE_PACKAGE}={version}"]):
        if proc.run(["apt-get", *apt_options(apt_dir), "-q", *args],
                    log=log, cwd=src, append=True) != 0:
            raise cli.Failure(
                f"cannot fetch Debian's {SOURCE_PACKAGE} {version} source "
                f"package through the host's apt sources as deb-src "
                f"(apt-get {args[-1]}; see {log})", cli.EXIT_SETUP)
    tarballs = glob.glob(os.path.join(src, "*.orig.tar.*"))
    if not tarballs:
        raise cli.Failure(f"no orig tarball of {SOURCE_PACKAGE} {version} in "
                          f"{src}", cli.EXIT_SETUP)
    proc.capture(["tar", "-xf", tarballs[0], "-C", src, "--no-same-owner",
                  "--wildcards", HEADER_IN_TARBALL])
    found = glob.glob(os.path.join(src, HEADER_IN_TARBALL))
    if not found:
        raise cli.Failure(f"{tarballs[0]} holds no {HEADER}", cli.EXIT_SETUP)
    inc = os.path.join(dest, "include")
    os.makedirs(inc, exist_ok=True)
    os.replace(found[0], os.path.join(inc, HEADER))
    # The header is all that is kept (the tarballs and the Sources
    # indices are 44 MB).
    shutil.rmtree(src)
    shutil.rmtree(apt_dir)
    return inc


def header_dir(prog: str) -> str:
    """The directory holding qemu-plugin.h of the installed QEMU's
    version, fetched on first use."""
    version = source_version()
    dest = os.path.join(cache_dir(), version.replace(":", "_"))
    inc = os.path.join(dest, "include")
    if os.path.exists(os.path.join(inc, HEADER)):
        return inc
    os.makedirs(dest, exist_ok=True)
    with proc.locked(os.path.join(dest, ".lock")):
        if os.path.exists(os.path.join(inc, HEADER)):
            return inc
        return fetch_header(prog, version, dest)


def source_key(path: str) -> str:
    with cli.reading(path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:12]


def build(prog: str) -> str:
    """The plugin's shared object, built against the installed QEMU's
    header (again when its source changed); cli.Failure when gcc
    fails."""
    inc = header_dir(prog)
    src = paths.script(PLUGIN_SOURCE)
    so = os.path.join(os.path.dirname(inc),
                      f"where_count-{source_key(src)}.so")
    if os.path.exists(so):
        return so
    log = so + ".log"
    with proc.locked(os.path.join(os.path.dirname(inc), ".lock")):
        if os.path.exists(so):
            return so
        tmp = so + ".tmp"
        if proc.run(["gcc", *CFLAGS, "-I", inc, "-o", tmp, src],
                    log=log) != 0:
            raise cli.Failure(f"cannot build the QEMU plugin {src} "
                              f"(see {log})")
        os.replace(tmp, so)
    return so
