/* fmt_pai.h - internal entry of the PAI reader for tests and the fuzzer:
 * open it on a job table with the task table from an input of the caller's
 * (memory, say) instead of a file found by path.
 */
#ifndef GPUPOOL_TRACE_FMT_PAI_H
#define GPUPOOL_TRACE_FMT_PAI_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/io.h"

/* Cap on distinct job names in a task table (the 2020 trace has 1.26 M). */
#define GP_PAI_MAX_JOBS (16u << 20)

/* Read all of `tasks` (positioned at its first member; closed by the
 * caller afterwards) and make a reader of `jobs` (positioned at its first
 * member) for gp_trace_reader_pai.next/close. With skip_bad, malformed task
 * rows are left out of the join instead of failing the open. */
int gp__pai_open_tasks(void **priv, struct gp_input *jobs,
                       struct gp_input *tasks, bool skip_bad,
                       struct gp_diag *diag);

/* The task table next to a job table: pai_task_table.csv, .csv.gz,
 * .csv.xz, .tar.gz or .csv.tar.gz in the directory of `job_path`, first
 * found in that order, into out. false when none exists (or it does not
 * fit). For whoever knows the job table's path (gp_trace_open) and was not
 * given opts->aux_path. */
bool gp__pai_find_task_table(const char *job_path, char *out, size_t size);

#endif
