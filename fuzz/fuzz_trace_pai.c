/* fuzz_trace_pai.c - any bytes through the PAI reader. A task table cannot
 * come from memory through the public API, so the input is split at the
 * first line "%%": the task table before it, the job table after it (no
 * "%%": all of it is the job table, joined against no tasks). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/fmt_pai.h"
#include "trace/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *find_sep(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 4 <= size; i++)
        if (memcmp(data + i, "\n%%\n", 4) == 0)
            return data + i;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *sep = find_sep(data, size);
    const uint8_t *jobs = sep ? sep + 4 : data;
    size_t njobs = sep ? size - (size_t)(sep + 4 - data) : size;
    size_t ntasks = sep ? (size_t)(sep - data) + 1 : 0;
    struct gp_input *ti = NULL, *ji = NULL;
    const char *member;
    bool skip_bad = size && (data[0] & 1);
    void *priv = NULL;

    if (gp_input_open_mem(&ti, data, ntasks, "tasks.csv", NULL) != GP_OK)
        return 0;
    if (gp_input_open_mem(&ji, jobs, njobs, "jobs.csv", NULL) != GP_OK ||
        gp_input_next_member(ti, &member, NULL) < 0 ||
        gp_input_next_member(ji, &member, NULL) != 1 ||
        gp__pai_open_tasks(&priv, ji, ti, skip_bad, NULL) != GP_OK)
        goto out;
    for (int i = 0; i < 1000000; i++) {
        struct gp_job_spec j;
        int rc = gp_trace_reader_pai.next(priv, &j, NULL);

        if (rc == 1 && (j.gpus < 1 || j.submit_us < 0 || j.duration_us <= 0))
            abort();
        if (rc == 0 || (rc < 0 && rc != GP_EPARSE))
            break;
    }
    gp_trace_reader_pai.close(priv);
out:
    gp_input_close(ti);
    gp_input_close(ji);
    return 0;
}
