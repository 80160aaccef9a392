// SPDX-License-Identifier: GPL-2.0
/*
 * pmqtest's results: the kbench row of a pair, what is wrong with a pair,
 * and the rt-tests 2.4 JSON layout written next to the kbench rows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <string.h>
#include <time.h>

#include "pmq.h"
#include "rtsched.h"

#define RT_TESTS_LAYOUT		"2.40"	/* the rt-tests JSON layout we write */

static const char *const stop_names[] = {
	"running", "loops", "duration", "signal", "breaktrace", "error",
};

static const char *const placement_names[] = {
	"scheduler", "cpu", "spread", "split",
};

const char *pmq_placement_name(enum pmq_placement where)
{
	return placement_names[where];
}

void pmq_pair_row(const char *name, const struct pmq_pair *p)
{
	struct kb_stats st;

	if (kb_hist_stats(&p->hist, 1.0 / NSEC_PER_USEC, &st))
		return;
	kb_results_row(name, "us", &st);
	kb_results_figure(name, "cpu=%d prio=%d interval_us=%llu cycles=%llu timeouts=%llu p50=%.3f p99=%.3f p999=%.3f max=%.3f sender_cpu=%d cross_cpu_cycles=%llu",
			  p->receiver_cpu, p->prio,
			  (unsigned long long)(p->interval_ns / NSEC_PER_USEC),
			  (unsigned long long)p->hist.count,
			  (unsigned long long)p->timeouts, st.median, st.p99,
			  st.p999, st.max, p->sender_cpu,
			  (unsigned long long)p->cross_cpu);
	/* The same figures again in the JSON row, without more lines. */
	kb_results_extra_quiet("cpu", p->receiver_cpu);
	kb_results_extra_quiet("prio", p->prio);
	kb_results_extra_quiet("interval_us",
			       (double)(p->interval_ns / NSEC_PER_USEC));
	kb_results_extra_quiet("cycles", (double)p->hist.count);
	kb_results_extra_quiet("timeouts", (double)p->timeouts);
	kb_results_extra_quiet("sender_cpu", p->sender_cpu);
	kb_results_extra_quiet("cross_cpu_cycles", (double)p->cross_cpu);
}

const char *pmq_pair_problem(const struct pmq_pair *p, double max_latency_us,
			     long long want_timeouts, char *why, size_t len)
{
	const struct kb_hist *h = &p->hist;
	const struct pmq_run *r = p->run;
	bool all_cycles = r->stop == PMQ_STOP_DONE && !r->cfg.stop_at_first;
	double mean = kb_hist_mean(h);

	if (p->err) {
		snprintf(why, len, "%s: %s", p->err_what, strerror(p->err));
		return why;
	}
	if (p->loops && all_cycles &&
	    (h->count != p->loops || p->samples != p->loops)) {
		snprintf(why, len, "sent %llu and received %llu of %llu cycles",
			 (unsigned long long)p->samples,
			 (unsigned long long)h->count,
			 (unsigned long long)p->loops);
		return why;
	}
	if (!h->count && !all_cycles)
		return NULL;
	if (!h->count) {
		snprintf(why, len, "no latency sample");
		return why;
	}
	if (!(h->min > 0 && (double)h->min <= mean && mean <= (double)h->max)) {
		snprintf(why, len,
			 "inconsistent figures: min %llu ns, mean %.1f ns, max %llu ns",
			 (unsigned long long)h->min, mean,
			 (unsigned long long)h->max);
		return why;
	}
	if (max_latency_us > 0 &&
	    (double)h->max / NSEC_PER_USEC > max_latency_us) {
		snprintf(why, len, "max latency %.3f us exceeds --max-latency=%g us",
			 (double)h->max / NSEC_PER_USEC, max_latency_us);
		return why;
	}
	if (want_timeouts >= 0)
		return pmq_timeouts_problem(p, want_timeouts, want_timeouts,
					    why, len);
	return NULL;
}

const char *pmq_timeouts_problem(const struct pmq_pair *p, long long least,
				 long long most, char *why, size_t len)
{
	if (p->timeouts >= (uint64_t)least && p->timeouts <= (uint64_t)most)
		return NULL;
	if (least == most)
		snprintf(why, len, "counted %llu timeouts, expected %lld",
			 (unsigned long long)p->timeouts, least);
	else
		snprintf(why, len, "counted %llu timeouts, expected %lld to %lld",
			 (unsigned long long)p->timeouts, least, most);
	return why;
}

/* ---- JSON: the rt-tests 2.4 layout next to the kbench rows ----------- */

struct rt_tests_doc {
	const struct pmq_run *run;
	const char *mode;
	int return_code;
};

static struct rt_tests_doc rt_doc;

static void json_num_us(FILE *f, const char *key, double ns)
{
	fprintf(f, ", \"%s\": ", key);
	if (isfinite(ns))
		fprintf(f, "%.3f", ns / NSEC_PER_USEC);
	else
		fputs("null", f);
}

static void json_histogram(FILE *f, const struct kb_hist_linear *lh)
{
	size_t b;

	fputs(", \"histogram\": {\"bucket_us\": 1, \"counts\": [", f);
	for (b = 0; b < lh->nbuckets; b++)
		fprintf(f, "%s%llu", b ? ", " : "",
			(unsigned long long)lh->counts[b]);
	fprintf(f, "], \"overflow\": %llu}", (unsigned long long)lh->overflow);
}

static void json_pair(FILE *f, const struct pmq_pair *p)
{
	const struct kb_hist *h = &p->hist;

	fprintf(f, "    \"%d\": {\n      \"sender\": {\"cpu\": %d, \"priority\": %d, \"samples\": %llu, \"interval\": %llu, \"tid\": %d},\n",
		p->index, p->sender_cpu, p->prio,
		(unsigned long long)p->samples,
		(unsigned long long)(p->interval_ns / NSEC_PER_USEC),
		p->sender_tid);
	fprintf(f, "      \"receiver\": {\"cpu\": %d, \"priority\": %d, \"timeoutcount\": %llu, \"min\": %llu, \"avg\": %.2f, \"max\": %llu",
		p->receiver_cpu, p->prio, (unsigned long long)p->timeouts,
		(unsigned long long)pmq_us_round(h->count ? h->min : 0),
		h->count ? kb_hist_mean(h) / NSEC_PER_USEC : 0.0,
		(unsigned long long)pmq_us_round(h->max));
	fprintf(f, ", \"tid\": %d, \"cycles\": %llu", p->receiver_tid,
		(unsigned long long)h->count);
	json_num_us(f, "min_us", h->count ? (double)h->min : NAN);
	json_num_us(f, "avg_us", kb_hist_mean(h));
	json_num_us(f, "max_us", h->count ? (double)h->max : NAN);
	json_num_us(f, "stddev_us", kb_hist_stddev(h));
	json_num_us(f, "p50_us", kb_hist_percentile(h, 50));
	json_num_us(f, "p99_us", kb_hist_percentile(h, 99));
	json_num_us(f, "p999_us", kb_hist_percentile(h, 99.9));
	if (p->lhist.counts)
		json_histogram(f, &p->lhist);
	fputs("}\n    }", f);
}

static void json_pmqtest(FILE *f, const struct pmq_run *r, const char *mode)
{
	const struct pmq_host *h = r ? r->host : NULL;

	fputs("  \"pmqtest\": {\"clock\": \"" KB_CLOCK_NAME "\", \"resolution_ns\": 1", f);
	fprintf(f, ", \"mode\": \"%s\", \"stopped_by\": \"%s\", \"mlocked\": %s",
		mode, r ? stop_names[r->stop] : "error",
		h && h->mlocked ? "true" : "false");
	if (!r)
		goto out;
	fprintf(f, ", \"timeout_s\": %.6g, \"forcetimeout_s\": %.6g, \"duration_s\": %.3f",
		(double)r->timeout_ns / NSEC_PER_SEC,
		(double)r->force_ns / NSEC_PER_SEC,
		(double)(r->end_ns - r->start_ns) / NSEC_PER_SEC);
	fprintf(f, ", \"placement\": \"%s\", \"warmup_cycles\": %lld",
		pmq_placement_name(r->cfg.placement), r->cfg.warmup);
out:
	fputs("}", f);
}

static void json_rt_tests(FILE *f, void *arg)
{
	const struct rt_tests_doc *d = arg;
	const struct pmq_run *r = d->run;
	char end[64];
	time_t now = time(NULL);
	struct tm tm;
	int i;

	localtime_r(&now, &tm);
	strftime(end, sizeof(end), "%a, %d %b %Y %H:%M:%S %z", &tm);
	fputs("  \"file_version\": 1,\n  \"cmdline:\": ", f);
	kb_json_string(f, kb_results_cmdline());
	fputs(",\n  \"rt_test_version:\": \"" RT_TESTS_LAYOUT "\",\n  \"start_time\": ", f);
	kb_json_string(f, r ? r->host->start_time : "");
	fputs(",\n  \"end_time\": ", f);
	kb_json_string(f, end);
	fprintf(f, ",\n  \"return_code\": %d,\n  \"sysinfo\": {",
		d->return_code);
	kb_json_uname(f);
	fprintf(f, ", \"realtime\": %d},\n", kb_rtsched_kernel_realtime());
	fprintf(f, "  \"num_threads\": %d,\n  \"thread\": {\n", r ? r->npairs : 0);
	for (i = 0; r && i < r->npairs; i++) {
		json_pair(f, &r->pairs[i]);
		fputs(i + 1 < r->npairs ? ",\n" : "\n", f);
	}
	fputs("  },\n", f);
	json_pmqtest(f, r, d->mode);
}

void pmq_json_rt_tests(const struct pmq_run *r, const char *mode,
		       int return_code)
{
	rt_doc.run = r;
	rt_doc.mode = mode;
	rt_doc.return_code = return_code;
	kb_results_json_extra(json_rt_tests, &rt_doc);
}
