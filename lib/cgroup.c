// SPDX-License-Identifier: GPL-2.0
/*
 * kbench cgroup helpers. See cgroup.h for the interface.
 */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- lines of a buffer ------------------------------------------------ */

bool kb_text_next_line(struct kb_text *t, const char **line, size_t *len)
{
	const char *nl;

	if (!t->p || t->p >= t->end)
		return false;
	nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
	*line = t->p;
	*len = (size_t)((nl ? nl : t->end) - t->p);
	t->p = nl ? nl + 1 : t->end;
	return true;
}

bool kb_list_has(const char *list, size_t len, char sep, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list, *end = list + len;

	while (p < end) {
		const char *next = memchr(p, sep, (size_t)(end - p));
		size_t n = (size_t)((next ? next : end) - p);

		if (n == wlen && !memcmp(p, word, wlen))
			return true;
		if (!next)
			break;
		p = next + 1;
	}
	return false;
}

bool kb_opt_list_has(const char *opts, const char *opt)
{
	return kb_list_has(opts, strlen(opts), ',', opt);
}

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

int kb_mountinfo_parse_line(const char *line, size_t len, struct kb_mount *m)
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

int kb_mountinfo_find_cgroups(const char *text, size_t len, char *v2,
			      size_t v2_size, char *v1_memory, size_t v1_size)
{
	static struct kb_mount m;
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
		err = kb_mountinfo_parse_line(line, n, &m);
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
			   kb_opt_list_has(m.super_opts, "memory")) {
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
	return n && controller && kb_list_has(ctrls, n, ',', controller);
}

int kb_proc_cgroup_path(const char *text, size_t len,
			enum kb_cgroup_version version, const char *controller,
			char *path, size_t size)
{
	struct kb_text t;
	const char *line;
	size_t n;

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
		if (!kb_opt_list_has(opts, word))
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
	static struct kb_mount m;
	struct kb_text t;
	const char *line;
	size_t len;
	int err;

	kb_text_init(&t, mi, mlen);
	while (kb_text_next_line(&t, &line, &len)) {
		err = kb_mountinfo_parse_line(line, len, &m);
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
	return kb_list_has(buf, (size_t)n, ' ', word);
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

int kb_memcg_find(struct kb_memcg_mount *mnt)
{
	char v2[PATH_MAX], v1[PATH_MAX], ctl[PATH_MAX + 32];
	size_t len;
	char *text = read_proc_text("/proc/self/mountinfo", 1 << 20, &len);
	int found;

	memset(mnt, 0, sizeof(*mnt));
	if (!text)
		return -errno;
	found = kb_mountinfo_find_cgroups(text, len, v2, sizeof(v2), v1,
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

int kb_memcg_self(const struct kb_memcg_mount *mnt, char *dir, size_t size)
{
	size_t len;
	char *text = read_proc_text("/proc/self/cgroup", 1 << 16, &len);
	char rel[PATH_MAX];
	int err;

	if (!text)
		return -errno;
	err = kb_proc_cgroup_path(text, len, mnt->version, "memory", rel,
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

int kb_cgroup_create(const struct kb_memcg_mount *mnt, const char *parent,
		     const char *name, struct kb_cgroup *cg)
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

/* ---- stat files ------------------------------------------------------ */

/* A decimal without sign, all @n bytes of it; -EINVAL on anything else. */
static int parse_u64(const char *s, size_t n, unsigned long long *v)
{
	unsigned long long x = 0;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned int d = (unsigned char)s[i] - '0';

		if (d > 9 || x > (ULLONG_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static void set_why(char *why, size_t size, const char *what,
		    const char *line, size_t len)
{
	if (why && size)
		snprintf(why, size, "%s: '%.*s%s'", what,
			 (int)(len > 80 ? 80 : len), line, len > 80 ? "..." : "");
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next blank separated token of [*s, end); false when none is left. */
static bool next_token(const char **s, const char *end, const char **tok,
		       size_t *n)
{
	const char *p = *s;

	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return false;
	*tok = p;
	while (p < end && !is_blank(*p))
		p++;
	*n = (size_t)(p - *tok);
	*s = p;
	return true;
}

/* One "key value" line into @e; the reason of a rejection in @what. */
static int stat_line_parse(const char *line, size_t len,
			   struct kb_stat_entry *e, const char **what)
{
	const char *s = line, *end = line + len, *key, *val, *extra;
	size_t klen, vlen, xlen;

	if (len > KB_STAT_LINE_MAX) {
		*what = "line too long";
		return -EINVAL;
	}
	if (!next_token(&s, end, &key, &klen) ||
	    !next_token(&s, end, &val, &vlen) ||
	    next_token(&s, end, &extra, &xlen)) {
		*what = "not a 'key value' line";
		return -EINVAL;
	}
	if (klen >= KB_STAT_KEY_LEN || memchr(key, '\0', klen)) {
		*what = "key too long or not text";
		return -EINVAL;
	}
	if (parse_u64(val, vlen, &e->value)) {
		*what = "value is not a non-negative integer";
		return -EINVAL;
	}
	memcpy(e->key, key, klen);
	e->key[klen] = '\0';
	return 0;
}

int kb_stat_parse(const char *text, size_t len, struct kb_stat *st, char *why,
		  size_t why_size)
{
	struct kb_text t;
	const char *line, *what = NULL;
	size_t n;

	st->n = 0;
	st->comments = 0;
	kb_text_init(&t, text, len);
	while (kb_text_next_line(&t, &line, &n)) {
		if (!n)
			continue;
		if (line[0] == '#') {
			st->comments++;
			continue;
		}
		if (st->n == KB_STAT_MAX_KEYS) {
			set_why(why, why_size, "too many keys", line, n);
			return -E2BIG;
		}
		if (stat_line_parse(line, n, &st->e[st->n], &what)) {
			set_why(why, why_size, what, line, n);
			return -EINVAL;
		}
		st->n++;
	}
	return 0;
}

bool kb_stat_get(const struct kb_stat *st, const char *key,
		 unsigned long long *value)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		if (!strcmp(st->e[i].key, key)) {
			if (value)
				*value = st->e[i].value;
			return true;
		}
	}
	return false;
}

/* "N3=1234" */
static int parse_node_token(const char *tok, size_t n, int *node,
			    unsigned long long *value)
{
	const char *eq = memchr(tok, '=', n);
	unsigned long long id;

	if (n < 4 || tok[0] != 'N' || !eq || eq == tok + 1)
		return -EINVAL;
	if (parse_u64(tok + 1, (size_t)(eq - tok - 1), &id) || id > 1 << 20 ||
	    parse_u64(eq + 1, (size_t)(tok + n - eq - 1), value))
		return -EINVAL;
	*node = (int)id;
	return 0;
}

/* The first token: "key" (v2) or "key=total" (v1). */
static int numa_key_parse(const char *tok, size_t n, struct kb_numa_line *l)
{
	const char *eq = memchr(tok, '=', n);
	size_t klen = eq ? (size_t)(eq - tok) : n;

	if (!klen || klen >= sizeof(l->key) || memchr(tok, '\0', klen))
		return -EINVAL;
	memcpy(l->key, tok, klen);
	l->key[klen] = '\0';
	if (!eq)
		return 0;
	l->has_total = true;
	return parse_u64(eq + 1, (size_t)(tok + n - eq - 1), &l->total);
}

int kb_numa_line_parse(const char *line, size_t len, struct kb_numa_line *l)
{
	const char *s = line, *end = line + len, *tok;
	size_t n;

	memset(l, 0, sizeof(*l));
	if (len && line[len - 1] == '\n')
		end--;
	if (end - line > KB_NUMA_LINE_MAX)
		return -EINVAL;
	if (!next_token(&s, end, &tok, &n) || numa_key_parse(tok, n, l))
		return -EINVAL;
	while (next_token(&s, end, &tok, &n)) {
		if (l->nnodes == KB_NUMA_MAX_NODES)
			return -E2BIG;
		if (parse_node_token(tok, n, &l->node[l->nnodes],
				     &l->value[l->nnodes]))
			return -EINVAL;
		l->nnodes++;
	}
	return l->nnodes ? 0 : -EINVAL;
}

/* The next non-empty numa_stat line, parsed: 1, 0 at the end, -errno. */
static int numa_next(struct kb_text *t, struct kb_numa_line *l,
		     const char **line, size_t *n)
{
	while (kb_text_next_line(t, line, n)) {
		int err;

		if (!*n)
			continue;
		err = kb_numa_line_parse(*line, *n, l);
		return err ? err : 1;
	}
	return 0;
}

int kb_numa_stat_find(const char *text, size_t len, const char *key,
		      struct kb_numa_line *l)
{
	struct kb_text t;
	const char *line;
	size_t n;
	int got;

	kb_text_init(&t, text, len);
	while ((got = numa_next(&t, l, &line, &n)) > 0)
		if (!strcmp(l->key, key))
			return 0;
	return got < 0 ? got : -ENOENT;
}

unsigned long long kb_numa_line_sum(const struct kb_numa_line *l)
{
	unsigned long long sum = 0;
	int i;

	/* Saturate: a wrapped sum could equal any total. */
	for (i = 0; i < l->nnodes; i++)
		sum = l->value[i] > ULLONG_MAX - sum ? ULLONG_MAX :
		      sum + l->value[i];
	return sum;
}

bool kb_numa_line_node(const struct kb_numa_line *l, int node,
		       unsigned long long *value)
{
	int i;

	for (i = 0; i < l->nnodes; i++) {
		if (l->node[i] == node) {
			*value = l->value[i];
			return true;
		}
	}
	return false;
}

/* ---- comparisons of the memcg files ------------------------------------ */

bool kb_stat_same_keys(const struct kb_stat *a, const struct kb_stat *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->e[i].key, b->e[i].key))
			return false;
	return true;
}

int kb_ks_keys_match(const struct kb_stat *ks, const char *filter, char *why,
		     size_t size)
{
	const char *p = filter;
	size_t i = 0;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n && !(n == 5 && !strncmp(p, "flush", 5))) {
			if (i == ks->n) {
				snprintf(why, size, "key %zu '%.*s' of the filter missing (output has %zu keys)",
					 i + 1, (int)(n > 64 ? 64 : n), p, ks->n);
				return -1;
			}
			if (strlen(ks->e[i].key) != n ||
			    strncmp(ks->e[i].key, p, n)) {
				snprintf(why, size, "key %zu is '%s', the filter says '%.*s'",
					 i + 1, ks->e[i].key,
					 (int)(n > 64 ? 64 : n), p);
				return -1;
			}
			i++;
		}
		p += n + (comma ? 1 : 0);
	}
	if (i != ks->n) {
		snprintf(why, size, "%zu keys, the filter has %zu: extra key '%s'",
			 ks->n, i, ks->e[i].key);
		return -1;
	}
	return 0;
}

bool kb_value_bracketed(unsigned long long v, unsigned long long a,
			unsigned long long b, unsigned int tol_ppm)
{
	unsigned long long lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned long long slack = hi / 1000000 * tol_ppm +
				   hi % 1000000 * tol_ppm / 1000000;

	return v >= (lo > slack ? lo - slack : 0) &&
	       v <= (hi > ULLONG_MAX - slack ? ULLONG_MAX : hi + slack);
}

int kb_stat_values_bracketed(const struct kb_stat *got,
			     const struct kb_stat *before,
			     const struct kb_stat *after, unsigned int tol_ppm,
			     char *why, size_t size)
{
	size_t i;

	for (i = 0; i < got->n; i++) {
		const char *key = got->e[i].key;
		unsigned long long b, a;

		if (!kb_stat_get(before, key, &b) ||
		    !kb_stat_get(after, key, &a)) {
			snprintf(why, size, "'%s' is not a key of memory.stat",
				 key);
			return -1;
		}
		if (!kb_value_bracketed(got->e[i].value, b, a, tol_ppm)) {
			snprintf(why, size, "%s: %llu, memory.stat read before and after: %llu and %llu (tolerance %.3f %%)",
				 key, got->e[i].value, b, a, tol_ppm / 1e4);
			return -1;
		}
	}
	return 0;
}

/* One numa_stat line against its total (v1) or memory.stat (v2). */
static int numa_line_check(const struct kb_numa_line *l,
			   const struct kb_stat *before,
			   const struct kb_stat *after, unsigned int tol_ppm,
			   char *why, size_t size)
{
	unsigned long long sum = kb_numa_line_sum(l), b, a;

	if (l->has_total) {
		if (kb_value_bracketed(sum, l->total, l->total, tol_ppm))
			return 0;
		snprintf(why, size, "%s: the nodes add up to %llu, total=%llu (pages, tolerance %.3f %%)",
			 l->key, sum, l->total, tol_ppm / 1e4);
		return -1;
	}
	if (!before || !kb_stat_get(before, l->key, &b) ||
	    !kb_stat_get(after, l->key, &a))
		return 1;	/* numa_stat only: nothing to compare with */
	if (kb_value_bracketed(sum, b, a, tol_ppm))
		return 0;
	snprintf(why, size, "%s: the nodes add up to %llu, memory.stat read before and after: %llu and %llu (bytes, tolerance %.3f %%)",
		 l->key, sum, b, a, tol_ppm / 1e4);
	return -1;
}

int kb_numa_check_sums(const char *text, size_t len,
		       const struct kb_stat *before,
		       const struct kb_stat *after, unsigned int tol_ppm,
		       int *lines, char *why, size_t size)
{
	struct kb_numa_line l;
	struct kb_text t;
	const char *line;
	size_t n;
	int err;

	*lines = 0;
	kb_text_init(&t, text, len);
	while ((err = numa_next(&t, &l, &line, &n))) {
		if (err < 0) {
			set_why(why, size, "unparsable line", line, n);
			return -1;
		}
		err = numa_line_check(&l, before, after, tol_ppm, why, size);
		if (err < 0)
			return -1;
		if (!err)
			(*lines)++;
	}
	if (!*lines) {
		snprintf(why, size, "no line to check");
		return -1;
	}
	return 0;
}
