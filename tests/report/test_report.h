/* Shared by the tests/test_report*.c files: one cmocka binary, a group per file. */
#ifndef RP_TEST_REPORT_H
#define RP_TEST_REPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report/report.h"

/* The groups; main() in tests/test_report.c runs each and adds up the failures. */
int rp_test_read_group(void);
int rp_test_fold_group(void);
int rp_test_format_group(void);
int rp_test_symbolize_group(void);

/* A log read from memory (through a temporary file, so NUL bytes and a missing last
 * newline reach the reader as they would from disk), folded, with the messages kept. */
typedef struct rp_test_log {
	rp_reader rd;
	rp_fold fold;
	char *diag;
	size_t diag_len;
	FILE *diag_f;
} rp_test_log;

void rp_test_log_init(rp_test_log *t);
void rp_test_log_read(rp_test_log *t, const char *name, const void *data, size_t len);
void rp_test_log_read_file(rp_test_log *t, const char *path);
/* Closes the message stream (so t->diag is complete) and sorts the fold. */
void rp_test_log_finish(rp_test_log *t);
void rp_test_log_free(rp_test_log *t);

/* A well-formed violation line (with its newline) of rule, whose first frame is at
 * module+offset; malloc'd. */
char *rp_test_line(const char *rule, unsigned seq, const char *module, uint64_t offset);

/* The whole of a file, NUL-terminated, malloc'd; NULL when it cannot be read. */
char *rp_test_slurp(const char *path, size_t *len);

#endif
