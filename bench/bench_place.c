/* bench_place.c - the cost of placement: building a 100,000-switch
 * cluster, placing one 100,000-GPU gang under count / pack / topo, a loop
 * of normal-size placements, and shared GPUs under best fit and FGD (the
 * allocation rate each reaches before the first task that does not fit).
 *
 * Prints figures; never a timed test (see bench/README.md).
 *
 *   bench_place [--nodes N] [--ops N] [--seed N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpupool/cluster.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *what, int rc)
{
    fprintf(stderr, "bench_place: %s: %s\n", what, gp_err_str(rc));
    return 1;
}

/* 1. n one-node switches of 8 GPUs, and one gang of 100,000 GPUs. */
static int big_gang(uint32_t n)
{
    struct gp_cluster *c;
    struct gp_arena a;
    struct gp_demand d = {.gpus = 100000, .type = GP_TYPE_ANY};
    double t0 = now_s();
    int rc;

    if ((rc = gp_cluster_new(&c)) ||
        (rc = gp_cluster_add_uniform(c, n, 8, "V100", 1, NULL)) ||
        (rc = gp_cluster_seal(c)))
        return die("build", rc);
    printf("build: nodes=%u switches=%u gpus=%llu time_s=%.3f\n",
           gp_cluster_nnodes(c), gp_cluster_nswitches(c),
           (unsigned long long)gp_cluster_gpus(c), now_s() - t0);
    gp_arena_init(&a, 0);
    for (int m = GP_PLACE_COUNT; m <= GP_PLACE_TOPO; m++) {
        struct gp_placement p;
        double t1 = now_s(), t2;

        gp_arena_reset(&a);
        if ((rc = gp_cluster_fit(c, (enum gp_place_model)m, &d, &a, &p)))
            return die("fit", rc);
        t2 = now_s();
        if ((rc = gp_cluster_take(c, &p, &d)))
            return die("take", rc);
        gp_cluster_give(c, &p, &d);
        printf("gang: model=%s gpus=100000 slots=%u switches=%u fit_s=%.4f "
               "take_give_s=%.4f\n",
               gp_place_model_name((enum gp_place_model)m), p.nslots,
               p.nswitches, t2 - t1, now_s() - t2);
    }
    gp_arena_fini(&a);
    gp_cluster_free(c);
    return 0;
}

struct running {
    struct gp_placement p;
    struct gp_demand d;
};

/* 2. 1,000 nodes of 8 GPUs in switches of 32; gangs of 1..32 arrive and
 * leave at random, keeping the cluster about 80% full. */
static int loop(uint32_t ops, uint64_t seed)
{
    static const uint32_t sizes[] = {1, 1, 1, 2, 2, 4, 8, 8, 16, 32};
    struct gp_rng rng;
    struct running *run = calloc(8000, sizeof(*run));
    int rc;

    if (!run)
        return die("loop", GP_ENOMEM);
    for (int m = GP_PLACE_COUNT; m <= GP_PLACE_TOPO; m++) {
        struct gp_cluster *c;
        struct gp_arena a;
        uint32_t nrun = 0, placed = 0, nofit = 0;
        double fit_s = 0;

        gp_rng_init(&rng, seed);
        gp_arena_init(&a, 0);
        if ((rc = gp_cluster_new(&c)) ||
            (rc = gp_cluster_add_uniform(c, 1000, 8, "V100", 32, NULL)) ||
            (rc = gp_cluster_seal(c)))
            return die("build", rc);
        for (uint32_t i = 0; i < ops; i++) {
            bool leave = gp_cluster_free_gpus(c) < 1600 && nrun > 0;

            if (leave) {
                uint32_t k = (uint32_t)(gp_rng_next(&rng) % nrun);

                gp_cluster_give(c, &run[k].p, &run[k].d);
                gp_placement_fini(&run[k].p);
                run[k] = run[--nrun];
                if (run[k].p.nslots == 1) /* it points into its old place */
                    run[k].p.slots = &run[k].p.inline_slot;
            } else {
                struct gp_demand d = {.type = GP_TYPE_ANY};
                struct gp_placement p;
                double t0;

                d.gpus = sizes[gp_rng_next(&rng) % 10];
                gp_arena_reset(&a);
                t0 = now_s();
                rc = gp_cluster_fit(c, (enum gp_place_model)m, &d, &a, &p);
                fit_s += now_s() - t0;
                if (rc == GP_ENOFIT) {
                    nofit++;
                    continue;
                }
                if (rc || (rc = gp_cluster_take(c, &p, &d)) ||
                    (rc = gp_placement_copy(&run[nrun].p, &p)))
                    return die("loop", rc);
                run[nrun++].d = d;
                placed++;
            }
        }
        printf("loop: model=%s cluster=1000x8 placed=%u nofit=%u "
               "ns_per_fit=%.0f\n",
               gp_place_model_name((enum gp_place_model)m), placed, nofit,
               fit_s * 1e9 / (placed + nofit));
        while (nrun)
            gp_placement_fini(&run[--nrun].p);
        gp_arena_fini(&a);
        gp_cluster_free(c);
    }
    free(run);
    return 0;
}

/* 3. Shared GPUs: a workload of shares, whole GPUs, gangs and CPU-only
 * tasks (loosely the openb mix), placed until the first that fails. */
static const struct gp_shape mix[] = {
    {.gpu_milli = 250, .cpus = 4, .weight = 20},
    {.gpu_milli = 500, .cpus = 8, .weight = 25},
    {.gpu_milli = 750, .cpus = 8, .weight = 5},
    {.gpus = 1, .cpus = 8, .weight = 30},
    {.gpus = 2, .cpus = 16, .weight = 8},
    {.gpus = 4, .cpus = 32, .weight = 4},
    {.gpus = 8, .cpus = 64, .weight = 2},
    {.cpus = 4, .weight = 6},
};
#define NMIX (sizeof(mix) / sizeof(mix[0]))

static struct gp_demand draw(struct gp_rng *rng)
{
    double total = 0, x;
    struct gp_demand d = {.type = GP_TYPE_ANY};
    size_t i;

    for (i = 0; i < NMIX; i++)
        total += mix[i].weight;
    x = gp_rng_unit(rng) * total;
    for (i = 0; i + 1 < NMIX && x >= mix[i].weight; i++)
        x -= mix[i].weight;
    d.gpus = mix[i].gpus;
    d.gpu_milli = mix[i].gpu_milli;
    if (d.gpus)
        d.cpus_per_gpu = mix[i].cpus / d.gpus;
    else
        d.cpus = mix[i].cpus;
    return d;
}

static int sharing(uint32_t nodes, uint64_t seed)
{
    for (int pl = GP_SHARE_BESTFIT; pl <= GP_SHARE_FGD; pl++) {
        struct gp_cluster *c;
        struct gp_arena a;
        struct gp_rng rng;
        uint32_t placed = 0;
        double fit_s = 0, frag = 0;
        int rc;

        gp_rng_init(&rng, seed);
        gp_arena_init(&a, 0);
        if ((rc = gp_cluster_new(&c)))
            return die("build", rc);
        for (uint32_t i = 0; i < nodes; i++) {
            struct gp_node_spec spec = {.type = "G2", .gpus = 8, .cpus = 96};

            if ((rc = gp_cluster_add_node(c, &spec, NULL)))
                return die("build", rc);
        }
        if ((rc = gp_cluster_seal(c)) ||
            (rc = gp_cluster_set_workload(c, mix, NMIX, NULL)))
            return die("build", rc);
        for (;;) {
            struct gp_demand d = draw(&rng);
            struct gp_placement p;
            double t0 = now_s();

            gp_arena_reset(&a);
            rc = gp_cluster_fit_with(c, GP_PLACE_PACK, (enum gp_share_placer)pl,
                                     &d, &a, &p);
            fit_s += now_s() - t0;
            if (rc == GP_ENOFIT)
                break;
            if (rc || (rc = gp_cluster_take(c, &p, &d)))
                return die("sharing", rc);
            placed++;
        }
        if ((rc = gp_cluster_fragmentation(c, NULL, 0, &frag)))
            return die("fragmentation", rc);
        printf("share: placer=%s cluster=%ux8 placed=%u alloc_rate=%.4f "
               "frag_gpus=%.1f us_per_fit=%.1f\n",
               gp_share_placer_name((enum gp_share_placer)pl), nodes, placed,
               gp_cluster_alloc_rate(c), frag / 1000, fit_s * 1e6 / placed);
        gp_arena_fini(&a);
        gp_cluster_free(c);
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t nodes = 100000, ops = 200000;
    uint64_t seed = 1;

    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--nodes") == 0)
            nodes = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(argv[i], "--ops") == 0)
            ops = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr,
                    "usage: bench_place [--nodes N] [--ops N] [--seed N]\n");
            return 2;
        }
    }
    if (nodes < 12500) {
        fprintf(stderr, "bench_place: --nodes must be >= 12500 (100,000 "
                        "GPUs in nodes of 8)\n");
        return 2;
    }
    if (big_gang(nodes) || loop(ops, seed) || sharing(500, seed))
        return 1;
    return 0;
}
