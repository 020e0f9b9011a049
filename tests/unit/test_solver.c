/* test_solver.c - the LP/MILP interface (include/gpupool/solver.h): small
 * problems worked by hand, solved by every solver; then the differential
 * test: the same random problems solved by COIN-OR (CLP/CBC) and by GLPK,
 * which must agree on the status and the optimal objective, each point
 * checked against the problem, and pure-integer ones against the optimum
 * found by enumeration. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <glpk.h>

#include "gpupool/solver.h"

#define TOL 1e-6

static const struct gp_solver_ops *coin, *glpk;

static int setup(void **state)
{
    (void)state;
    coin = gp_solver_find("coin");
    glpk = gp_solver_find("glpk");
    return coin && glpk ? 0 : -1;
}

static bool close_to(double a, double b)
{
    return fabs(a - b) <= TOL * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static int col(struct gp_lp *lp, double lo, double hi, double obj, bool integer)
{
    int c = gp_lp_add_col(lp, lo, hi, obj, integer, NULL);

    assert_true(c >= 0);
    return c;
}

/* A row over the columns and coefficients given in pairs. */
static int row(struct gp_lp *lp, double lo, double hi, size_t n, ...)
{
    int cols[16];
    double vals[16];
    va_list ap;
    int r;

    va_start(ap, n);
    for (size_t k = 0; k < n; k++) {
        cols[k] = va_arg(ap, int);
        vals[k] = va_arg(ap, double);
    }
    va_end(ap);
    r = gp_lp_add_row(lp, lo, hi, n, cols, vals, NULL);
    assert_true(r >= 0);
    return r;
}

static void solve(const struct gp_solver_ops *s, const struct gp_lp *lp,
                  const struct gp_lp_limits *lim, struct gp_lp_result *res)
{
    struct gp_diag diag = {{0}, {0}};
    int rc = s->solve(lp, lim, res, &diag);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s", s->name, diag.where, diag.msg);
    assert_string_equal(res->solver, s->name);
}

/* ---- worked by hand ---------------------------------------------------- */

/* max 3x + 5y  s.t.  x <= 4,  2y <= 12,  3x + 2y <= 18,  x, y >= 0:
 * the optimum is x = 2, y = 6, 36; the last two rows bind, with duals 1.5
 * and 1 (the objective gains that much per unit of their bound). */
static void a_textbook_lp_is_solved_with_its_duals(void **state)
{
    struct gp_lp *lp = gp_lp_new();
    const struct gp_solver_ops *all[] = {coin, glpk};

    (void)state;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    col(lp, 0, INFINITY, 3, false);
    col(lp, 0, INFINITY, 5, false);
    row(lp, -INFINITY, 4, 1, 0, 1.0);
    row(lp, -INFINITY, 12, 1, 1, 2.0);
    row(lp, -INFINITY, 18, 2, 0, 3.0, 1, 2.0);
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;

        solve(all[i], lp, NULL, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(r.feasible);
        assert_true(close_to(r.objective, 36));
        assert_true(close_to(r.x[0], 2) && close_to(r.x[1], 6));
        assert_non_null(r.duals);
        assert_true(close_to(r.duals[0], 0));
        assert_true(close_to(r.duals[1], 1.5));
        assert_true(close_to(r.duals[2], 1));
        gp_lp_result_free(&r);
    }
    gp_lp_free(lp);
}

/* min x + 2y  s.t.  x + y = 5,  x - y >= 1,  x <= 10,  y free:
 * with x = 5 - y the objective is 5 + y, smallest at y = -5 (x = 10): 0.
 * The same duals from both, for a minimization: the equality's is 2 (the
 * objective grows by 2 per unit of its right side), the upper bound's on
 * x as a row is -1. */
static void an_equality_and_a_free_column(void **state)
{
    struct gp_lp *lp = gp_lp_new();
    const struct gp_solver_ops *all[] = {coin, glpk};

    (void)state;
    col(lp, -INFINITY, INFINITY, 1, false);
    col(lp, -INFINITY, INFINITY, 2, false);
    row(lp, 5, 5, 2, 0, 1.0, 1, 1.0);
    row(lp, 1, INFINITY, 2, 0, 1.0, 1, -1.0);
    row(lp, -INFINITY, 10, 1, 0, 1.0);
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;

        solve(all[i], lp, NULL, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(close_to(r.objective, 0));
        assert_true(close_to(r.x[0], 10) && close_to(r.x[1], -5));
        assert_true(close_to(r.duals[0], 2));
        assert_true(close_to(r.duals[1], 0));
        assert_true(close_to(r.duals[2], -1));
        gp_lp_result_free(&r);
    }
    gp_lp_free(lp);
}

static void infeasible_and_unbounded_are_told_apart(void **state)
{
    struct gp_lp *inf = gp_lp_new(), *unb = gp_lp_new();
    const struct gp_solver_ops *all[] = {coin, glpk};

    (void)state;
    /* x + y <= 1 and x + y >= 2 */
    col(inf, 0, INFINITY, 1, false);
    col(inf, 0, INFINITY, 1, false);
    row(inf, -INFINITY, 1, 2, 0, 1.0, 1, 1.0);
    row(inf, 2, INFINITY, 2, 0, 1.0, 1, 1.0);
    /* max x  s.t.  x - y <= 1 */
    gp_lp_set_sense(unb, GP_LP_MAXIMIZE);
    col(unb, 0, INFINITY, 1, false);
    col(unb, 0, INFINITY, 0, false);
    row(unb, -INFINITY, 1, 2, 0, 1.0, 1, -1.0);
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;

        solve(all[i], inf, NULL, &r);
        assert_int_equal(r.status, GP_LP_INFEASIBLE);
        assert_false(r.feasible);
        gp_lp_result_free(&r);
        solve(all[i], unb, NULL, &r);
        assert_int_equal(r.status, GP_LP_UNBOUNDED);
        gp_lp_result_free(&r);
    }
    gp_lp_free(inf);
    gp_lp_free(unb);
}

/* A knapsack: max 10a + 13b + 7c + 8d + 4e  s.t.  3a + 4b + 2c + 3d + e
 * <= 7, binary. By hand: a + b = 23 weighs 7; b + c + e = 24 weighs 7;
 * a + c + e = 21; b + d = 21; c + d + e = 19: 24 is the best. An integer
 * column that must lie in [0.2, 0.8] makes it infeasible, though its
 * relaxation is not. */
static void a_knapsack_and_an_integer_gap(void **state)
{
    static const double w[] = {3, 4, 2, 3, 1}, v[] = {10, 13, 7, 8, 4};
    struct gp_lp *lp = gp_lp_new(), *gap = gp_lp_new();
    const struct gp_solver_ops *all[] = {coin, glpk};
    int cols[5];

    (void)state;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    for (int i = 0; i < 5; i++)
        cols[i] = col(lp, 0, 1, v[i], true);
    assert_true(gp_lp_has_integers(lp));
    assert_true(gp_lp_add_row(lp, -INFINITY, 7, 5, cols, w, NULL) == 0);
    col(gap, 0, 1, 1, true);
    row(gap, 0.2, 0.8, 1, 0, 1.0);
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;

        solve(all[i], lp, NULL, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(r.feasible);
        assert_true(close_to(r.objective, 24));
        assert_true(close_to(r.x[1], 1) && close_to(r.x[2], 1) &&
                    close_to(r.x[4], 1));
        assert_null(r.duals);
        gp_lp_result_free(&r);
        solve(all[i], gap, NULL, &r);
        assert_int_equal(r.status, GP_LP_INFEASIBLE);
        gp_lp_result_free(&r);
    }
    gp_lp_free(lp);
    gp_lp_free(gap);
}

/* max x + y over the integers with x - y = 1: unbounded. With x - y =
 * 0.5 the relaxation is unbounded but no integer point exists, and branch
 * and bound on it never ends: the limits stop both solvers with `limit`
 * (CBC at 50 nodes; GLPK's node simplex stalls on it, and its second). */
static void an_unbounded_relaxation_is_settled_by_integer_points(void **state)
{
    const struct gp_solver_ops *all[] = {coin, glpk};
    struct gp_lp_limits lim = {.nodes = 50, .seconds = 1};

    (void)state;
    for (int half = 0; half < 2; half++) {
        struct gp_lp *lp = gp_lp_new();

        gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
        col(lp, 0, INFINITY, 1, true);
        col(lp, 0, INFINITY, 1, true);
        row(lp, half ? 0.5 : 1, half ? 0.5 : 1, 2, 0, 1.0, 1, -1.0);
        for (size_t i = 0; i < 2; i++) {
            struct gp_lp_result r;

            solve(all[i], lp, &lim, &r);
            assert_int_equal(r.status, half ? GP_LP_LIMIT : GP_LP_UNBOUNDED);
            assert_false(half && r.feasible);
            gp_lp_result_free(&r);
        }
        gp_lp_free(lp);
    }
}

static void an_empty_problem_is_optimal_at_zero(void **state)
{
    struct gp_lp *lp = gp_lp_new();
    const struct gp_solver_ops *all[] = {coin, glpk};

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;

        solve(all[i], lp, NULL, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(close_to(r.objective, 0));
        gp_lp_result_free(&r);
    }
    gp_lp_free(lp);
}

/* ---- the builder refuses what no solver could take --------------------- */

static void bad_problems_are_refused_naming_the_place(void **state)
{
    struct gp_lp *lp = gp_lp_new();
    struct gp_diag d;
    int cols[2] = {0, 0};
    double vals[2] = {1, 2};

    (void)state;
    assert_int_equal(gp_lp_add_col(lp, 2, 1, 0, false, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "column 0"));
    assert_int_equal(gp_lp_add_col(lp, 0, 1, NAN, false, &d), GP_EINVAL);
    assert_int_equal(gp_lp_add_col(lp, INFINITY, INFINITY, 0, false, &d),
                     GP_EINVAL);
    assert_int_equal(gp_lp_add_col(lp, 0, 1, INFINITY, false, &d), GP_EINVAL);
    col(lp, 0, 1, 1, false);
    /* a column that does not exist, one named twice, a NaN coefficient */
    cols[1] = 5;
    assert_int_equal(gp_lp_add_row(lp, 0, 1, 2, cols, vals, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "row 0"));
    assert_non_null(strstr(d.msg, "column 5"));
    cols[1] = 0;
    assert_int_equal(gp_lp_add_row(lp, 0, 1, 2, cols, vals, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "twice"));
    vals[0] = NAN;
    assert_int_equal(gp_lp_add_row(lp, 0, 1, 1, cols, vals, &d), GP_EINVAL);
    assert_int_equal(gp_lp_add_row(lp, 1, 0, 0, cols, vals, &d), GP_EINVAL);
    assert_int_equal(gp_lp_nrows(lp), 0);
    assert_int_equal(gp_lp_set_obj(lp, 3, 1, &d), GP_EINVAL);
    assert_int_equal(gp_lp_set_col_bounds(lp, 0, 1, 0, &d), GP_EINVAL);
    assert_int_equal(gp_lp_set_row_bounds(lp, 0, 0, 1, &d), GP_EINVAL);
    /* zeros are dropped; a row of none is allowed */
    vals[0] = 0;
    assert_int_equal(gp_lp_add_row(lp, -1, 1, 1, cols, vals, &d), 0);
    assert_int_equal(gp_lp_nnz(lp), 0);
    assert_null(gp_solver_find("cplex"));
    gp_lp_free(lp);
}

/* The MPS file of a problem, read back by GLPK's own reader and solved
 * there, gives the optimum our solve does (the textbook LP, maximized: the
 * reader takes no sense, so it is set as the file's comment says; and the
 * knapsack, with its integer markers and ranged bounds). */
static void the_mps_file_is_the_problem(void **state)
{
    static const double w[] = {3, 4, 2, 3, 1}, v[] = {10, 13, 7, 8, 4};
    struct gp_lp *lp = gp_lp_new(), *ks = gp_lp_new();
    struct gp_lp *both[] = {lp, ks};
    double want[] = {36, 24};
    int cols[5];
    char path[] = "/tmp/gpupool-test-solver-XXXXXX";
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    col(lp, 0, INFINITY, 3, false);
    col(lp, 0, INFINITY, 5, false);
    row(lp, -INFINITY, 4, 1, 0, 1.0);
    row(lp, 6, 12, 1, 1, 2.0); /* a range */
    row(lp, -INFINITY, 18, 2, 0, 3.0, 1, 2.0);
    gp_lp_set_sense(ks, GP_LP_MAXIMIZE);
    for (int i = 0; i < 5; i++)
        cols[i] = col(ks, 0, 1, v[i], true);
    assert_true(gp_lp_add_row(ks, -INFINITY, 7, 5, cols, w, NULL) == 0);
    for (size_t i = 0; i < 2; i++) {
        glp_prob *p = glp_create_prob();
        FILE *f;
        char first[200];
        glp_smcp sm;
        glp_iocp io;

        assert_int_equal(gp_lp_write_mps(both[i], path, NULL), GP_OK);
        f = fopen(path, "r");
        assert_non_null(fgets(first, sizeof(first), f));
        fclose(f);
        assert_non_null(strstr(first, "MAXIMIZE"));
        glp_term_out(GLP_OFF);
        assert_int_equal(glp_read_mps(p, GLP_MPS_FILE, NULL, path), 0);
        glp_set_obj_dir(p, GLP_MAX);
        glp_init_smcp(&sm);
        sm.msg_lev = GLP_MSG_OFF;
        assert_int_equal(glp_simplex(p, &sm), 0);
        if (i == 0) {
            assert_true(close_to(glp_get_obj_val(p), want[i]));
        } else {
            glp_init_iocp(&io);
            io.msg_lev = GLP_MSG_OFF;
            assert_int_equal(glp_intopt(p, &io), 0);
            assert_int_equal(glp_get_num_int(p), 5);
            assert_true(close_to(glp_mip_obj_val(p), want[i]));
        }
        glp_delete_prob(p);
    }
    assert_int_equal(gp_lp_write_mps(lp, "/nonexistent/dir/x.mps", NULL),
                     GP_EIO);
    close(fd);
    unlink(path);
    gp_lp_free(lp);
    gp_lp_free(ks);
}

/* ---- limits ------------------------------------------------------------ */

/* A feasible, bounded LP of n columns and n dense rows that needs many
 * simplex iterations. */
static struct gp_lp *dense_lp(int n)
{
    struct gp_lp *lp = gp_lp_new();
    int *cols = malloc((size_t)n * sizeof(int));
    double *vals = malloc((size_t)n * sizeof(double));

    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    for (int c = 0; c < n; c++)
        col(lp, 0, 100, 1 + (c * 7919) % 13, false);
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < n; c++) {
            cols[c] = c;
            vals[c] = 1 + ((r * 31 + c * 17) % 11);
        }
        assert_true(gp_lp_add_row(lp, -INFINITY, 100 + r, (size_t)n, cols, vals,
                                  NULL) == r);
    }
    free(cols);
    free(vals);
    return lp;
}

/* max x + y + z  s.t.  x + y + z <= 3,  x, y, z in [0, 2]: the optimum, 3,
 * is a face (a hexagon), not one point. The simplex ends at a vertex, where
 * a column sits on one of its bounds; the interior-point method (no
 * crossover) stops near the face's middle, (1, 1, 1), every column well
 * inside its bounds - with the same objective. Infeasible, the interior
 * method hands over to the simplex, which says so. */
static void an_interior_point_stops_inside_a_face_of_optima(void **state)
{
    struct gp_lp *lp = gp_lp_new(), *inf = gp_lp_new();
    const struct gp_solver_ops *all[] = {coin, glpk};
    struct gp_lp_limits in = {.interior = true};

    (void)state;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    for (int c = 0; c < 3; c++)
        col(lp, 0, 2, 1, false);
    row(lp, -INFINITY, 3, 3, 0, 1.0, 1, 1.0, 2, 1.0);
    col(inf, 0, 1, 1, false);
    row(inf, 2, INFINITY, 1, 0, 1.0);
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;
        bool at_bound = false;

        solve(all[i], lp, NULL, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(close_to(r.objective, 3));
        for (int c = 0; c < 3; c++)
            at_bound |= close_to(r.x[c], 0) || close_to(r.x[c], 2);
        assert_true(at_bound);
        gp_lp_result_free(&r);
        solve(all[i], lp, &in, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(r.feasible);
        assert_true(close_to(r.objective, 3));
        for (int c = 0; c < 3; c++)
            if (!(fabs(r.x[c] - 1) < 0.1))
                fail_msg("%s: x%d = %g, not near 1", all[i]->name, c, r.x[c]);
        assert_non_null(r.duals);
        assert_true(fabs(r.duals[0] - 1) < 1e-4);
        gp_lp_result_free(&r);
        solve(all[i], inf, &in, &r);
        assert_int_equal(r.status, GP_LP_INFEASIBLE);
        gp_lp_result_free(&r);
    }
    gp_lp_free(lp);
    gp_lp_free(inf);
}

static void an_iteration_limit_stops_the_simplex(void **state)
{
    struct gp_lp *lp = dense_lp(40);
    const struct gp_solver_ops *all[] = {coin, glpk};
    struct gp_lp_limits one = {.iterations = 1}, none = {0};

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct gp_lp_result r;

        solve(all[i], lp, &none, &r);
        assert_int_equal(r.status, GP_LP_OPTIMAL);
        assert_true(r.iterations > 1);
        gp_lp_result_free(&r);
        solve(all[i], lp, &one, &r);
        assert_int_equal(r.status, GP_LP_LIMIT);
        assert_true(r.iterations <= 1);
        gp_lp_result_free(&r);
    }
    gp_lp_free(lp);
}

/* A knapsack that needs branching (no cuts: GLPK's default): a limit of
 * one node stops GLPK with the best point it has, if any; CBC may close it
 * at the root with its cuts, so it is only asked not to exceed the limit. */
static void a_node_limit_stops_branch_and_bound(void **state)
{
    static const double w[] = {12, 7, 11, 8, 9, 13, 6, 10},
                        v[] = {24, 13, 23, 15, 16, 27, 11, 19};
    struct gp_lp *lp = gp_lp_new();
    struct gp_lp_limits one = {.nodes = 1};
    struct gp_lp_result r;
    int cols[8];

    (void)state;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    for (int i = 0; i < 8; i++)
        cols[i] = col(lp, 0, 1, v[i], true);
    assert_true(gp_lp_add_row(lp, -INFINITY, 26, 8, cols, w, NULL) == 0);
    solve(glpk, lp, NULL, &r);
    assert_int_equal(r.status, GP_LP_OPTIMAL);
    assert_true(r.nodes > 1);
    gp_lp_result_free(&r);
    solve(glpk, lp, &one, &r);
    assert_int_equal(r.status, GP_LP_LIMIT);
    gp_lp_result_free(&r);
    solve(coin, lp, &one, &r);
    assert_true(r.status == GP_LP_LIMIT || r.status == GP_LP_OPTIMAL);
    assert_true(r.nodes <= 1);
    gp_lp_result_free(&r);
    gp_lp_free(lp);
}

/* ---- differential ------------------------------------------------------ */

/* A problem the solvers disagree on is kept for a look with any solver
 * (glpsol, clp, cbc: docs/solver.md) before the test fails. */
static const char *keep(const struct gp_lp *lp)
{
    static const char path[] = "test_solver-failed.mps";

    gp_lp_write_mps(lp, path, NULL);
    return path;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uni(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0;
}

static int pick(int lo, int hi)
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

/* A random problem around a point x0 that satisfies it (so most are
 * feasible): columns in boxes, some free or half-bounded; rows of a few
 * integer coefficients, bounded around their value at x0, some equalities;
 * now and then a contradictory pair. Integer columns when `ints`. */
static struct gp_lp *random_lp(bool ints, int maxn, int maxm)
{
    struct gp_lp *lp = gp_lp_new();
    int n = pick(1, maxn), m = pick(1, maxm);
    double x0[32];
    int cols[32];
    double vals[32];

    gp_lp_set_sense(lp, rnd() % 2 ? GP_LP_MAXIMIZE : GP_LP_MINIMIZE);
    for (int c = 0; c < n; c++) {
        bool integer = ints && rnd() % 4 != 0;
        double lo = pick(-3, 2), hi = lo + pick(1, 8);
        int kind = pick(0, 9);

        x0[c] = integer ? pick((int)lo, (int)hi) : uni(lo, hi);
        if (kind == 0)
            lo = -INFINITY;
        else if (kind == 1)
            hi = INFINITY;
        col(lp, lo, hi, pick(-9, 9), integer);
    }
    for (int r = 0; r < m; r++) {
        size_t k = 0;
        double a = 0, lo, hi;

        for (int c = 0; c < n; c++)
            if (rnd() % 3 == 0 || (c == n - 1 && k == 0)) {
                cols[k] = c;
                vals[k] = pick(-6, 6);
                a += vals[k] * x0[c];
                k++;
            }
        switch (pick(0, 5)) {
        case 0: /* an equality through x0 */
            lo = hi = a;
            break;
        case 1:
            lo = -INFINITY;
            hi = a + uni(0, 5);
            break;
        case 2:
            lo = a - uni(0, 5);
            hi = INFINITY;
            break;
        default:
            lo = a - uni(0, 4);
            hi = a + uni(0, 4);
            break;
        }
        assert_true(gp_lp_add_row(lp, lo, hi, k, cols, vals, NULL) >= 0);
        if (rnd() % 25 == 0) /* a contradiction */
            assert_true((isfinite(hi) ? gp_lp_add_row(lp, hi + 1, INFINITY, k,
                                                      cols, vals, NULL)
                                      : gp_lp_add_row(lp, -INFINITY, lo - 1, k,
                                                      cols, vals, NULL)) >= 0);
    }
    return lp;
}

/* A small pure-integer problem kept beside its gp_lp, so that its optimum
 * can be found by enumerating every point of its box. */
struct ilp {
    int n, m;
    bool max;
    double lo[6], hi[6], obj[6];
    size_t k[6];
    int cols[6][6];
    double vals[6][6], rlo[6], rhi[6];
};

static struct gp_lp *random_ilp(struct ilp *p)
{
    struct gp_lp *lp = gp_lp_new();
    double x0[6];

    p->n = pick(1, 6);
    p->m = pick(1, 6);
    p->max = rnd() % 2;
    gp_lp_set_sense(lp, p->max ? GP_LP_MAXIMIZE : GP_LP_MINIMIZE);
    for (int c = 0; c < p->n; c++) {
        p->lo[c] = pick(-2, 1);
        p->hi[c] = p->lo[c] + pick(0, 4);
        p->obj[c] = pick(-9, 9);
        x0[c] = pick((int)p->lo[c], (int)p->hi[c]);
        col(lp, p->lo[c], p->hi[c], p->obj[c], true);
    }
    for (int r = 0; r < p->m; r++) {
        double a = 0;

        p->k[r] = 0;
        for (int c = 0; c < p->n; c++)
            if (rnd() % 2 == 0) {
                p->cols[r][p->k[r]] = c;
                p->vals[r][p->k[r]] = uni(-5, 5);
                a += p->vals[r][p->k[r]] * x0[c];
                p->k[r]++;
            }
        /* a band that x0 may or may not lie in: some are infeasible */
        p->rlo[r] = a - uni(0, 2);
        p->rhi[r] = p->rlo[r] + uni(0, 3);
        assert_true(gp_lp_add_row(lp, p->rlo[r], p->rhi[r], p->k[r], p->cols[r],
                                  p->vals[r], NULL) == r);
    }
    return lp;
}

/* The optimum by enumeration; false when no point of the box is feasible. */
static bool enumerate(const struct ilp *p, double *best)
{
    double x[6];
    bool found = false;
    long total = 1;

    for (int c = 0; c < p->n; c++)
        total *= (long)(p->hi[c] - p->lo[c]) + 1;
    for (long i = 0; i < total; i++) {
        long rest = i;
        bool ok = true;
        double v = 0;

        for (int c = 0; c < p->n; c++) {
            long span = (long)(p->hi[c] - p->lo[c]) + 1;

            x[c] = p->lo[c] + (double)(rest % span);
            rest /= span;
            v += p->obj[c] * x[c];
        }
        for (int r = 0; r < p->m && ok; r++) {
            double a = 0;

            for (size_t k = 0; k < p->k[r]; k++)
                a += p->vals[r][k] * x[p->cols[r][k]];
            /* the solvers' own tolerance: a row met within 1e-9 is met */
            ok = a >= p->rlo[r] - 1e-9 && a <= p->rhi[r] + 1e-9;
        }
        if (ok && (!found || (p->max ? v > *best : v < *best))) {
            *best = v;
            found = true;
        }
    }
    return found;
}

static void milps_match_their_enumerated_optimum(void **state)
{
    unsigned optimal = 0, infeasible = 0;

    (void)state;
    rng_state = 7;
    for (int i = 0; i < 300; i++) {
        struct ilp p;
        struct gp_lp *lp = random_ilp(&p);
        const struct gp_solver_ops *all[] = {coin, glpk};
        double best = 0;
        bool feasible = enumerate(&p, &best);

        for (size_t s = 0; s < 2; s++) {
            struct gp_lp_result r;

            solve(all[s], lp, NULL, &r);
            if (feasible &&
                (r.status != GP_LP_OPTIMAL || !close_to(r.objective, best)))
                fail_msg("problem %d (%s): %s says %s %.9g, enumeration "
                         "%.9g",
                         i, keep(lp), all[s]->name, gp_lp_status_name(r.status),
                         r.objective, best);
            if (!feasible && r.status != GP_LP_INFEASIBLE)
                fail_msg("problem %d (%s): %s says %s, enumeration: "
                         "infeasible",
                         i, keep(lp), all[s]->name,
                         gp_lp_status_name(r.status));
            gp_lp_result_free(&r);
        }
        optimal += feasible;
        infeasible += !feasible;
        gp_lp_free(lp);
    }
    assert_true(optimal >= 50 && infeasible >= 50);
    print_message("enumerated MILPs: %u optimal, %u infeasible\n", optimal,
                  infeasible);
}

/* n random problems (integer columns when `ints`) from `seed`, each
 * solved by both: the same status, and for an optimal one the same
 * objective and two points that satisfy the problem. Counts per status. */
static void differential(bool ints, int maxn, int maxm, int n, uint64_t seed,
                         unsigned count[GP_LP_FAILED + 1])
{
    rng_state = seed;
    memset(count, 0, (GP_LP_FAILED + 1) * sizeof(*count));
    for (int i = 0; i < n; i++) {
        struct gp_lp *lp = random_lp(ints, maxn, maxm);
        struct gp_lp_result a, b;

        solve(coin, lp, NULL, &a);
        solve(glpk, lp, NULL, &b);
        if (a.status != b.status)
            fail_msg("problem %d (%s): coin says %s, glpk %s", i, keep(lp),
                     gp_lp_status_name(a.status), gp_lp_status_name(b.status));
        if (a.status == GP_LP_OPTIMAL) {
            if (!close_to(a.objective, b.objective))
                fail_msg("problem %d (%s): objective %.9g (coin) vs %.9g "
                         "(glpk)",
                         i, keep(lp), a.objective, b.objective);
            assert_true(a.feasible && b.feasible);
            assert_true(gp_lp_violation(lp, a.x) <= TOL);
            assert_true(gp_lp_violation(lp, b.x) <= TOL);
        }
        count[a.status]++;
        gp_lp_result_free(&a);
        gp_lp_result_free(&b);
        gp_lp_free(lp);
    }
    print_message("random %s: %u optimal, %u infeasible, %u unbounded\n",
                  ints ? "MILPs" : "LPs", count[GP_LP_OPTIMAL],
                  count[GP_LP_INFEASIBLE], count[GP_LP_UNBOUNDED]);
}

/* the generator must exercise every outcome */
static void coin_and_glpk_agree_on_random_lps(void **state)
{
    unsigned count[GP_LP_FAILED + 1];

    (void)state;
    differential(false, 24, 20, 400, 20261127, count);
    assert_true(count[GP_LP_OPTIMAL] >= 200);
    assert_true(count[GP_LP_INFEASIBLE] >= 5);
    assert_true(count[GP_LP_UNBOUNDED] >= 5);
}

static void coin_and_glpk_agree_on_random_milps(void **state)
{
    unsigned count[GP_LP_FAILED + 1];

    (void)state;
    differential(true, 10, 8, 200, 42, count);
    assert_true(count[GP_LP_OPTIMAL] >= 100);
    assert_true(count[GP_LP_INFEASIBLE] >= 5);
    assert_true(count[GP_LP_UNBOUNDED] >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_textbook_lp_is_solved_with_its_duals),
        cmocka_unit_test(an_equality_and_a_free_column),
        cmocka_unit_test(infeasible_and_unbounded_are_told_apart),
        cmocka_unit_test(a_knapsack_and_an_integer_gap),
        cmocka_unit_test(an_unbounded_relaxation_is_settled_by_integer_points),
        cmocka_unit_test(an_empty_problem_is_optimal_at_zero),
        cmocka_unit_test(bad_problems_are_refused_naming_the_place),
        cmocka_unit_test(the_mps_file_is_the_problem),
        cmocka_unit_test(an_interior_point_stops_inside_a_face_of_optima),
        cmocka_unit_test(an_iteration_limit_stops_the_simplex),
        cmocka_unit_test(a_node_limit_stops_branch_and_bound),
        cmocka_unit_test(coin_and_glpk_agree_on_random_lps),
        cmocka_unit_test(coin_and_glpk_agree_on_random_milps),
        cmocka_unit_test(milps_match_their_enumerated_optimum),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
