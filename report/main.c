/* graphcheck-report's command line: options to an rp_options, then rp_run. An option is a
 * row of long_options, a case in parse_options and a line of the help text. */
#include "report/report.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/replay.h"

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif

static const char help_text[] =
    "usage: graphcheck-report [options] LOG...\n"
    "\n"
    "Reads graphcheck's JSON-lines logs (GRAPHCHECK_JSON_FILE or --json-file; several\n"
    "processes' %p files at once; - reads stdin), folds the records of one rule at one\n"
    "call site (the same backtrace) into one entry with a count, resolves frames to\n"
    "file:line in function from the modules' debug info, and writes a report.\n"
    "\n"
    "options:\n"
    "  -f, --format=FMT     text (default): a summary table, each entry in full, totals\n"
    "                       json: the folded entries as one JSON document\n"
    "                       sarif: SARIF 2.1.0, one result per entry\n"
    "                       junit: JUnit XML, a testcase per rule and per entry\n"
    "  -o, --output=FILE    write the report to FILE instead of stdout\n"
    "      --fail-on=LEVEL  error (default), warning or never: the severity at which\n"
    "                       records fail the gate (exit status 1)\n"
    "      --no-symbolize   show frames as module+offset without reading the modules\n"
    "      --replay         the inputs are traces (GRAPHCHECK_TRACE_FILE): feed their events\n"
    "                       through graphcheck's ledger and print the records a live run\n"
    "                       would have printed (text, or JSON lines with --format=json)\n"
    "      --suppressions=FILE  drop the records FILE's entries match (graphcheck's format,\n"
    "                       README.md); src:FILE:LINE lines match the resolved frames\n"
    "  -h, --help           show this text\n"
    "  -V, --version        show the version\n"
    "\n"
    "The totals line, \"graphcheck-report: N errors, M warnings (K records in F files)\",\n"
    "counts entries (distinct rule and call site) by severity, and the records read;\n"
    "\"; not a clean pass: ...\" follows when a log could not be read or was malformed.\n"
    "Malformed lines are named as FILE:LINE on stderr and skipped.\n"
    "\n"
    "exit status:\n"
    "  0  no record at or above the --fail-on level\n"
    "  1  records at or above the --fail-on level: the gate failed\n"
    "  2  usage error, or a log that cannot be opened or read, or an output that cannot\n"
    "     be written\n"
    "  3  malformed input seen (the good records are still reported)\n"
    "  When several apply, 2 wins over 3, and 3 over 1.\n";

enum { OPT_FAIL_ON = 256, OPT_NO_SYMBOLIZE, OPT_REPLAY, OPT_SUPPRESSIONS };

static const struct option long_options[] = {
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"fail-on", required_argument, NULL, OPT_FAIL_ON},
	{"no-symbolize", no_argument, NULL, OPT_NO_SYMBOLIZE},
	{"replay", no_argument, NULL, OPT_REPLAY},
	{"suppressions", required_argument, NULL, OPT_SUPPRESSIONS},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static int usage_error(const char *what, const char *arg)
{
	if (what)
		fprintf(stderr, "graphcheck-report: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	fputs("try 'graphcheck-report --help'\n", stderr);
	return RP_EXIT_USAGE;
}

static int replay_mode;

/* -1 to go on and run; otherwise the exit status (after --help, or a usage error). */
static int parse_options(int argc, char **argv, rp_options *o)
{
	*o = (rp_options){.format = "text", .fail_on = RP_FAIL_ERROR, .symbolize = true};
	int c;
	while ((c = getopt_long(argc, argv, "f:o:hV", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!rp_formatter(optarg))
				return usage_error("unknown format (text, json, sarif or junit)", optarg);
			o->format = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FAIL_ON:
			if (strcmp(optarg, "error") == 0)
				o->fail_on = RP_FAIL_ERROR;
			else if (strcmp(optarg, "warning") == 0)
				o->fail_on = RP_FAIL_WARNING;
			else if (strcmp(optarg, "never") == 0)
				o->fail_on = RP_FAIL_NEVER;
			else
				return usage_error("--fail-on takes error, warning or never", optarg);
			break;
		case OPT_NO_SYMBOLIZE:
			o->symbolize = false;
			break;
		case OPT_REPLAY:
			replay_mode = 1;
			break;
		case OPT_SUPPRESSIONS:
			if (!*optarg)
				return usage_error("--suppressions takes a file name", NULL);
			o->suppressions = optarg;
			break;
		case 'h':
			fputs(help_text, stdout);
			return RP_EXIT_OK;
		case 'V':
			printf("graphcheck-report %s\n", GC_VERSION);
			return RP_EXIT_OK;
		default:  /* getopt_long has said what was wrong */
			return usage_error(NULL, NULL);
		}
	}
	if (optind == argc)
		return usage_error("no log given (- reads stdin)", NULL);
	o->inputs = argv + optind;
	o->n_inputs = argc - optind;
	return -1;
}

/* --replay: each trace through the ledger; the exit statuses are the report's. */
static int replay(const rp_options *o)
{
	int json = strcmp(o->format, "json") == 0;
	if (!json && strcmp(o->format, "text") != 0)
		return usage_error("--replay writes text or json", o->format);
	FILE *out = o->output ? fopen(o->output, "w") : stdout;
	if (!out) {
		perror(o->output);
		return RP_EXIT_USAGE;
	}
	int rc = RP_EXIT_OK;
	unsigned long errors = 0, warnings = 0, events = 0, unreadable = 0, bad = 0;
	for (int i = 0; i < o->n_inputs; i++) {
		const char *name = o->inputs[i];
		FILE *in = strcmp(name, "-") ? fopen(name, "r") : stdin;
		if (!in) {
			fprintf(stderr, "graphcheck-report: %s: cannot open: %s\n", name, strerror(errno));
			rc = RP_EXIT_USAGE;
			unreadable++;
			continue;
		}
		gc_replay_result res;
		if (gc_replay(in, name, out, json, stderr, &res) != 0)
			rc = RP_EXIT_USAGE, unreadable++;
		else if (res.bad_lines && rc != RP_EXIT_USAGE)
			rc = RP_EXIT_MALFORMED;
		bad += res.bad_lines;
		errors += res.errors;
		warnings += res.warnings;
		events += res.events;
		if (in != stdin)
			fclose(in);
	}
	if (!json) {
		fprintf(out, "graphcheck-report: replayed %lu events: %lu errors, %lu warnings", events,
		        errors, warnings);
		if (rc != RP_EXIT_OK)  /* as the report's totals: never read as a pass alone */
			fprintf(out, "; not a clean pass: %lu traces unreadable, %lu malformed lines",
			        unreadable, bad);
		fputc('\n', out);
	}
	/* A full disk or /dev/full: said, and a failure, never a silent 0. */
	int werr = ferror(out) | (fflush(out) != 0);
	if ((out != stdout && fclose(out) != 0) || werr) {
		fprintf(stderr, "graphcheck-report: %s: cannot write the replay\n",
		        o->output ? o->output : "<stdout>");
		return RP_EXIT_USAGE;
	}
	int gate = (o->fail_on == RP_FAIL_ERROR && errors) ||
	           (o->fail_on == RP_FAIL_WARNING && (errors || warnings));
	return rc != RP_EXIT_OK ? rc : gate ? RP_EXIT_GATE : RP_EXIT_OK;
}

/* -o naming one of the inputs (the same file, through any path or link) would empty it
 * before it is read (--replay) or overwrite the log with its report. */
static bool output_is_input(const rp_options *o)
{
	struct stat out, in;
	if (!o->output || stat(o->output, &out) != 0 || !S_ISREG(out.st_mode))
		return false;
	for (int i = 0; i < o->n_inputs; i++)
		if ((strcmp(o->inputs[i], "-") ? stat(o->inputs[i], &in) : fstat(0, &in)) == 0 &&
		    in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			fprintf(stderr, "graphcheck-report: the output %s is the input %s; not "
			        "overwritten\n", o->output, o->inputs[i]);
			return true;
		}
	return false;
}

/* An input's file, for drop_repeated_inputs: named at index i. */
struct input_id {
	dev_t dev;
	ino_t ino;
	int i;
};

static int by_file_then_index(const void *pa, const void *pb)
{
	const struct input_id *a = pa, *b = pb;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* A log named twice (the same file through any path or link, or - twice: a shell glob and
 * an explicit name, `*.jsonl run.jsonl`) is read once: its records would count twice. Later
 * names are dropped from o->inputs (argv's tail, ours to reorder), the first kept in its
 * place. Each input is stat'ed once and the files sorted: a run's thousands of %p logs take
 * no longer than reading them. A name that cannot be stat'ed is kept once (its open says
 * why). */
static void drop_repeated_inputs(rp_options *o)
{
	int n = o->n_inputs;
	struct input_id *ids = malloc((size_t)n * sizeof(*ids));
	char *drop = calloc((size_t)n, 1);
	int n_ids = 0;
	if (!ids || !drop) {  /* without memory: every name read, as named */
		free(ids);
		free(drop);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		if ((strcmp(o->inputs[i], "-") ? stat(o->inputs[i], &st) : fstat(0, &st)) == 0) {
			ids[n_ids++] = (struct input_id){st.st_dev, st.st_ino, i};
			continue;
		}
		/* not there: the same name again is dropped (its open says why, once); these are
		 * few, so compared by name */
		for (int j = 0; j < i; j++)
			if (!drop[j] && !strcmp(o->inputs[j], o->inputs[i])) {
				drop[i] = 1;
				break;
			}
	}
	qsort(ids, (size_t)n_ids, sizeof(*ids), by_file_then_index);
	for (int k = 0, first = 0; k < n_ids; k++) {
		if (k == 0 || ids[k].dev != ids[first].dev || ids[k].ino != ids[first].ino) {
			first = k;  /* a file's first name: the lowest index, sorted first */
			continue;
		}
		const char *name = o->inputs[ids[k].i], *before = o->inputs[ids[first].i];
		drop[ids[k].i] = 1;
		if (strcmp(name, before))
			fprintf(stderr, "graphcheck-report: %s is %s, named before: read once\n", name,
			        before);
		else
			fprintf(stderr, "graphcheck-report: %s is named more than once: read once\n",
			        name);
	}
	int kept = 0;
	for (int i = 0; i < n; i++)
		if (!drop[i])
			o->inputs[kept++] = o->inputs[i];
	o->n_inputs = kept;
	free(ids);
	free(drop);
}

int main(int argc, char **argv)
{
	rp_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (output_is_input(&o))
		return RP_EXIT_USAGE;
	drop_repeated_inputs(&o);
	return replay_mode ? replay(&o) : rp_run(&o);
}
