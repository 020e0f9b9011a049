/* bench_db.c - submits per second into the daemon's store, by group
 * commit size and synchronous mode.
 *
 * A submit is what the daemon writes for one accepted job: the job's row
 * (with a ~300-byte request as spec_json) and its "submitted" event. The
 * loop puts `batch` submits in one transaction (group commit), so one
 * commit (one fsync of the WAL under synchronous=FULL) acknowledges them
 * all. Cases: FULL and NORMAL x batches of 1, 10 and 100; each on a fresh
 * store, for --seconds or --max-jobs, whichever comes first.
 *
 * The figures depend on the disk under --dir far more than on the CPU:
 * FULL pays an fsync per commit. The file system type is printed; tmpfs
 * makes an fsync free and the FULL figures meaningless.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>

#include "bench_util.h"
#include "daemon/db.h"

#define PROG "bench_db"

struct opts {
    const char *dir;
    double seconds;
    uint64_t max_jobs;
};

struct result {
    uint64_t jobs, commits;
    double wall_s;
};

static void rm_store(const char *path)
{
    const char *suffix[] = {"", "-wal", "-shm"};
    char p[512];

    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
        unlink(p);
    }
}

static int run_case(const struct opts *o, const char *path,
                    enum gp_db_sync sync, uint32_t batch, struct result *res)
{
    struct gp_db_options dbo = {.sync = sync};
    struct gp_diag d = {{0}, {0}};
    struct gp_db *db;
    char spec[512], ext[32];
    double t0, t1;
    int rc;

    rm_store(path);
    if ((rc = gp_db_open(&db, path, &dbo, &d)) != GP_OK)
        goto fail;
    memset(res, 0, sizeof(*res));
    t0 = bench_now_s();
    t1 = t0;
    while (t1 - t0 < o->seconds && res->jobs < o->max_jobs) {
        if ((rc = gp_db_begin(db, &d)) != GP_OK)
            goto fail;
        for (uint32_t i = 0; i < batch; i++) {
            uint64_t n = res->jobs + i;
            struct gp_db_job j = {
                .ext = ext,
                .tenant = "vision",
                .user = "ada",
                .uid = 1000,
                .gid = 1000,
                .name = "train",
                .spec_json = spec,
                .state = GP_JOB_PENDING,
                .submit_us = (int64_t)n,
                .queued_us = (int64_t)n,
                .first_start_us = GP_TIME_NONE,
                .end_us = GP_TIME_NONE,
                .exit_code = GP_DB_NO_EXIT,
                .updated_us = (int64_t)n,
            };
            struct gp_db_event ev = {.ts_us = (int64_t)n, .kind = "submitted"};

            snprintf(ext, sizeof(ext), "c%" PRIu64, n);
            snprintf(spec, sizeof(spec),
                     "{\"argv\":[\"python\",\"train.py\",\"--epochs\",\"90\","
                     "\"--seed\",\"%" PRIu64
                     "\"],\"env\":{\"PATH\":\"/usr/bin:/bin\",\"HOME\":"
                     "\"/home/ada\"},\"cwd\":\"/home/ada/resnet\",\"gpus\":4,"
                     "\"cpus\":16,\"mem_mib\":65536,\"priority\":0,"
                     "\"checkpointable\":true,\"time_limit_s\":86400,"
                     "\"gpu_type\":\"a100\"}",
                     n);
            if ((rc = gp_db_job_insert(db, &j, &ev.job_id, &d)) != GP_OK ||
                (rc = gp_db_event_append(db, &ev, NULL, &d)) != GP_OK)
                goto fail;
        }
        if ((rc = gp_db_commit(db, &d)) != GP_OK)
            goto fail;
        res->jobs += batch;
        res->commits++;
        t1 = bench_now_s();
    }
    res->wall_s = t1 - t0;
    gp_db_close(db);
    rm_store(path);
    return 0;
fail:
    fprintf(stderr, PROG ": %s: %s: %s\n", gp_err_name(rc), d.where, d.msg);
    gp_db_close(db);
    rm_store(path);
    return -1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [--dir DIR] [--seconds S] [--max-jobs N]\n"
            "  --dir DIR       where the stores go (default $TMPDIR or /tmp)\n"
            "  --seconds S     per case (default 2)\n"
            "  --max-jobs N    per case (default 200000)\n");
}

int main(int argc, char **argv)
{
    enum { O_DIR = 256, O_SECONDS, O_MAX };
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, O_DIR},
        {"seconds", required_argument, NULL, O_SECONDS},
        {"max-jobs", required_argument, NULL, O_MAX},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const uint32_t batches[] = {1, 10, 100};
    const char *tmp = getenv("TMPDIR");
    struct opts o = {tmp && *tmp ? tmp : "/tmp", 2, 200000};
    struct result res[2][3];
    char dir[400], path[450], *end;
    int ch, failed = 0;

    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_DIR:
            o.dir = optarg;
            break;
        case O_SECONDS:
            o.seconds = strtod(optarg, &end);
            if (end == optarg || *end || !(o.seconds > 0 && o.seconds <= 600)) {
                fprintf(stderr,
                        PROG ": --seconds: expected a number in (0, 600], "
                             "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_MAX:
            if (bench_parse_u64(PROG, "max-jobs", optarg, 100, 100000000,
                                &o.max_jobs))
                return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    snprintf(dir, sizeof(dir), "%s/bench-db-XXXXXX", o.dir);
    if (!mkdtemp(dir)) {
        fprintf(stderr, PROG ": mkdtemp %s: %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof(path), "%s/store.db", dir);
    printf(PROG ": stores in %s (%s), %.1f s or %" PRIu64 " jobs per case\n",
           dir, bench_fs_name(dir), o.seconds, o.max_jobs);
    for (int s = 0; s < 2; s++) {
        for (int b = 0; b < 3; b++) {
            struct result *r = &res[s][b];

            if (run_case(&o, path, s ? GP_DB_SYNC_NORMAL : GP_DB_SYNC_FULL,
                         batches[b], r) != 0) {
                failed = 1;
                memset(r, 0, sizeof(*r));
                continue;
            }
            printf("sync=%s batch=%u: jobs=%" PRIu64 " commits=%" PRIu64
                   " wall_s=%.2f submits_per_s=%.0f commit_ms=%.3f\n",
                   s ? "normal" : "full", batches[b], r->jobs, r->commits,
                   r->wall_s, (double)r->jobs / r->wall_s,
                   1e3 * r->wall_s / (double)r->commits);
            fflush(stdout);
        }
    }
    printf("\nsubmits/s       batch=1  batch=10  batch=100\n");
    for (int s = 0; s < 2; s++) {
        printf("%-12s", s ? "NORMAL" : "FULL");
        for (int b = 0; b < 3; b++)
            printf(" %9.0f", res[s][b].wall_s > 0
                                 ? (double)res[s][b].jobs / res[s][b].wall_s
                                 : 0.0);
        printf("\n");
    }
    rmdir(dir);
    return failed;
}
