/* slurm_client.c - gpupool's Slurm client against a real Slurm cluster
 * (tests/integration/slurm.sh starts one with scripts/slurm-cluster.sh:
 * four nodes of 4 GPUs, leaf0 = n[1-2], leaf1 = n[3-4]).
 *
 * The path a preempted gang takes: submitted held, placed on both nodes of
 * one leaf switch, signalled (every step), checkpointed, requeued held,
 * placed on the other leaf, resumed from its checkpoint, completed. Then a
 * drained node is seen, a held job is cancelled, and each call's cost is
 * printed (docs/slurm.md quotes them).
 *
 * Slurm's own record of the runs (jobcomp/filetxt) is read back last: two
 * lines for the gang (the requeued run, the last run) with the same
 * start and end times squeue gave.
 *
 * Usage: slurm_client WORKDIR JOBCOMP_LOG   (SLURM_CONF set; WORKDIR shared
 * with the jobs)
 * Prints one line per check and "N passed, N failed"; exit 1 on a failure.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/slurm.h"

static int passed, failed;

static void check(bool ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (ok)
        passed++;
    else
        failed++;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, int rc, const struct gp_diag *d)
{
    char buf[600];
    printf("FAIL: %s: %s\n", what, gp_diag_format(d, rc, buf, sizeof(buf)));
    printf("%d passed, %d failed\n", passed, failed + 1);
    exit(1);
}

static struct gp_slurm_job find_job(struct gp_slurm *s, uint32_t id)
{
    struct gp_slurm_job *v = NULL, j = {0};
    size_t n = 0;
    struct gp_diag d = {0};
    int rc = gp_slurm_jobs(s, &v, &n, &d);
    if (rc != GP_OK)
        die("squeue", rc, &d);
    for (size_t i = 0; i < n; i++)
        if (v[i].id == id)
            j = v[i];
    free(v);
    return j;
}

/* Poll until the job is in one of the states (or the timeout, seconds). */
static struct gp_slurm_job wait_job(struct gp_slurm *s, uint32_t id,
                                    bool (*ok)(const struct gp_slurm_job *),
                                    double timeout_s, double *took_ms)
{
    double t0 = now_ms();
    struct gp_slurm_job j;
    do {
        j = find_job(s, id);
        if (ok(&j))
            break;
        usleep(20000);
    } while (now_ms() - t0 < timeout_s * 1e3);
    if (took_ms)
        *took_ms = now_ms() - t0;
    return j;
}

static bool is_running(const struct gp_slurm_job *j)
{
    return j->state == GP_SJ_RUNNING && j->nodes[0];
}
static bool is_held(const struct gp_slurm_job *j)
{
    return j->state == GP_SJ_PENDING && j->held;
}
static bool is_final(const struct gp_slurm_job *j)
{
    return gp_slurm_jstate_final(j->state);
}

static bool file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[512];
    bool found = false;
    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

static const char script_fmt[] =
    "#!/bin/sh\n"
    "ck=%s/ckpt-$SLURM_JOB_ID\n"
    "step=$(cat \"$ck\" 2>/dev/null || echo 0)\n"
    "echo \"start restart=${SLURM_RESTART_COUNT:-0} "
    "nodes=$SLURM_JOB_NODELIST step=$step\"\n"
    "srun -l sh -c 'echo \"$(hostname -s) $SLURMD_NODENAME "
    "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"'\n"
    "trap 'echo $step > \"$ck\"; echo \"checkpoint at $step\"; exit 0' "
    "USR1\n"
    "while [ $step -lt 40 ]; do sleep 0.1; step=$((step+1)); done\n"
    "echo \"done at $step\"\n";

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: slurm_client WORKDIR JOBCOMP_LOG\n");
        return 2;
    }
    const char *dir = argv[1], *comp_log = argv[2];
    struct gp_slurm *s = NULL;
    struct gp_diag d = {0};
    int rc;
    double t0, took;

    t0 = now_ms();
    if ((rc = gp_slurm_open(&s, NULL, &d)) != GP_OK)
        die("open", rc, &d);
    printf("cost: open (sinfo --version, scontrol ping) %.1f ms; Slurm %s\n",
           now_ms() - t0, gp_slurm_version(s));

    /* discovery */
    struct gp_slurm_node *nodes = NULL;
    size_t nn = 0;
    t0 = now_ms();
    if ((rc = gp_slurm_nodes(s, &nodes, &nn, &d)) != GP_OK)
        die("nodes", rc, &d);
    printf("cost: nodes (sinfo --json, scontrol show topology) %.1f ms\n",
           now_ms() - t0);
    uint32_t gpus = 0;
    for (size_t i = 0; i < nn; i++)
        gpus += nodes[i].gpus;
    check(nn == 4 && gpus == 16, "4 nodes, 16 GPUs (saw %zu, %u)", nn, gpus);
    check(nn == 4 && !strcmp(nodes[0].leaf, "leaf0") &&
              !strcmp(nodes[3].leaf, "leaf1"),
          "leaf switches from the topology (%s, %s)", nn ? nodes[0].leaf : "",
          nn == 4 ? nodes[3].leaf : "");
    check(nn == 4 && !strcmp(nodes[0].gpu_type, "v100") &&
              nodes[0].avail == GP_SLURM_UP,
          "GPU type and state (%s, %s)", nn ? nodes[0].gpu_type : "",
          nn ? nodes[0].state : "");
    free(nodes);

    /* a gang, held */
    char script[2048], out[1024];
    snprintf(script, sizeof(script), script_fmt, dir);
    snprintf(out, sizeof(out), "%s/gang-%%j.out", dir);
    struct gp_slurm_submit sub = {
        .script = script,
        .name = "gang",
        .account = "research",
        .comment = "gpupool:1",
        .workdir = dir,
        .output = out,
        .nodes = 2,
        .gpus_per_node = 2,
        .gpu_type = "v100",
        .time_limit_min = 10,
        .uid = -1,
        .gid = -1,
    };
    uint32_t id = 0, gang;
    int64_t run1_start, run1_end;
    t0 = now_ms();
    if ((rc = gp_slurm_submit_held(s, &sub, &id, &d)) != GP_OK)
        die("submit", rc, &d);
    printf("cost: submit held (sbatch) %.1f ms\n", now_ms() - t0);
    struct gp_slurm_job j = find_job(s, id);
    check(is_held(&j) && j.node_count == 2 && j.gpus_per_node == 2 &&
              !strcmp(j.gpu_type, "v100") && !strcmp(j.comment, "gpupool:1"),
          "job %u held: %s %s, %u nodes x %u %s GPUs, comment %s", id,
          j.state_name, j.reason, j.node_count, j.gpus_per_node, j.gpu_type,
          j.comment);

    /* placed under leaf0 */
    const char *leaf0[] = {"n1", "n2"}, *leaf1[] = {"n3", "n4"};
    t0 = now_ms();
    if ((rc = gp_slurm_place(s, id, leaf0, 2, &d)) != GP_OK)
        die("place", rc, &d);
    printf("cost: place (scontrol update + release) %.1f ms\n", now_ms() - t0);
    j = wait_job(s, id, is_running, 20, &took);
    check(is_running(&j) && !strcmp(j.nodes, "n[1-2]"),
          "runs on n[1-2] (%s, %s), %.0f ms after the release", j.state_name,
          j.nodes, took);
    gang = id;
    run1_start = j.start_s;
    printf("note: release -> RUNNING %.0f ms (slurmctld's pass)\n", took);

    /* preempted with a checkpoint */
    usleep(800000);
    char ck[1024];
    snprintf(ck, sizeof(ck), "%s/ckpt-%u", dir, id);
    int64_t signalled = (int64_t)time(NULL);
    t0 = now_ms();
    if ((rc = gp_slurm_signal(s, id, SIGUSR1, &d)) != GP_OK)
        die("signal", rc, &d);
    printf("cost: signal (scancel --signal --full) %.1f ms\n", now_ms() - t0);
    while (access(ck, F_OK) != 0 && now_ms() - t0 < 10000)
        usleep(10000);
    check(access(ck, F_OK) == 0, "checkpoint written %.0f ms after the signal",
          now_ms() - t0);
    t0 = now_ms();
    if ((rc = gp_slurm_requeue_hold(s, id, &d)) != GP_OK)
        die("requeuehold", rc, &d);
    printf("cost: requeue held (scontrol requeuehold) %.1f ms\n",
           now_ms() - t0);
    j = wait_job(s, id, is_held, 20, &took);
    run1_end = (int64_t)time(NULL); /* squeue has no end for a past run */
    check(is_held(&j) && j.restarts == 1,
          "requeued held (%s %s, restart_cnt %u) in %.0f ms", j.state_name,
          j.reason, j.restarts, took);

    /* placed again, on the other leaf */
    if ((rc = gp_slurm_place(s, id, leaf1, 2, &d)) != GP_OK)
        die("place again", rc, &d);
    j = wait_job(s, id, is_running, 20, &took);
    check(is_running(&j) && !strcmp(j.nodes, "n[3-4]"),
          "runs again on n[3-4] (%s, %s) %.0f ms after the release: no "
          "121 s requeue delay",
          j.state_name, j.nodes, took);
    j = wait_job(s, id, is_final, 30, &took);
    check(j.state == GP_SJ_COMPLETED && j.exit_status == 0,
          "completed (%s, exit %d)", j.state_name, j.exit_status);
    struct gp_slurm_job last = j;
    char outp[1024];
    snprintf(outp, sizeof(outp), "%s/gang-%u.out", dir, id);
    check(file_has(outp, "start restart=1 nodes=n[3-4] step="),
          "resumed on n[3-4] with restart count 1 (%s)", outp);
    check(!file_has(outp, "start restart=1 nodes=n[3-4] step=0"),
          "from its checkpoint, not step 0");
    check(file_has(outp, "CUDA_VISIBLE_DEVICES=0,1"),
          "Slurm bound 2 GPUs on each node (CUDA_VISIBLE_DEVICES=0,1)");
    check(file_has(outp, "done at 40"), "ran to its end");

    /* a node drained is seen */
    if ((rc = gp_slurm_node_state(s, "n4", "DRAIN", "gpupool test", &d)) !=
        GP_OK)
        die("drain", rc, &d);
    if ((rc = gp_slurm_nodes(s, &nodes, &nn, &d)) != GP_OK)
        die("nodes", rc, &d);
    check(nn == 4 && nodes[3].avail == GP_SLURM_DRAIN &&
              !strcmp(nodes[3].reason, "gpupool test"),
          "n4 drained: %s (%s)", nn == 4 ? nodes[3].state : "",
          nn == 4 ? nodes[3].reason : "");
    free(nodes);
    if ((rc = gp_slurm_node_state(s, "n4", "RESUME", NULL, &d)) != GP_OK)
        die("resume", rc, &d);

    /* a held job cancelled */
    sub.comment = "gpupool:2";
    if ((rc = gp_slurm_submit_held(s, &sub, &id, &d)) != GP_OK)
        die("submit", rc, &d);
    if ((rc = gp_slurm_set_comment(s, id, "gpupool:3", &d)) != GP_OK)
        die("comment", rc, &d);
    j = find_job(s, id);
    check(!strcmp(j.comment, "gpupool:3"), "comment set on a held job (%s)",
          j.comment);
    if ((rc = gp_slurm_cancel(s, id, &d)) != GP_OK)
        die("cancel", rc, &d);
    j = wait_job(s, id, is_final, 10, NULL);
    check(j.state == GP_SJ_CANCELLED, "held job cancelled (%s)", j.state_name);
    uint32_t cancelled = id;

    /* what Slurm refuses comes back with its words */
    sub.partition = "nosuch";
    rc = gp_slurm_submit_held(s, &sub, &id, &d);
    check(rc == GP_EIO && strstr(d.msg, "nvalid partition") != NULL,
          "a request Slurm refuses: %s: %s", d.where, d.msg);
    rc = gp_slurm_place(s, 999999, leaf0, 2, &d);
    check(rc == GP_EIO, "placing a job Slurm does not know: %s", d.msg);

    /* Slurm's own record: the gang's two runs, the cancelled job's none */
    FILE *f = fopen(comp_log, "r");
    char text[65536] = "";
    size_t got = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    text[got] = '\0';
    if (f)
        fclose(f);
    struct gp_slurm_comp *comp = NULL;
    size_t nc = 0;
    if ((rc = gp_slurm_parse_jobcomp(text, comp_log, &comp, &nc, &d)) != GP_OK)
        die("jobcomp", rc, &d);
    const struct gp_slurm_comp *r1 = NULL, *r2 = NULL, *rc3 = NULL;
    for (size_t i = 0; i < nc; i++) {
        if (comp[i].id == gang && !r1)
            r1 = &comp[i];
        else if (comp[i].id == gang)
            r2 = &comp[i];
        else if (comp[i].id == cancelled)
            rc3 = &comp[i]; /* the held job cancelled above */
    }
    /* the first run ended by itself at the signal: Slurm records it
     * COMPLETED, then requeues it (killed by the requeue, it would be
     * PENDING) */
    check(r1 && r2 &&
              (!strcmp(r1->state, "COMPLETED") ||
               !strcmp(r1->state, "PENDING")) &&
              !strcmp(r1->nodes, "n[1-2]") && !strcmp(r2->state, "COMPLETED") &&
              !strcmp(r2->nodes, "n[3-4]") && r2->exit_code == 0,
          "jobcomp: the requeued run (%s on %s), then the last (%s on %s)",
          r1 ? r1->state : "-", r1 ? r1->nodes : "-", r2 ? r2->state : "-",
          r2 ? r2->nodes : "-");
    check(r1 && r2 && r1->start_s == run1_start && r1->end_s >= signalled &&
              r1->end_s <= run1_end && r2->start_s == last.start_s &&
              r2->end_s == last.end_s,
          "jobcomp times agree with squeue's: run 1 %lld-%lld (squeue's "
          "start %lld, stopped between %lld and %lld), run 2 %lld-%lld "
          "(squeue %lld-%lld)",
          r1 ? (long long)r1->start_s : 0, r1 ? (long long)r1->end_s : 0,
          (long long)run1_start, (long long)signalled, (long long)run1_end,
          r2 ? (long long)r2->start_s : 0, r2 ? (long long)r2->end_s : 0,
          (long long)last.start_s, (long long)last.end_s);
    if (r1 && r2)
        printf("note: the gang's GPU-seconds by Slurm's record: %lld "
               "(2 nodes x 2 GPUs x (%lld + %lld s))\n",
               (long long)(4 *
                           (r1->end_s - r1->start_s + r2->end_s - r2->start_s)),
               (long long)(r1->end_s - r1->start_s),
               (long long)(r2->end_s - r2->start_s));
    check(rc3 && !strcmp(rc3->state, "CANCELLED") && rc3->node_count == 0 &&
              rc3->start_s == 0,
          "jobcomp: the held job cancelled never ran (%s, %u nodes)",
          rc3 ? rc3->state : "-", rc3 ? rc3->node_count : 0);
    free(comp);

    t0 = now_ms();
    struct gp_slurm_job *all = NULL;
    size_t na = 0;
    if ((rc = gp_slurm_jobs(s, &all, &na, &d)) != GP_OK)
        die("jobs", rc, &d);
    printf("cost: jobs (squeue --json, %zu jobs) %.1f ms\n", na, now_ms() - t0);
    free(all);
    gp_slurm_close(s);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
