// SPDX-License-Identifier: GPL-2.0
/*
 * Writing JSON values. See json.h.
 */
#include "json.h"
#include "compat.h"

#include <math.h>
#include <sys/utsname.h>

void kb_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void kb_json_number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

void kb_json_members(FILE *f, const struct kb_json_member *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		kb_json_string(f, m[i].key);
		fputs(": ", f);
		kb_json_string(f, m[i].value);
	}
}

void kb_json_uname(FILE *f)
{
	struct utsname u;
	/* Filled by uname() below: the arrays' addresses are known now. */
	const struct kb_json_member kv[] = {
		{ "sysname", u.sysname }, { "nodename", u.nodename },
		{ "release", u.release }, { "version", u.version },
		{ "machine", u.machine },
	};

	uname(&u);
	kb_json_members(f, kv, ARRAY_SIZE(kv));
}
