#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kbench test kernel: Debian's linux-source-6.12 with the patch
# series in testkernel/patches/ ("patched") and without it ("unpatched"),
# one small virtme-ng style configuration for both. Both images are cached
# outside the clone, keyed by the source, the configuration and the series,
# so a second run only prints their paths. See usage() and README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
prog=${0##*/}
# shellcheck source=../scripts/lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.bash"
version=6.12
cache=${KBENCH_TESTKERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbench/testkernel}
# virtme-ng shares the venv of scripts/vm-run.sh.
vcache=${KBENCH_CACHE:-$top/.cache}
vng_version=${KBENCH_VNG_VERSION:-1.42}
# Bump when the way the kernels are configured or built changes.
recipe=1

usage() {
	cat <<EOF
Usage: $prog [OPTION]...
Build the kbench test kernel from Debian's linux-source-$version: once with
the patch series in testkernel/patches/ applied (patched: /proc/taskstats
ioctls, memory.stat.ks and memory.numa_stat.ks) and once without it
(unpatched), with the same small configuration (virtme-ng's defconfig,
the collection's config fragments, testkernel/kernel.config; no debug
info and so no BTF: the BPF iterator rows skip there, unless --btf).

The patched kernel is built first. Images are cached in
  $cache/
keyed by the source tarball, the configuration and the series: a run whose
inputs did not change builds nothing. One build tree (a git repository,
patched and unpatched are branches) is kept there too, so that switching
between the two, or changing the series, rebuilds only what changed.

On success the last two lines on stdout are
  patched=PATH/bzImage
  unpatched=PATH/bzImage

Options:
  -j, --jobs N      parallel make jobs (default: the number of CPUs)
      --patched     build (or look up) only the patched kernel
      --unpatched   build (or look up) only the unpatched kernel
      --btf         add testkernel/btf.config: debug info and BTF, so
                    that the BPF iterator rows run beside the RFC ioctl
                    and the .ks files (other images, cached apart; a
                    full rebuild of the tree, about 1.5 times as long)
  -n, --dry-run     print the image paths and whether they are cached,
                    build nothing (exit 1 when one is missing)
      --tree DIR    with --commit: build that commit of the kernel git
                    tree DIR with the same configuration instead; DIR is
                    left on its branch (scripts/bisect.sh uses this)
      --commit REV  the commit of --tree to build. Its image is cached in
                    $cache/commits/HASH-KEY/ (KEY: the
                    configuration's inputs); the last line on stdout is
                    image=PATH/bzImage. A clean DIR is built out of tree
                    in $cache/obj/, one directory per tree,
                    incrementally from commit to commit; a DIR built in
                    place by this script (the test kernel's tree) is
                    built in place. Exit status 1: that commit does not
                    configure or build (the compiler's last lines on
                    stderr, the log beside the image directory).
      --print-tree  print the test kernel's build tree (a git repository,
                    branches unpatched and patched-*) and exit
  -h, --help        this help

Environment: KBENCH_TESTKERNEL_CACHE (default above), KBENCH_CACHE (the
collection's cache holding virtme-ng's venv, default $top/.cache).

Host needs (Debian packages): gcc make bison flex bc libelf-dev libssl-dev
dwarves python3-venv xz-utils git, and linux-source-$version (fetched with
apt-get download when /usr/src/linux-source-$version.tar.xz is absent).
A cold build of both kernels takes ~20 min on 2 CPUs.

Exit status: 0 built or cached; 1 a build step failed; 2 bad usage;
3 a missing host package or download.
EOF
}

jobs=$(nproc)
want_patched=1
want_unpatched=1
dry_run=
print_tree=
btf=		# --btf: testkernel/btf.config as the last fragment
src=		# --tree: a kernel git tree to build one commit of
commit=		# --commit

parse_args() {
	while (($#)); do
		case $1 in
		-j | --jobs)
			(($# >= 2)) || die_usage "option '$1' needs a number"
			jobs=$2
			shift
			;;
		--jobs=*) jobs=${1#*=} ;;
		-j[0-9]*) jobs=${1#-j} ;;
		--patched) want_unpatched= ;;
		--unpatched) want_patched= ;;
		-n | --dry-run) dry_run=1 ;;
		--print-tree) print_tree=1 ;;
		--btf) btf=1 ;;
		--tree | --commit)
			(($# >= 2)) || die_usage "option '$1' needs a value"
			if [[ $1 == --tree ]]; then src=$2; else commit=$2; fi
			shift
			;;
		--tree=*) src=${1#*=} ;;
		--commit=*) commit=${1#*=} ;;
		-h | --help)
			usage
			exit 0
			;;
		*) die_usage "unknown argument '$1'" ;;
		esac
		shift
	done
	[[ $jobs =~ ^[1-9][0-9]*$ ]] || die_usage "invalid --jobs '$jobs': not a positive number"
	[[ -n $want_patched$want_unpatched ]] ||
		die_usage "--patched and --unpatched exclude each other"
	[[ -n $src || -z $commit ]] || die_usage "--commit needs --tree DIR"
	[[ -z $src ]] || check_tree_args
}

# --tree DIR --commit REV: a git work tree and one of its commits.
check_tree_args() {
	local git_top

	[[ -n $commit ]] || die_usage "--tree needs --commit REV"
	[[ -n $want_patched && -n $want_unpatched ]] ||
		die_usage "--tree builds one commit, not the patched or unpatched kernel"
	[[ -d $src ]] || die_usage "--tree '$src': no such directory"
	src=$(cd "$src" && pwd)
	git_top=$(git -C "$src" rev-parse --show-toplevel 2>&1) ||
		die_usage "--tree '$src': ${git_top%%$'\n'*}"
	[[ $git_top == "$src" ]] ||
		die_usage "--tree '$src' is not the top of a git work tree ($git_top is)"
	[[ -f $src/Makefile && -d $src/arch/x86 ]] ||
		die_usage "--tree '$src' is not an x86 kernel source tree"
	hash=$(git -C "$src" rev-parse -q --verify "$commit^{commit}") ||
		die_usage "--commit '$commit': no such commit in $src"
}

check_host() {
	local missing=() tool

	for tool in gcc make bison flex bc git xz; do
		command -v "$tool" >/dev/null || missing+=("$tool")
	done
	[[ -f /usr/include/libelf.h ]] || missing+=(libelf-dev)
	[[ -f /usr/include/openssl/ssl.h ]] || missing+=(libssl-dev)
	command -v pahole >/dev/null || missing+=(dwarves)
	python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
	((${#missing[@]} == 0)) ||
		die 3 "missing host tools: ${missing[*]} (apt-get install" \
			"${missing[*]/xz/xz-utils})"
}

# The patches in series order: the series file when there is one, else
# the names' order (git format-patch numbers them).
series_files() {
	if [[ -f $here/patches/series ]]; then
		grep -v '^\s*\(#\|$\)' "$here/patches/series" | sed "s|^|$here/patches/|"
	else
		find "$here/patches" -maxdepth 1 -name '*.patch' | sort
	fi
}

# The configuration fragments, in merge order: the collection's union
# config, every test directory's config (they may be ahead of the union),
# then ours, which wins.
config_fragments() {
	local frag

	[[ -f $top/config ]] && echo "$top/config"
	for frag in "$top"/*/config; do
		[[ -f $frag ]] && echo "$frag"
	done
	echo "$here/kernel.config"
	[[ -z $btf ]] || echo "$here/btf.config"
}

find_tarball() {
	local dl

	tarball=/usr/src/linux-source-$version.tar.xz
	[[ -f $tarball ]] && return
	tarball=$cache/linux-source-$version.tar.xz
	[[ -f $tarball ]] && return
	msg "fetching Debian package linux-source-$version"
	dl=$(mktemp -d "$cache/dl.XXXXXX")
	if ! (cd "$dl" && apt-get download "linux-source-$version" >&2) ||
		! dpkg-deb -x "$dl"/linux-source-"$version"_*.deb "$dl/root"; then
		rm -rf "$dl"
		die 3 "cannot fetch linux-source-$version (apt-get update, or apt-get install linux-source-$version)"
	fi
	mv "$dl/root/usr/src/linux-source-$version.tar.xz" "$tarball"
	rm -rf "$dl"
}

# inputs_key SOURCE: the key of the configuration's inputs: the recipe,
# what stands for the source, the fragments.
inputs_key() {
	local frags

	mapfile -t frags < <(config_fragments)
	{ echo "recipe $recipe"; [[ -z $1 ]] || echo "$1"; cat "${frags[@]}"; } |
		sha256sum | cut -c1-12
}

hash_of() {
	sha256sum "$@" | awk '{ print $1 }' | sha256sum | cut -c1-12
}

compute_keys() {
	local series

	mapfile -t series < <(series_files)
	((${#series[@]})) || [[ -z $want_patched ]] || die 1 "no patches in $here/patches"
	# The tarball's name and size stand for its content (hashing 150 MB
	# on every run costs more than it protects against).
	frag_key=$(inputs_key "$(stat -c '%n %s' "$tarball")")
	series_key=none
	((${#series[@]} == 0)) || series_key=$(hash_of "${series[@]}")
	tree=$cache/tree-$(stat -c '%n %s' "$tarball" | sha256sum | cut -c1-12)/linux-source-$version
	image_paths
}

# The images are keyed by the configuration the inputs produced (its set
# options), so that a new fragment that changes nothing rebuilds nothing.
# Unknown ("unconfigured") until the tree has been configured for the
# inputs once: the key is remembered per inputs (keys/), so that going
# back to images built before (with or without --btf) reconfigures and
# rebuilds nothing.
image_paths() {
	local base_key=unconfigured memo=$cache/keys/$frag_key

	if [[ $(cat "$tree/.kbench-config" 2>/dev/null) == "$frag_key" ]]; then
		base_key=$({ echo "recipe $recipe"; stat -c '%n %s' "$tarball";
			grep '^CONFIG_' "$tree/.config"; } | sha256sum | cut -c1-12)
		if [[ $(cat "$memo" 2>/dev/null) != "$base_key" ]]; then
			mkdir -p "${memo%/*}"
			echo "$base_key" >"$memo.tmp" && mv "$memo.tmp" "$memo"
		fi
	elif [[ -f $memo ]]; then
		base_key=$(<"$memo")
	fi
	out_patched=$cache/patched-$base_key-$series_key
	out_unpatched=$cache/unpatched-$base_key
}

ensure_vng() {
	local venv=$vcache/venv log

	if [[ $("$venv/bin/vng" --version 2>/dev/null) != "virtme-ng $vng_version" ]]; then
		mkdir -p "$vcache"
		exec 8>"$vcache/.lock-venv"
		flock 8
		if [[ $("$venv/bin/vng" --version 2>/dev/null) != "virtme-ng $vng_version" ]]; then
			msg "installing virtme-ng $vng_version from PyPI into $venv"
			log=$vcache/venv-install.log
			if ! { [[ -x $venv/bin/pip ]] || python3 -m venv "$venv"; } >"$log" 2>&1 ||
				! "$venv/bin/pip" install -q "virtme-ng==$vng_version" >>"$log" 2>&1; then
				tail -n 5 "$log" >&2
				die 3 "cannot install virtme-ng $vng_version (log: $log)"
			fi
		fi
		exec 8>&-
	fi
	PATH=$venv/bin:$PATH
}

git_tree() {
	git -C "$tree" -c user.name=kbench -c user.email=kbench@localhost \
		-c advice.detachedHead=false -c gc.auto=0 "$@"
}

# Extract the pristine source into a git repository (branch "unpatched"),
# once per tarball; configure it whenever the configuration inputs change
# (make then rebuilds only what the changed options touch).
prepare_tree() {
	local tmp

	if [[ ! -f $tree/.kbench-ready ]]; then
		rm -rf "${tree%/*}"
		tmp=$(mktemp -d "$cache/tree.XXXXXX")
		msg "extracting $tarball"
		tar -xJf "$tarball" -C "$tmp"
		mv "$tmp" "${tree%/*}"
		# Debian's top-level .gitignore ignores everything: add by
		# force, build products stay untracked all the same.
		git_tree init -q -b unpatched
		git_tree add -f -A
		git_tree commit -q -m "linux-source-$version (Debian, pristine)"
		touch "$tree/.kbench-ready"
	fi
	[[ $(cat "$tree/.kbench-config" 2>/dev/null) == "$frag_key" ]] && return

	configure_kernel "$tree" "$tree" "$cache/config.log"
}

# configure_kernel SRC OBJ LOG: virtme-ng's defconfig and the fragments
# into OBJ/.config (OBJ is SRC, or a directory for make O=).
configure_kernel() {
	local frags

	msg "configuring: virtme-ng defconfig + $(config_fragments | wc -l) fragments"
	ensure_vng
	rm -f "$2/.kbench-config"
	mapfile -t frags < <(config_fragments)
	if ! (cd "$1" && if [[ $2 == "$1" ]]; then
		virtme-configkernel --defconfig &&
			scripts/kconfig/merge_config.sh -m .config "${frags[@]}" &&
			make -s olddefconfig
	else
		KBUILD_OUTPUT=$2 virtme-configkernel --defconfig &&
			scripts/kconfig/merge_config.sh -m -O "$2" "$2/.config" "${frags[@]}" &&
			make -s O="$2" olddefconfig
	fi) >"$3" 2>&1; then
		tail -n 20 "$3" >&2
		die 1 "configuring the kernel failed (log: $3)"
	fi
	check_config "$2/.config"
	echo "$frag_key" >"$2/.kbench-config"
}

# Every option the fragments ask for must have survived olddefconfig. A
# later fragment may override an earlier one (testkernel/kernel.config
# comes last and switches debug info off): the last word on a symbol counts.
check_config() {
	local frag line sym lost=() config=${1:-$tree/.config}
	local -A want=()

	while read -r frag; do
		while read -r line; do
			if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
				want[${BASH_REMATCH[1]}]=$line
			elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
				want[${BASH_REMATCH[1]}]=n
			fi
		done <"$frag"
	done < <(config_fragments)
	for sym in "${!want[@]}"; do
		line=${want[$sym]}
		if [[ $line == n ]]; then
			! grep -q "^$sym=[ym]" "$config" || lost+=("$sym=n")
		else
			grep -qxF "$line" "$config" || lost+=("$line")
		fi
	done
	((${#lost[@]} == 0)) ||
		die 1 "options the kernel configuration could not take: ${lost[*]}"
}

# build_one NAME OUTDIR: make bzImage on the checked-out branch, keep the
# image, its config and the series it holds in OUTDIR.
build_one() {
	local name=$1 out=$2 start log

	log=$cache/build-$name.log
	msg "building the $name kernel ($jobs jobs, log: $log)"
	start=$SECONDS
	if ! make -C "$tree" -j"$jobs" LOCALVERSION="-kbench-$name" bzImage >"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die 1 "building the $name kernel failed (log: $log)"
	fi
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	cp "$tree/arch/x86/boot/bzImage" "$tree/.config" "$out.tmp/"
	make -s -C "$tree" LOCALVERSION="-kbench-$name" kernelrelease >"$out.tmp/kernelrelease"
	git_tree log --oneline unpatched..HEAD >"$out.tmp/series"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	msg "built the $name kernel in $((SECONDS - start)) s: $out/bzImage"
}

# One branch per series ("patched-<series key>"): going back to a series
# built before only rewrites the files that differ from the current branch.
build_patched() {
	local series branch=patched-$series_key

	mapfile -t series < <(series_files)
	if git_tree rev-parse -q --verify "refs/heads/$branch" >/dev/null; then
		git_tree checkout -q -f "$branch"
	else
		git_tree checkout -q -f unpatched
		git_tree checkout -q -b "$branch"
		if ! git_tree am -q --keep-cr "${series[@]}" >&2; then
			git_tree am --abort || true
			git_tree checkout -q -f unpatched
			git_tree branch -q -D "$branch" || true
			die 1 "the series does not apply to linux-source-$version"
		fi
	fi
	build_one patched "$out_patched"
}

build_unpatched() {
	git_tree checkout -q -f unpatched
	build_one unpatched "$out_unpatched"
}

# report_cached NAME WANTED DIR: with --dry-run, say whether NAME's image
# is built; fails when it is wanted and not built.
report_cached() {
	[[ -n $2 ]] || return 0
	if [[ -f $3/bzImage ]]; then
		msg "$1: cached"
	else
		msg "$1: not built"
		return 1
	fi
}

# ---- one commit of another tree (--tree DIR --commit REV) ----------------

# commit_paths: the image directory of the commit (hash set by parse_args)
# and the directory it is built in: out of tree for a clean DIR, in place
# for a tree this script configured (no second build of the same source).
commit_paths() {
	frag_key=$(inputs_key "")
	out_commit=$cache/commits/$hash-$frag_key
	obj=$cache/obj/$(echo "$src" | sha256sum | cut -c1-12)
	if [[ -f $src/.kbench-config ]]; then
		obj=$src
	elif [[ -e $src/.config || -d $src/include/config ]]; then
		die_usage "--tree '$src' holds a build of its own (.config): kbench" \
			"builds out of tree and kbuild needs a clean source tree" \
			"('make mrproper' there, or give a separate git worktree)"
	fi
}

# A tree left on another commit is put back on its branch (or commit),
# also when the build is interrupted.
restore_tree() {
	if [[ -n ${make_pid:-} ]]; then
		kill -TERM -- -"$make_pid" 2>/dev/null || true
		wait "$make_pid" || true
	fi
	if [[ -n ${orig_head:-} ]]; then
		git -C "$src" -c advice.detachedHead=false checkout -q "$orig_head" ||
			msg "could not put $src back on $orig_head"
		orig_head=
	fi
}

# Check out the commit, configure when needed, build; keep the image,
# its config and the commit's one-line log in out_commit.
build_commit() {
	local log=$cache/commits/build-$hash.log start=$SECONDS o=()

	git -C "$src" diff --quiet HEAD -- ||
		die_usage "--tree '$src' has uncommitted changes: commit or stash them"
	orig_head=$(git -C "$src" symbolic-ref -q --short HEAD) ||
		orig_head=$(git -C "$src" rev-parse HEAD)
	trap restore_tree EXIT
	trap 'exit 130' INT TERM HUP
	git -C "$src" -c advice.detachedHead=false checkout -q --detach "$hash"
	mkdir -p "$cache/commits" "$obj"
	if [[ $(cat "$obj/.kbench-config" 2>/dev/null) != "$frag_key" ]]; then
		configure_kernel "$src" "$obj" "$log"
	fi
	msg "building $(git -C "$src" log -1 --format='%h %s' "$hash") ($jobs jobs, log: $log)"
	[[ $obj == "$src" ]] || o=(O="$obj")
	# make in a process group of its own: an interruption stops all of
	# it before the tree is checked out again.
	make_pid=
	setsid make -C "$src" "${o[@]}" -j"$jobs" LOCALVERSION=-kbench-bisect \
		bzImage >"$log" 2>&1 &
	make_pid=$!
	if ! wait "$make_pid"; then
		make_pid=
		tail -n 30 "$log" >&2
		die 1 "building $hash failed (log: $log)"
	fi
	make_pid=
	rm -rf "$out_commit.tmp"
	mkdir -p "$out_commit.tmp"
	cp "$obj/arch/x86/boot/bzImage" "$obj/.config" "$log" "$out_commit.tmp/"
	git -C "$src" log -1 --format='%H %s' "$hash" >"$out_commit.tmp/commit"
	rm -rf "$out_commit"
	mv "$out_commit.tmp" "$out_commit"
	restore_tree
	msg "built $hash in $((SECONDS - start)) s: $out_commit/bzImage"
}

main_commit() {
	commit_paths
	if [[ ! -f $out_commit/bzImage && -z $dry_run ]]; then
		check_host
		mkdir -p "$cache"
		exec 9>"$cache/.lock-build"
		flock 9
		[[ -f $out_commit/bzImage ]] || build_commit
	fi
	echo "image=$out_commit/bzImage"
	[[ -f $out_commit/bzImage ]]
}

main() {
	local not_built=0 start=$SECONDS

	parse_args "$@"
	[[ -z $src ]] || { main_commit; return; }
	mkdir -p "$cache"
	find_tarball
	compute_keys
	[[ -z $print_tree ]] || { echo "$tree"; return; }
	if [[ -n $dry_run ]]; then
		report_cached patched "$want_patched" "$out_patched" || not_built=1
		report_cached unpatched "$want_unpatched" "$out_unpatched" || not_built=1
	else
		if [[ ( -n $want_patched && ! -f $out_patched/bzImage ) ||
			( -n $want_unpatched && ! -f $out_unpatched/bzImage ) ]]; then
			check_host
			exec 9>"$cache/.lock-build"
			flock 9
			prepare_tree
			image_paths
			if [[ -n $want_patched && ! -f $out_patched/bzImage ]]; then
				build_patched
			fi
			if [[ -n $want_unpatched && ! -f $out_unpatched/bzImage ]]; then
				build_unpatched
			fi
			msg "done in $((SECONDS - start)) s"
		fi
	fi
	[[ -n $want_patched ]] && echo "patched=$out_patched/bzImage"
	[[ -n $want_unpatched ]] && echo "unpatched=$out_unpatched/bzImage"
	return "$not_built"
}

main "$@"
