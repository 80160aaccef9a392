// SPDX-License-Identifier: GPL-2.0
/*
 * kbench cgroup helpers. See cgroup.h for the interface.
 */
#include "cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- /proc/self/mountinfo -------------------------------------------- */

/* Copy one space separated field, decoding \ooo escapes. */
static const char *take_field(const char *s, char *out, size_t size)
{
	size_t len = 0;

	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return NULL;
	while (*s && *s != ' ' && *s != '\n') {
		char c = *s++;

		if (c == '\\' && s[0] >= '0' && s[0] <= '3' &&
		    s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 +
				   (s[2] - '0'));
			s += 3;
		}
		if (len + 1 < size)
			out[len++] = c;
	}
	if (size)
		out[len] = '\0';
	return s;
}

int kb_mountinfo_parse_line(const char *line, struct kb_mount *m)
{
	char field[PATH_MAX];
	const char *s = line;
	int i;

	memset(m, 0, sizeof(*m));
	/* mount ID, parent ID, major:minor */
	for (i = 0; i < 3; i++) {
		s = take_field(s, field, sizeof(field));
		if (!s)
			return -EINVAL;
	}
	if (!strchr(field, ':'))
		return -EINVAL;
	s = take_field(s, m->root, sizeof(m->root));
	if (!s)
		return -EINVAL;
	s = take_field(s, m->point, sizeof(m->point));
	if (!s)
		return -EINVAL;
	/* mount options, optional fields up to the lone "-" */
	for (i = 0;; i++) {
		s = take_field(s, field, sizeof(field));
		if (!s)
			return -EINVAL;
		if (i > 0 && !strcmp(field, "-"))
			break;
	}
	s = take_field(s, m->fstype, sizeof(m->fstype));
	if (!s)
		return -EINVAL;
	s = take_field(s, field, sizeof(field));	/* source */
	if (!s)
		return -EINVAL;
	s = take_field(s, m->super_opts, sizeof(m->super_opts));
	if (!s)
		return -EINVAL;
	return 0;
}

bool kb_opt_list_has(const char *opts, const char *opt)
{
	size_t len = strlen(opt);
	const char *p = opts;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && !strncmp(p, opt, len))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Next line of @text into @line; returns the rest or NULL at the end. */
static const char *next_line(const char *text, char *line, size_t size)
{
	const char *nl;
	size_t n;

	if (!text || !*text)
		return NULL;
	nl = strchr(text, '\n');
	n = nl ? (size_t)(nl - text) : strlen(text);
	snprintf(line, size, "%.*s", (int)n, text);
	return nl ? nl + 1 : text + n;
}

int kb_mountinfo_find_cgroups(const char *text, char *v2, size_t v2_size,
			      char *v1_memory, size_t v1_size)
{
	static struct kb_mount m;
	static char line[2 * PATH_MAX + 1024];
	int found = 0;

	if (v2 && v2_size)
		v2[0] = '\0';
	if (v1_memory && v1_size)
		v1_memory[0] = '\0';
	while ((text = next_line(text, line, sizeof(line)))) {
		if (kb_mountinfo_parse_line(line, &m))
			continue;
		if (v2 && !v2[0] && !strcmp(m.fstype, "cgroup2")) {
			snprintf(v2, v2_size, "%s", m.point);
			found++;
		} else if (v1_memory && !v1_memory[0] &&
			   !strcmp(m.fstype, "cgroup") &&
			   kb_opt_list_has(m.super_opts, "memory")) {
			snprintf(v1_memory, v1_size, "%s", m.point);
			found++;
		}
	}
	return found;
}

int kb_proc_cgroup_path(const char *text, enum kb_cgroup_version version,
			const char *controller, char *path, size_t size)
{
	char line[PATH_MAX + 256];

	while ((text = next_line(text, line, sizeof(line)))) {
		char *c1 = strchr(line, ':'), *c2;

		if (!c1)
			continue;
		c2 = strchr(c1 + 1, ':');
		if (!c2)
			continue;
		*c2 = '\0';
		if (version == KB_CGROUP_V2 ? !strcmp(line, "0:") &&
		    c1[1] == '\0' :
		    kb_opt_list_has(c1 + 1, controller)) {
			snprintf(path, size, "%s", c2 + 1);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- the memory controller ------------------------------------------- */

/* True when the space separated list in @path names @word. */
static bool file_has_word(const char *path, const char *word)
{
	char buf[1024], *tok, *save;

	if (kb_read_all(path, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

static char *read_proc_text(const char *path, size_t size)
{
	char *buf = malloc(size);
	ssize_t n;

	if (!buf)
		return NULL;
	n = kb_read_all(path, buf, size);
	if (n < 0) {
		free(buf);
		errno = (int)-n;
		return NULL;
	}
	return buf;
}

int kb_memcg_find(struct kb_memcg_mount *mnt)
{
	char v2[PATH_MAX], v1[PATH_MAX], ctl[PATH_MAX + 32];
	char *text = read_proc_text("/proc/self/mountinfo", 1 << 20);

	memset(mnt, 0, sizeof(*mnt));
	if (!text)
		return -errno;
	kb_mountinfo_find_cgroups(text, v2, sizeof(v2), v1, sizeof(v1));
	free(text);
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
	char *text = read_proc_text("/proc/self/cgroup", 1 << 16);
	char rel[PATH_MAX];
	int err;

	if (!text)
		return -errno;
	err = kb_proc_cgroup_path(text, mnt->version, "memory", rel,
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
		kb_write_str(cg->enabled_in, "-memory");
}

bool kb_cgroup_may_write(const char *path, char *why, size_t size)
{
	if (!faccessat(AT_FDCWD, path, W_OK, AT_EACCESS))
		return true;
	if (errno != EACCES && errno != EPERM && errno != EROFS) {
		snprintf(why, size, "%s: %s", path, strerror(errno));
		return false;
	}
	if (errno != EROFS && kb_have_cap(CAP_DAC_OVERRIDE))
		return true;
	if (errno == EROFS)
		snprintf(why, size, "%s is on a read-only file system", path);
	else
		snprintf(why, size, "no write access to %s (not its owner, no %s)",
			 path, kb_cap_name(CAP_DAC_OVERRIDE));
	return false;
}

/* cgroup v2: the controller must be enabled in the parent for children. */
static int enable_memory_in(const char *parent, struct kb_cgroup *cg)
{
	char ctl[PATH_MAX + 32];
	int err;

	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", parent);
	if (file_has_word(ctl, "memory"))
		return 0;
	err = kb_write_str(ctl, "+memory");
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
	kb_signals_block();
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
		kb_write_str(cg->enabled_in, "-memory");
		cg->enabled_in[0] = '\0';
	}
	kb_signals_unblock();
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
	return kb_write_str(path, num);
}

/* ---- stat files ------------------------------------------------------ */

/* Parse a decimal without sign; -EINVAL on anything else. */
static int parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static void set_why(char *why, size_t size, const char *what,
		    const char *line)
{
	if (why && size)
		snprintf(why, size, "%s: '%.80s'", what, line);
}

int kb_stat_parse(const char *text, struct kb_stat *st, char *why,
		  size_t why_size)
{
	char line[512], key[256], val[256], extra[8];

	st->n = 0;
	st->comments = 0;
	while ((text = next_line(text, line, sizeof(line)))) {
		struct kb_stat_entry *e;
		int fields;

		if (!line[0])
			continue;
		if (line[0] == '#') {
			st->comments++;
			continue;
		}
		fields = sscanf(line, "%255s %255s %7s", key, val, extra);
		if (fields != 2) {
			set_why(why, why_size, "not a 'key value' line", line);
			return -EINVAL;
		}
		if (strlen(key) >= KB_STAT_KEY_LEN) {
			set_why(why, why_size, "key too long", line);
			return -EINVAL;
		}
		if (st->n == KB_STAT_MAX_KEYS) {
			set_why(why, why_size, "too many keys", line);
			return -E2BIG;
		}
		e = &st->e[st->n];
		if (parse_u64(val, &e->value)) {
			set_why(why, why_size,
				"value is not a non-negative integer", line);
			return -EINVAL;
		}
		strcpy(e->key, key);
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
static int parse_node_token(const char *tok, int *node,
			    unsigned long long *value)
{
	char num[16];
	const char *eq = strchr(tok, '=');
	unsigned long long n;

	if (tok[0] != 'N' || !eq || eq - tok - 1 <= 0 ||
	    (size_t)(eq - tok - 1) >= sizeof(num))
		return -EINVAL;
	snprintf(num, sizeof(num), "%.*s", (int)(eq - tok - 1), tok + 1);
	if (parse_u64(num, &n) || n > 1 << 20 || parse_u64(eq + 1, value))
		return -EINVAL;
	*node = (int)n;
	return 0;
}

int kb_numa_line_parse(const char *line, struct kb_numa_line *l)
{
	char buf[4096], *tok, *save, *eq;

	memset(l, 0, sizeof(*l));
	snprintf(buf, sizeof(buf), "%s", line);
	tok = strtok_r(buf, " \n", &save);
	if (!tok)
		return -EINVAL;
	eq = strchr(tok, '=');
	if (eq) {		/* v1: key=total */
		*eq = '\0';
		if (parse_u64(eq + 1, &l->total))
			return -EINVAL;
		l->has_total = true;
	}
	if (!tok[0] || strlen(tok) >= sizeof(l->key))
		return -EINVAL;
	strcpy(l->key, tok);
	while ((tok = strtok_r(NULL, " \n", &save))) {
		if (l->nnodes == KB_NUMA_MAX_NODES)
			return -E2BIG;
		if (parse_node_token(tok, &l->node[l->nnodes],
				     &l->value[l->nnodes]))
			return -EINVAL;
		l->nnodes++;
	}
	return l->nnodes ? 0 : -EINVAL;
}

unsigned long long kb_numa_line_sum(const struct kb_numa_line *l)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < l->nnodes; i++)
		sum += l->value[i];
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
