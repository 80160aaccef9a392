// SPDX-License-Identifier: GPL-2.0
/*
 * cgroups. See cgroup.h.
 */
#include "cgroup.h"
#include "cleanup.h"
#include "errno_rule.h"
#include "file.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- /proc/self/mountinfo -------------------------------------------- */

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * Copy the next space separated field of [*s, end) into @out, decoding
 * \ooo escapes, and move *s past it. -EINVAL when the line has no more
 * fields; -E2BIG when the field does not fit (the field is consumed and
 * @out left empty).
 */
static int take_field(const char **s, const char *end, char *out, size_t size)
{
	const char *p = *s;
	size_t len = 0;
	bool fits = true;

	while (p < end && *p == ' ')
		p++;
	if (p == end)
		return -EINVAL;
	while (p < end && *p != ' ') {
		char c = *p++;

		if (c == '\\' && end - p >= 3 && p[0] <= '3' && is_octal(p[0]) &&
		    is_octal(p[1]) && is_octal(p[2])) {
			c = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 +
				   (p[2] - '0'));
			p += 3;
		}
		if (len + 1 < size)
			out[len++] = c;
		else
			fits = false;
	}
	*s = p;
	out[fits ? len : 0] = '\0';
	return fits ? 0 : -E2BIG;
}

/* Keep the first error, but an -EINVAL (not mountinfo) wins over -E2BIG. */
static int worse(int err, int next)
{
	if (next == -EINVAL || !err)
		return next;
	return err;
}

int kb_cgroup_mountinfo_parse(const char *line, size_t len,
			      struct kb_cgroup_mount *m)
{
	const char *s = line, *end = line + len;
	char field[64];
	int i, err = 0;

	memset(m, 0, sizeof(*m));
	if (len && line[len - 1] == '\n')
		end--;
	/* mount ID, parent ID, major:minor */
	for (i = 0; i < 3; i++) {
		err = worse(err, take_field(&s, end, field, sizeof(field)));
		if (err == -EINVAL)
			return err;
	}
	if (!strchr(field, ':'))
		return -EINVAL;
	err = worse(err, take_field(&s, end, m->root, sizeof(m->root)));
	if (err == -EINVAL)
		return err;
	err = worse(err, take_field(&s, end, m->point, sizeof(m->point)));
	if (err == -EINVAL)
		return err;
	/* mount options, optional fields up to the lone "-" */
	for (i = 0;; i++) {
		int e = take_field(&s, end, field, sizeof(field));

		if (e == -EINVAL)
			return e;
		if (i > 0 && !e && !strcmp(field, "-"))
			break;
	}
	err = worse(err, take_field(&s, end, m->fstype, sizeof(m->fstype)));
	if (err == -EINVAL)
		return err;
	/* the source can be anything: only its presence matters */
	if (take_field(&s, end, field, sizeof(field)) == -EINVAL)
		return -EINVAL;
	return worse(err, take_field(&s, end, m->super_opts,
				     sizeof(m->super_opts)));
}

static bool is_cgroup_fs(const char *fstype)
{
	return !strcmp(fstype, "cgroup") || !strcmp(fstype, "cgroup2");
}

int kb_cgroup_mountinfo_find(const char *text, size_t len, char *v2,
			     size_t v2_size, char *v1_memory, size_t v1_size)
{
	static struct kb_cgroup_mount m;
	struct kb_text t;
	const char *line;
	size_t n;
	int found = 0, err;

	if (v2 && v2_size)
		v2[0] = '\0';
	if (v1_memory && v1_size)
		v1_memory[0] = '\0';
	kb_text_init(&t, text, len);
	while (kb_text_next_line(&t, &line, &n)) {
		err = kb_cgroup_mountinfo_parse(line, n, &m);
		/* A cgroup mount we cannot hold whole: never use a part. */
		if (err == -E2BIG && (is_cgroup_fs(m.fstype) || !m.fstype[0]))
			return -E2BIG;
		if (err)
			continue;
		if (v2 && !v2[0] && !strcmp(m.fstype, "cgroup2")) {
			if ((size_t)snprintf(v2, v2_size, "%s", m.point) >= v2_size)
				return -E2BIG;
			found++;
		} else if (v1_memory && !v1_memory[0] &&
			   !strcmp(m.fstype, "cgroup") &&
			   kb_text_opts_have(m.super_opts, "memory")) {
			if ((size_t)snprintf(v1_memory, v1_size, "%s",
					     m.point) >= v1_size)
				return -E2BIG;
			found++;
		}
	}
	return found;
}

/* "ID:controllers:path" of @version's hierarchy (v1: naming @controller). */
static bool proc_cgroup_line_is(const char *ctrls, size_t n,
				enum kb_cgroup_version version,
				const char *controller)
{
	if (version == KB_CGROUP_V2)
		return n == 0;
	return n && controller && kb_text_list_has(ctrls, n, ',', controller);
}

int kb_cgroup_proc_path(const char *text, size_t len,
			enum kb_cgroup_version version, const char *controller,
			char *path, size_t size)
{
	struct kb_text t;
	const char *line;
	size_t n;

	if (size)
		path[0] = '\0';
	kb_text_init(&t, text, len);
	while (kb_text_next_line(&t, &line, &n)) {
		const char *end = line + n, *c1, *c2;

		c1 = memchr(line, ':', n);
		if (!c1)
			continue;
		c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
		if (!c2)
			continue;
		/* v2's line is "0::/path" */
		if (version == KB_CGROUP_V2 && (c1 - line != 1 || line[0] != '0'))
			continue;
		if (!proc_cgroup_line_is(c1 + 1, (size_t)(c2 - c1 - 1), version,
					 controller))
			continue;
		if ((size_t)(end - c2 - 1) >= size)
			return -ENAMETOOLONG;
		memcpy(path, c2 + 1, (size_t)(end - c2 - 1));
		path[end - c2 - 1] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* Every word of the comma list @ctrls (@n bytes) is in @opts. */
static bool opts_have_all(const char *opts, const char *ctrls, size_t n)
{
	const char *p = ctrls, *end = ctrls + n;
	char word[64];

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t len = (size_t)((comma ? comma : end) - p);

		if (!len || len >= sizeof(word))
			return false;
		memcpy(word, p, len);
		word[len] = '\0';
		if (!kb_text_opts_have(opts, word))
			return false;
		p = comma ? comma + 1 : end;
	}
	return n > 0;
}

/*
 * The mount point of the hierarchy of one /proc/self/cgroup line: v2 for
 * empty @ctrls. 0 (@point set), -ENOENT, or -E2BIG.
 */
static int hierarchy_mount(const char *mi, size_t mlen, const char *ctrls,
			   size_t n, char *point, size_t size)
{
	static struct kb_cgroup_mount m;
	struct kb_text t;
	const char *line;
	size_t len;
	int err;

	kb_text_init(&t, mi, mlen);
	while (kb_text_next_line(&t, &line, &len)) {
		err = kb_cgroup_mountinfo_parse(line, len, &m);
		if (err == -E2BIG && (is_cgroup_fs(m.fstype) || !m.fstype[0]))
			return -E2BIG;
		if (err || strcmp(m.root, "/"))
			continue;
		if (n ? strcmp(m.fstype, "cgroup") ||
		    !opts_have_all(m.super_opts, ctrls, n) :
		    strcmp(m.fstype, "cgroup2"))
			continue;
		if ((size_t)snprintf(point, size, "%s", m.point) >= size)
			return -E2BIG;
		return 0;
	}
	return -ENOENT;
}

/* One /proc/self/cgroup line of the pass (v2 first) into @d: 1, 0, -err. */
static int own_dir_of_line(const char *mi, size_t mlen, const char *line,
			   size_t n, bool v2_pass, struct kb_cgroup_dir *d)
{
	const char *end = line + n, *c1, *c2;
	char point[PATH_MAX], rel[PATH_MAX];
	size_t rlen;
	int err;

	c1 = memchr(line, ':', n);
	c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	if (!c2 || (c2 == c1 + 1) != v2_pass)
		return 0;
	rlen = (size_t)(end - c2 - 1);
	if (rlen >= sizeof(rel))
		return -ENAMETOOLONG;
	memcpy(rel, c2 + 1, rlen);
	rel[rlen] = '\0';
	if (rel[0] != '/' || !strncmp(rel, "/..", 3))
		return 0;
	err = hierarchy_mount(mi, mlen, c1 + 1, (size_t)(c2 - c1 - 1), point,
			      sizeof(point));
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	d->version = v2_pass ? KB_CGROUP_V2 : KB_CGROUP_V1;
	if ((size_t)snprintf(d->path, sizeof(d->path), "%s%s", point,
			     strcmp(rel, "/") ? rel : "") >= sizeof(d->path))
		return -ENAMETOOLONG;
	return 1;
}

int kb_cgroup_own_dirs(const char *mi, size_t mlen, const char *pc,
		       size_t plen, struct kb_cgroup_dir *dirs, int max)
{
	int pass, n = 0, got;

	for (pass = 0; pass < 2; pass++) {
		struct kb_text t;
		const char *line;
		size_t len;

		kb_text_init(&t, pc, plen);
		while (n < max && kb_text_next_line(&t, &line, &len)) {
			got = own_dir_of_line(mi, mlen, line, len, pass == 0,
					      &dirs[n]);
			if (got < 0)
				return got;
			n += got;
		}
	}
	return n;
}

/* ---- the memory controller ------------------------------------------- */

/* True when the space separated list in the file @path names @word. */
static bool file_has_word(const char *path, const char *word)
{
	char buf[1024];
	ssize_t n = kb_file_read_all(path, buf, sizeof(buf));

	if (n < 0)
		return false;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	return kb_text_list_has(buf, (size_t)n, ' ', word);
}

/* The whole of a /proc file in a new buffer (free() it); NULL, errno. */
static char *read_proc_text(const char *path, size_t size, size_t *len)
{
	char *buf = malloc(size);
	ssize_t n;

	if (!buf)
		return NULL;
	n = kb_file_read_all(path, buf, size);
	if (n < 0) {
		free(buf);
		errno = (int)-n;
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

int kb_cgroup_own_dirs_read(struct kb_cgroup_dir *dirs, int max)
{
	size_t mlen, plen;
	char *mi = read_proc_text("/proc/self/mountinfo", 1 << 20, &mlen);
	char *pc = mi ? read_proc_text("/proc/self/cgroup", 1 << 16, &plen) :
		   NULL;
	int n = -errno;

	if (pc)
		n = kb_cgroup_own_dirs(mi, mlen, pc, plen, dirs, max);
	free(pc);
	free(mi);
	return n;
}

int kb_cgroup_memcg_find(struct kb_cgroup_memcg_mount *mnt)
{
	char v2[PATH_MAX], v1[PATH_MAX], ctl[PATH_MAX + 32];
	size_t len;
	char *text = read_proc_text("/proc/self/mountinfo", 1 << 20, &len);
	int found;

	memset(mnt, 0, sizeof(*mnt));
	if (!text)
		return -errno;
	found = kb_cgroup_mountinfo_find(text, len, v2, sizeof(v2), v1,
					 sizeof(v1));
	free(text);
	if (found < 0)
		return found;
	snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", v2);
	if (v2[0] && file_has_word(ctl, "memory")) {
		mnt->version = KB_CGROUP_V2;
		snprintf(mnt->path, sizeof(mnt->path), "%s", v2);
		return 0;
	}
	if (v1[0]) {
		mnt->version = KB_CGROUP_V1;
		snprintf(mnt->path, sizeof(mnt->path), "%s", v1);
		return 0;
	}
	return -ENOENT;
}

int kb_cgroup_memcg_self(const struct kb_cgroup_memcg_mount *mnt, char *dir,
			 size_t size)
{
	size_t len;
	char *text = read_proc_text("/proc/self/cgroup", 1 << 16, &len);
	char rel[PATH_MAX];
	int err;

	if (!text)
		return -errno;
	err = kb_cgroup_proc_path(text, len, mnt->version, "memory", rel,
				  sizeof(rel));
	free(text);
	if (err)
		return err;
	/* Outside our cgroup namespace the path starts with "/..". */
	if (!strncmp(rel, "/..", 3))
		return -ENOENT;
	if ((size_t)snprintf(dir, size, "%s%s", mnt->path,
			     strcmp(rel, "/") ? rel : "") >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- a test cgroup --------------------------------------------------- */

/* Runs from the cleanup stack, maybe in a signal handler: syscalls only. */
static void cgroup_remove_now(void *arg)
{
	struct kb_cgroup *cg = arg;
	struct timespec pause = { 0, 5 * 1000 * 1000 };
	int tries;

	for (tries = 0; tries < 400; tries++) {
		if (!rmdir(cg->path) || errno == ENOENT)
			break;
		/* Exited tasks can keep the cgroup busy for a moment. */
		if (errno != EBUSY && errno != EAGAIN)
			break;
		nanosleep(&pause, NULL);
	}
	if (cg->enabled_in[0])
		kb_file_write_str(cg->enabled_in, "-memory");
}

bool kb_cgroup_may_write(const char *path, char *why, size_t size)
{
	if (!faccessat(AT_FDCWD, path, W_OK, AT_EACCESS))
		return true;
	/* Anything but the environment's refusal: the write itself says. */
	return !kb_errno_explain(errno, CAP_DAC_OVERRIDE, path, why, size);
}

/* cgroup v2: the controller must be enabled in the parent for children. */
static int enable_memory_in(const char *parent, struct kb_cgroup *cg)
{
	char ctl[PATH_MAX + 32];
	int err;

	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", parent);
	if (file_has_word(ctl, "memory"))
		return 0;
	err = kb_file_write_str(ctl, "+memory");
	if (err)
		return err;
	snprintf(cg->enabled_in, sizeof(cg->enabled_in), "%s", ctl);
	return 0;
}

int kb_cgroup_create(const struct kb_cgroup_memcg_mount *mnt,
		     const char *parent, const char *name, struct kb_cgroup *cg)
{
	int err = 0;

	memset(cg, 0, sizeof(*cg));
	cg->cleanup = -1;
	cg->version = mnt->version;
	if ((size_t)snprintf(cg->path, sizeof(cg->path), "%s/%s", parent,
			     name) >= sizeof(cg->path))
		return -ENAMETOOLONG;
	/* No signal between creating the cgroup and registering its removal. */
	kb_cleanup_block_signals();
	if (mnt->version == KB_CGROUP_V2)
		err = enable_memory_in(parent, cg);
	if (!err && mkdir(cg->path, 0755))
		err = -errno;
	if (!err) {
		cg->cleanup = kb_cleanup_push(cgroup_remove_now, cg);
		if (cg->cleanup < 0) {
			cgroup_remove_now(cg);
			err = -ENOSPC;
		}
	} else if (cg->enabled_in[0]) {
		kb_file_write_str(cg->enabled_in, "-memory");
		cg->enabled_in[0] = '\0';
	}
	kb_cleanup_unblock_signals();
	return err;
}

int kb_cgroup_remove(struct kb_cgroup *cg)
{
	struct stat sb;

	if (cg->cleanup >= 0) {
		kb_cleanup_pop(cg->cleanup, true);
		cg->cleanup = -1;
	}
	if (!stat(cg->path, &sb))
		return -EBUSY;
	return 0;
}

int kb_cgroup_move(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 32], num[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(num, sizeof(num), "%d\n", (int)pid);
	return kb_file_write_str(path, num);
}
