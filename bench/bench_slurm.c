/* bench_slurm.c - what talking to Slurm through its commands costs
 * (src/backend/slurm.h), on a running cluster: SLURM_CONF set, nodes n1..
 * with free CPUs (scripts/slurm-cluster.sh start DIR, then run this under
 * `slurm-cluster.sh exec DIR --`).
 *
 * N held one-CPU jobs are submitted (sbatch), each is placed and released
 * (scontrol update + scontrol release), and all are waited for; squeue
 * --json and sinfo --json are timed with the N jobs known. Per call: the
 * median and p99 in ms; end to end: jobs/s from the first release to the
 * last job done. The same steps through libslurm are in docs/slurm.md.
 *
 * Usage: bench_slurm [--jobs N] [--nodes K]   (default 200 jobs, 4 nodes)
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/slurm.h"
#include "bench_util.h"

#define PROG "bench_slurm"

static double now_ms(void)
{
    return bench_now_s() * 1e3;
}

static void report(const char *what, double *v, size_t n)
{
    printf("%-44s n=%-5zu p50_ms=%7.2f p99_ms=%7.2f\n", what, n,
           bench_quantile(v, n, 0.5), bench_quantile(v, n, 0.99));
}

static void die(const char *what, int rc, const struct gp_diag *d)
{
    char buf[600];
    fprintf(stderr, "bench_slurm: %s: %s\n", what,
            gp_diag_format(d, rc, buf, sizeof(buf)));
    exit(1);
}

int main(int argc, char **argv)
{
    uint64_t njobs = 200, nnodes = 4;
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"nodes", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j' &&
            bench_parse_u64(PROG, "--jobs", optarg, 1, 100000, &njobs) == 0)
            continue;
        if (c == 'n' &&
            bench_parse_u64(PROG, "--nodes", optarg, 1, 10000, &nnodes) == 0)
            continue;
        if (c != 'j' && c != 'n')
            fprintf(stderr, "usage: " PROG " [--jobs N] [--nodes K]\n");
        return 2;
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    struct gp_slurm *s = NULL;
    struct gp_diag d = {0};
    int rc;
    if ((rc = gp_slurm_open(&s, NULL, &d)) != GP_OK)
        die("open", rc, &d);
    uint32_t *ids = calloc(njobs, sizeof(*ids));
    double *t = calloc(njobs, sizeof(*t));
    if (!ids || !t)
        return 1;
    char out[64];
    snprintf(out, sizeof(out), "/dev/null");
    struct gp_slurm_submit sub = {
        .script = "#!/bin/sh\ntrue\n",
        .name = "bench",
        .output = out,
        .workdir = "/tmp",
        .nodes = 1,
        .cpus_per_node = 1,
        .mem_per_node_mib = 100,
        .uid = -1,
        .gid = -1,
    };
    for (unsigned i = 0; i < njobs; i++) {
        double t0 = now_ms();
        if ((rc = gp_slurm_submit_held(s, &sub, &ids[i], &d)) != GP_OK)
            die("submit", rc, &d);
        t[i] = now_ms() - t0;
    }
    report("submit held (sbatch)", t, njobs);

    struct gp_slurm_job *jobs = NULL;
    size_t n = 0;
    double q[20];
    for (int k = 0; k < 20; k++) {
        double t0 = now_ms();
        if ((rc = gp_slurm_jobs(s, &jobs, &n, &d)) != GP_OK)
            die("squeue", rc, &d);
        q[k] = now_ms() - t0;
        free(jobs);
    }
    char what[80];
    snprintf(what, sizeof(what), "jobs (squeue --json, %zu jobs)", n);
    report(what, q, 20);
    struct gp_slurm_node *nodes = NULL;
    for (int k = 0; k < 20; k++) {
        double t0 = now_ms();
        if ((rc = gp_slurm_nodes(s, &nodes, &n, &d)) != GP_OK)
            die("sinfo", rc, &d);
        q[k] = now_ms() - t0;
        free(nodes);
    }
    snprintf(what, sizeof(what), "nodes (sinfo --json + topology, %zu)", n);
    report(what, q, 20);

    double first = now_ms();
    for (unsigned i = 0; i < njobs; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%u", 1 + i % (unsigned)nnodes);
        const char *list[] = {name};
        double t0 = now_ms();
        if ((rc = gp_slurm_place(s, ids[i], list, 1, &d)) != GP_OK)
            die("place", rc, &d);
        t[i] = now_ms() - t0;
    }
    report("place (scontrol update + release)", t, njobs);
    unsigned done = 0;
    while (done < njobs && now_ms() - first < 600e3) {
        usleep(100000);
        if ((rc = gp_slurm_jobs(s, &jobs, &n, &d)) != GP_OK)
            die("squeue", rc, &d);
        done = 0;
        for (size_t i = 0; i < n; i++)
            for (unsigned k = 0; k < njobs; k++)
                if (jobs[i].id == ids[k] &&
                    gp_slurm_jstate_final(jobs[i].state))
                    done++;
        free(jobs);
    }
    double span = (now_ms() - first) / 1e3;
    printf("end to end: %u of %u jobs done %.1f s after the first release: "
           "%.1f jobs/s\n",
           done, (unsigned)njobs, span, done / span);
    free(ids);
    free(t);
    gp_slurm_close(s);
    return done == njobs ? 0 : 1;
}
