/* test_slurm.c - the Slurm client's pieces that need no cluster: the
 * command runner (against /bin/sh), hostlists, GRES strings, and the
 * parsers on output recorded from a real Slurm 22.05 cluster
 * (tests/data/slurm/: four nodes of 4 GPUs under two leaf switches, n4
 * drained, jobs cancelled, failed, completed, running and held).
 *
 * The calls that need slurmctld are tested against a real cluster by
 * tests/integration/slurm_client.c.
 */
#define _GNU_SOURCE /* strptime, symlink */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/slurm.h"
#include "core_harness.h"
#include "gpupool/cluster.h"
#include "test_files.h"

/* A recorded file of tests/data/slurm/. */
static char *slurp(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/data/slurm/%s", GP_SOURCE_ROOT, rel);
    return test_read_file(path, len);
}

/* ---- hostlists ---- */

struct names {
    char all[4096];
    unsigned n;
    unsigned stop_at;
};

static int collect(void *priv, const char *name)
{
    struct names *c = priv;
    size_t l = strlen(c->all);
    snprintf(c->all + l, sizeof(c->all) - l, "%s%s", c->n ? " " : "", name);
    c->n++;
    return c->stop_at && c->n == c->stop_at ? 42 : 0;
}

static const char *expand(const char *list, int *rc)
{
    static struct names c;
    memset(&c, 0, sizeof(c));
    *rc = gp_hostlist_expand(list, collect, &c, NULL);
    return c.all;
}

static void hostlists(void **state)
{
    (void)state;
    int rc;
    assert_string_equal(expand("n1", &rc), "n1");
    assert_string_equal(expand("n[1-3]", &rc), "n1 n2 n3");
    assert_string_equal(expand("n[1-2,5],login", &rc), "n1 n2 n5 login");
    assert_string_equal(expand("gpu[08-11]x", &rc),
                        "gpu08x gpu09x gpu10x gpu11x");
    assert_string_equal(expand("a[1],b[3-4]", &rc), "a1 b3 b4");
    assert_int_equal(rc, GP_OK);
    assert_string_equal(expand("", &rc), "");
    assert_int_equal(rc, GP_OK);

    const char *bad[] = {"n[1-", "n1-2]",     "n[3-1]", "n[a-b]",
                         "n[]",  "n[1-2][3]", "n1,,n2", "n[0-70000]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_diag diag = {0};
        struct names c = {0};
        rc = gp_hostlist_expand(bad[i], collect, &c, &diag);
        if (rc != GP_EPARSE)
            fail_msg("'%s' gave %d", bad[i], rc);
        assert_string_equal(diag.where, "hostlist");
        assert_true(diag.msg[0] != '\0');
    }

    /* the callback stops the walk and its value comes back */
    struct names c = {.stop_at = 2};
    assert_int_equal(gp_hostlist_expand("n[1-9]", collect, &c, NULL), 42);
    assert_int_equal(c.n, 2);
}

static void gres_strings(void **state)
{
    (void)state;
    uint32_t g = 99;
    char t[32];
    assert_int_equal(gp_slurm_parse_gres("gpu:4", &g, t, sizeof(t)), GP_OK);
    assert_int_equal(g, 4);
    assert_string_equal(t, "");
    assert_int_equal(
        gp_slurm_parse_gres("gpu:v100:4(S:0-1),shard:8", &g, t, sizeof(t)),
        GP_OK);
    assert_int_equal(g, 4);
    assert_string_equal(t, "v100");
    assert_int_equal(gp_slurm_parse_gres("gpu:a100:2(IDX:0-1),gpu:t4:1(IDX:2)",
                                         &g, t, sizeof(t)),
                     GP_OK);
    assert_int_equal(g, 3);
    assert_string_equal(t, "a100");
    assert_int_equal(gp_slurm_parse_gres("gres:gpu:2", &g, t, sizeof(t)),
                     GP_OK);
    assert_int_equal(g, 2);
    assert_int_equal(gp_slurm_parse_gres("gres/gpu=3", &g, t, sizeof(t)),
                     GP_OK);
    assert_int_equal(g, 3);
    assert_int_equal(gp_slurm_parse_gres("gres:gpu:h100:8", &g, t, sizeof(t)),
                     GP_OK);
    assert_int_equal(g, 8);
    assert_string_equal(t, "h100");
    assert_int_equal(gp_slurm_parse_gres("gpu", &g, t, sizeof(t)), GP_OK);
    assert_int_equal(g, 1);
    assert_int_equal(gp_slurm_parse_gres("", &g, t, sizeof(t)), GP_OK);
    assert_int_equal(g, 0);
    assert_int_equal(gp_slurm_parse_gres(NULL, &g, t, sizeof(t)), GP_OK);
    assert_int_equal(g, 0);
    assert_int_equal(gp_slurm_parse_gres("(null)", &g, t, sizeof(t)), GP_OK);
    assert_int_equal(g, 0);
    assert_int_equal(gp_slurm_parse_gres("shard:8,mps:100", &g, t, sizeof(t)),
                     GP_OK);
    assert_int_equal(g, 0);
    assert_int_equal(gp_slurm_parse_gres("gpu:v100:x", &g, t, sizeof(t)),
                     GP_EPARSE);
}

/* ---- parsers on recorded output ---- */

static void nodes_and_topology(void **state)
{
    (void)state;
    size_t len, n = 0;
    char *json = slurp("sinfo.json", &len);
    struct gp_slurm_node *v = NULL;
    struct gp_diag diag = {0};
    assert_int_equal(gp_slurm_parse_nodes(json, len, "sinfo", &v, &n, &diag),
                     GP_OK);
    free(json);
    assert_int_equal(n, 4);
    assert_string_equal(v[0].name, "n1");
    assert_string_equal(v[0].state, "mixed");
    assert_int_equal(v[0].avail, GP_SLURM_UP);
    assert_int_equal(v[0].cpus, 4);
    assert_int_equal(v[0].mem_mib, 2000);
    assert_int_equal(v[0].gpus, 4);
    assert_int_equal(v[0].gpus_used, 2);
    assert_int_equal(v[2].gpus_used, 0);
    assert_string_equal(v[3].name, "n4");
    assert_string_equal(v[3].state, "idle+DRAIN");
    assert_int_equal(v[3].avail, GP_SLURM_DRAIN);
    assert_string_equal(v[3].reason, "disk check");

    char *topo = slurp("topology.txt", &len);
    assert_int_equal(gp_slurm_parse_topology(topo, "topo", v, n, &diag), GP_OK);
    free(topo);
    /* the leaf, not the spine that lists every node too */
    assert_string_equal(v[0].leaf, "leaf0");
    assert_string_equal(v[1].leaf, "leaf0");
    assert_string_equal(v[2].leaf, "leaf1");
    assert_string_equal(v[3].leaf, "leaf1");

    /* no topology: no leaves */
    assert_int_equal(gp_slurm_parse_topology("", "topo", v, n, &diag), GP_OK);
    assert_string_equal(v[0].leaf, "");
    assert_int_equal(gp_slurm_parse_topology(
                         "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[1-\n",
                         "topo", v, n, &diag),
                     GP_EPARSE);
    assert_string_equal(diag.where, "topo:1");
    free(v);
}

static void jobs(void **state)
{
    (void)state;
    size_t len, n = 0;
    char *json = slurp("squeue.json", &len);
    struct gp_slurm_job *v = NULL;
    struct gp_diag diag = {0};
    assert_int_equal(gp_slurm_parse_jobs(json, len, "squeue", &v, &n, &diag),
                     GP_OK);
    free(json);
    assert_int_equal(n, 5);
    /* cancelled while held */
    assert_int_equal(v[0].id, 1);
    assert_int_equal(v[0].state, GP_SJ_CANCELLED);
    assert_true(gp_slurm_jstate_final(v[0].state));
    assert_false(v[0].held);
    assert_int_equal(v[0].gpus_per_node, 2);
    assert_int_equal(v[0].node_count, 2);
    assert_string_equal(v[0].comment, "gpupool:17");
    assert_string_equal(v[0].account, "acct1");
    /* exit 3: a wait status */
    assert_int_equal(v[1].state, GP_SJ_FAILED);
    assert_int_equal(v[1].exit_status, 3 << 8);
    assert_string_equal(v[1].nodes, "n1");
    assert_int_equal(v[2].state, GP_SJ_COMPLETED);
    assert_int_equal(v[2].exit_status, 0);
    assert_true(v[2].end_s >= v[2].start_s && v[2].start_s > 0);
    /* a running gang */
    assert_int_equal(v[3].state, GP_SJ_RUNNING);
    assert_string_equal(v[3].nodes, "n[1-2]");
    assert_string_equal(v[3].batch_host, "n1");
    assert_int_equal(v[3].gpus_per_node, 2);
    assert_int_equal(v[3].time_limit_min, 30);
    assert_string_equal(v[3].account, "research");
    assert_string_equal(v[3].comment, "gpupool:4");
    assert_false(gp_slurm_jstate_final(v[3].state));
    /* held, GPUs for the whole job (--gpus) */
    assert_int_equal(v[4].state, GP_SJ_PENDING);
    assert_true(v[4].held);
    assert_string_equal(v[4].reason, "JobHeldUser");
    assert_int_equal(v[4].gpus_per_node, 0);
    assert_int_equal(v[4].gpus_per_job, 3);
    assert_string_equal(v[4].name, "held-one");
    assert_string_equal(v[4].user, "root");
    free(v);
}

static void bad_json(void **state)
{
    (void)state;
    struct gp_slurm_job *v = NULL;
    struct gp_slurm_node *nv = NULL;
    size_t n = 0;
    struct gp_diag diag = {0};
    const char *cases[] = {
        "{",
        "{\"jobs\": 3}",
        "{\"jobs\": [{\"job_state\": \"RUNNING\"}]}",
        "{\"jobs\": [{\"job_id\": 3, \"tres_per_node\": \"gres:gpu:v100:x\"}]}",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&diag, 0, sizeof(diag));
        assert_int_equal(gp_slurm_parse_jobs(cases[i], strlen(cases[i]),
                                             "squeue", &v, &n, &diag),
                         GP_EPARSE);
        assert_string_equal(diag.where, "squeue");
    }
    /* Slurm's own errors come through */
    const char *err = "{\"errors\": [{\"error\": \"Invalid user\"}], "
                      "\"jobs\": []}";
    assert_int_equal(
        gp_slurm_parse_jobs(err, strlen(err), "squeue", &v, &n, &diag), GP_EIO);
    assert_non_null(strstr(diag.msg, "Invalid user"));
    const char *nn = "{\"nodes\": [{\"state\": \"idle\"}]}";
    assert_int_equal(
        gp_slurm_parse_nodes(nn, strlen(nn), "sinfo", &nv, &n, &diag),
        GP_EPARSE);
    assert_non_null(strstr(diag.msg, "nodes[0]"));
    const char *ng = "{\"nodes\": [{\"name\": \"n7\", \"gres\": "
                     "\"gpu:v100:x\"}]}";
    assert_int_equal(
        gp_slurm_parse_nodes(ng, strlen(ng), "sinfo", &nv, &n, &diag),
        GP_EPARSE);
    assert_non_null(strstr(diag.msg, "node n7: GRES 'gpu:v100:x'"));
    /* an unknown state is kept, not guessed */
    const char *odd = "{\"jobs\": [{\"job_id\": 9, \"job_state\": "
                      "\"FUTURE_STATE\"}]}";
    assert_int_equal(
        gp_slurm_parse_jobs(odd, strlen(odd), "squeue", &v, &n, &diag), GP_OK);
    assert_int_equal(v[0].state, GP_SJ_OTHER);
    assert_false(gp_slurm_jstate_final(v[0].state));
    assert_string_equal(v[0].state_name, "FUTURE_STATE");
    free(v);
}

static int64_t local_time(const char *s)
{
    struct tm tm = {0};
    assert_non_null(strptime(s, "%Y-%m-%dT%H:%M:%S", &tm));
    tm.tm_isdst = -1;
    return (int64_t)mktime(&tm);
}

static void jobcomp(void **state)
{
    (void)state;
    size_t len, n = 0;
    char *text = slurp("jobcomp.log", &len);
    struct gp_slurm_comp *v = NULL;
    struct gp_diag diag = {0};
    assert_int_equal(gp_slurm_parse_jobcomp(text, "jobcomp.log", &v, &n, &diag),
                     GP_OK);
    free(text);
    assert_int_equal(n, 6); /* the blank line is skipped */
    assert_int_equal(v[0].id, 1);
    assert_string_equal(v[0].state, "COMPLETED");
    assert_int_equal(v[0].start_s, local_time("2026-11-24T23:18:26"));
    assert_int_equal(v[0].end_s - v[0].start_s, 1);
    /* a run ended by requeue, then the last run */
    assert_int_equal(v[1].id, 2);
    assert_string_equal(v[1].state, "PENDING");
    assert_string_equal(v[1].nodes, "n[1-2]");
    assert_int_equal(v[1].node_count, 2);
    assert_int_equal(v[2].id, 2);
    assert_string_equal(v[2].nodes, "n[3-4]");
    assert_int_equal(v[2].end_s - v[2].start_s, 4);
    assert_int_equal(v[3].exit_code, 3);
    /* cancelled before it ran: no run */
    assert_string_equal(v[4].state, "CANCELLED");
    assert_int_equal(v[4].node_count, 0);
    assert_int_equal(v[4].start_s, 0);
    assert_string_equal(v[4].nodes, "");
    /* spaces in a name and a directory, killed by a signal */
    assert_int_equal(v[5].id, 5);
    assert_string_equal(v[5].state, "CANCELLED");
    assert_string_equal(v[5].nodes, "n[3-4]");
    assert_int_equal(v[5].exit_signal, 15);
    assert_int_equal(v[5].end_s - v[5].start_s, 7);
    free(v);

    const char *bad[] = {
        "JobId=x UserId=",
        "UserId=root(0) JobId=1",
        "JobId=1 UserId=root(0) GroupId=root(0) Name=a JobState=COMPLETED "
        "Partition=gpu TimeLimit=1 StartTime=yesterday EndTime=unknown "
        "NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/ ReservationName= Tres= "
        "Account= QOS= WcKey= Cluster=c SubmitTime=unknown "
        "EligibleTime=unknown DerivedExitCode=0:0 ExitCode=0:0",
    };
    const char *field[] = {"GroupId", "JobId", "StartTime"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char two[2048];
        snprintf(two, sizeof(two), "%s\n%s\n",
                 "JobId=9 UserId=root(0) GroupId=root(0) Name=a "
                 "JobState=COMPLETED Partition=gpu TimeLimit=1 "
                 "StartTime=unknown EndTime=unknown NodeList=n1 NodeCnt=1 "
                 "ProcCnt=1 WorkDir=/ ReservationName= Tres= Account= QOS= "
                 "WcKey= Cluster=c SubmitTime=unknown EligibleTime=unknown "
                 "DerivedExitCode=0:0 ExitCode=0:0",
                 bad[i]);
        assert_int_equal(gp_slurm_parse_jobcomp(two, "log", &v, &n, &diag),
                         GP_EPARSE);
        assert_string_equal(diag.where, "log:2");
        if (!strstr(diag.msg, field[i]))
            fail_msg("case %zu: '%s' does not name %s", i, diag.msg, field[i]);
    }
}

/* ---- Slurm's nodes in the core ---- */

static struct gp_slurm_node *recorded_nodes(size_t *n)
{
    size_t len;
    char *json = slurp("sinfo.json", &len);
    struct gp_slurm_node *v = NULL;
    assert_int_equal(gp_slurm_parse_nodes(json, len, "sinfo", &v, n, NULL),
                     GP_OK);
    free(json);
    char *topo = slurp("topology.txt", &len);
    assert_int_equal(gp_slurm_parse_topology(topo, "topo", v, *n, NULL), GP_OK);
    free(topo);
    return v;
}

static void nodes_into_core(void **state)
{
    (void)state;
    size_t n, skipped = 9;
    struct gp_slurm_node *v = recorded_nodes(&n);
    struct gp_cluster *c = NULL;
    struct gp_diag diag = {0};
    assert_int_equal(gp_slurm_cluster(v, n, &c, &skipped, &diag), GP_OK);
    assert_int_equal(skipped, 0);
    assert_int_equal(gp_cluster_nnodes(c), 4);
    assert_int_equal(gp_cluster_gpus(c), 16);
    assert_int_equal(gp_cluster_nswitches(c), 2);
    assert_string_equal(gp_cluster_switch_name(c, gp_cluster_node_switch(c, 2)),
                        "leaf1");
    assert_int_equal(gp_cluster_node_state(c, 3), GP_NODE_DRAIN);
    assert_string_equal(gp_cluster_type_name(c, gp_cluster_node_type(c, 0)),
                        "gpu");

    struct rec r;
    memset(&r, 0, sizeof(r));
    harness_rec = &r;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {.policy = gp_policy_find("fifo"),
                                 .model = GP_PLACE_PACK};
    assert_int_equal(gp_core_new(&core, c, &cfg, &diag), GP_OK);
    uint64_t job = submit(core, "a", 4, 3600, 0);
    round_at(core, S(1));
    assert_int_equal(state_of(core, job), GP_JOB_RUNNING);
    uint32_t at = gp_core_job(core, job)->where.slots[0].node;
    assert_true(at < 3); /* not on the drained n4 */

    /* a poll later: the job's node down, n4 back, one node gone from
     * Slurm's list, a new one, another grown */
    struct gp_slurm_node *w = calloc(n + 1, sizeof(*w));
    size_t m = 0, gone = (at + 1) % 3, grown = (at + 2) % 3;
    for (size_t i = 0; i < n; i++) {
        if (i == gone)
            continue;
        w[m] = v[i];
        if (i == at)
            w[m].avail = GP_SLURM_DOWN;
        if (i == 3)
            w[m].avail = GP_SLURM_UP;
        if (i == grown)
            w[m].gpus = 8;
        m++;
    }
    w[m] = v[3];
    snprintf(w[m].name, sizeof(w[m].name), "n5");
    w[m].avail = GP_SLURM_UP;
    m++;
    struct gp_slurm_sync sy;
    assert_int_equal(gp_slurm_sync_nodes(core, w, m, S(2), &sy, &diag), GP_OK);
    assert_int_equal(sy.added, 1);
    assert_int_equal(sy.changed, 2);
    assert_int_equal(sy.gone, 1);
    assert_int_equal(sy.resized, 1);
    const struct gp_cluster *cc = gp_core_cluster(core);
    assert_int_equal(gp_cluster_node_state(cc, at), GP_NODE_DOWN);
    assert_int_equal(gp_cluster_node_state(cc, (uint32_t)gone), GP_NODE_DOWN);
    assert_int_equal(gp_cluster_node_state(cc, 3), GP_NODE_UP);
    uint32_t n5;
    assert_int_equal(gp_cluster_find_node(cc, "n5", &n5), GP_OK);
    assert_string_equal(
        gp_cluster_switch_name(cc, gp_cluster_node_switch(cc, n5)), "leaf1");
    /* the job lost with its node is queued again, then placed elsewhere */
    play(core, S(2));
    assert_int_equal(state_of(core, job), GP_JOB_PENDING);
    round_at(core, S(3));
    assert_int_equal(state_of(core, job), GP_JOB_RUNNING);
    uint32_t again = gp_core_job(core, job)->where.slots[0].node;
    assert_true(again != at && again != gone);

    /* the same list again changes nothing */
    assert_int_equal(gp_slurm_sync_nodes(core, w, m, S(4), &sy, &diag), GP_OK);
    assert_int_equal(sy.added + sy.changed + sy.gone, 0);
    gp_core_free(core);
    free(w);

    /* errors name the node */
    v[1].gpus = 100000;
    assert_int_not_equal(gp_slurm_cluster(v, n, &c, &skipped, &diag), GP_OK);
    assert_string_equal(diag.where, "slurm node n2");
    for (size_t i = 0; i < n; i++)
        v[i].gpus = 0;
    assert_int_equal(gp_slurm_cluster(v, n, &c, &skipped, &diag), GP_EINVAL);
    assert_non_null(strstr(diag.msg, "none of Slurm's 4 nodes"));
    free(v);
}

/* ---- the runner, against /bin/sh ---- */

static char dir[] = "/tmp/gp-slurm-bin-XXXXXX";
static bool made;

/* gp_slurm_open asks sinfo for its version and scontrol for a controller;
 * two scripts answer for them, so the runner can be tried without one. */
static struct gp_slurm *runner(uint32_t timeout_ms)
{
    if (!made) {
        assert_non_null(mkdtemp(dir));
        char p[256];
        snprintf(p, sizeof(p), "%s/sinfo", dir);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs("#!/bin/sh\necho 'slurm 99.1.2'\n", f);
        fclose(f);
        snprintf(p, sizeof(p), "%s/scontrol", dir);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs("#!/bin/sh\necho 'Slurmctld(primary) at h is UP'\n", f);
        fclose(f);
        snprintf(p, sizeof(p), "%s/sh", dir);
        assert_int_equal(symlink("/bin/sh", p), 0);
        snprintf(p, sizeof(p), "chmod +x %s/sinfo %s/scontrol", dir, dir);
        assert_int_equal(system(p), 0);
        made = true;
    }
    struct gp_slurm_options o = {.bin_dir = dir, .timeout_ms = timeout_ms};
    struct gp_slurm *s = NULL;
    struct gp_diag diag = {0};
    assert_int_equal(gp_slurm_open(&s, &o, &diag), GP_OK);
    assert_string_equal(gp_slurm_version(s), "99.1.2");
    return s;
}

static void run_commands(void **state)
{
    (void)state;
    struct gp_slurm *s = runner(2000);
    struct gp_diag diag = {0};
    char *out = NULL;
    size_t len = 0;

    const char *cat[] = {"sh", "-c", "cat; echo done", NULL};
    assert_int_equal(
        gp_slurm_run(s, cat, "#!/bin/sh\nhello\n", &out, &len, &diag), GP_OK);
    assert_string_equal(out, "#!/bin/sh\nhello\ndone\n");
    assert_int_equal(len, strlen(out));
    free(out);

    /* a large stdin and stdout at once must not deadlock */
    size_t big = 1u << 20;
    char *in = malloc(big + 1);
    memset(in, 'x', big);
    in[big] = '\0';
    const char *cat2[] = {"sh", "-c", "cat", NULL};
    assert_int_equal(gp_slurm_run(s, cat2, in, &out, &len, &diag), GP_OK);
    assert_int_equal(len, big);
    free(out);
    free(in);

    /* failure: exit status and the last line of stderr */
    const char *fail[] = {"sh", "-c",
                          "echo noise >&2; echo 'sbatch: error: Invalid "
                          "account' >&2; exit 1",
                          NULL};
    assert_int_equal(gp_slurm_run(s, fail, NULL, &out, &len, &diag), GP_EIO);
    assert_non_null(strstr(diag.msg, "exit 1"));
    assert_non_null(strstr(diag.msg, "Invalid account"));
    assert_null(strstr(diag.msg, "noise"));
    assert_non_null(strstr(diag.where, "sh -c"));

    /* no such command */
    const char *none[] = {"no-such-command", NULL};
    assert_int_equal(gp_slurm_run(s, none, NULL, NULL, NULL, &diag), GP_EIO);
    assert_non_null(strstr(diag.msg, "no-such-command"));
    gp_slurm_close(s);

    /* the time limit kills it */
    s = runner(300);
    const char *slow[] = {"sh", "-c", "sleep 5", NULL};
    assert_int_equal(gp_slurm_run(s, slow, NULL, NULL, NULL, &diag), GP_EIO);
    assert_non_null(strstr(diag.msg, "within 300 ms"));
    gp_slurm_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostlists),          cmocka_unit_test(gres_strings),
        cmocka_unit_test(nodes_and_topology), cmocka_unit_test(jobs),
        cmocka_unit_test(bad_json),           cmocka_unit_test(jobcomp),
        cmocka_unit_test(nodes_into_core),    cmocka_unit_test(run_commands),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (made) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            rc = 1;
    }
    return rc;
}
