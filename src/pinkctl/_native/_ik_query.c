/*
 * A whole IK query in one call: the target checked and stored, the seed checked, normalised
 * and clamped, then one local solve (IKSolver.solve) or a global search (IKSolver.find) with
 * the search's restarts, and the errors of a converged answer.
 *
 * The Python modules are the reference and hold the documentation: pinkctl/ik/targets.py
 * (_check_rotation: what a rotation must satisfy), pinkctl/ik/joints.py (parse_seed: a full
 * configuration's checks; pin.normalize on the (cos, sin) pairs), pinkctl/ik/search.py
 * (global_search: the order of budgets, restarts and the best failed start) and
 * pinkctl/ik/residual.py (errors). The random starts are drawn by the Python side with the
 * search's own generator (pinkctl/ik/query.py), so both paths start from the same
 * configurations; the local solves are pk_ik_local's. The Python side owns every array and
 * decides when this path applies (tests/test_native_ik.py checks whole queries against the
 * Python path).
 *
 * A search with a collision check (pinkctl/ik/collision.py) checks each converged
 * configuration here (pk_capsule_free: capsules, then the narrow phase), rejects one in
 * collision and restarts, as global_search does with its collision callback (every other
 * start after a rejection drawn toward the middle of the ranges, search._toward_middle's
 * arithmetic, with the full-turn joints between the rejected pair's two geometries half a
 * turn away from the rejected configuration, search._away's; a continuous joint's cos and
 * sin are libm's, numpy's may round differently), and without a restart cap every local
 * solve after a rejection stopping after rejected_stall iterations without progress at most
 * (search.REJECTED_STALL). Before the random starts, a rejected configuration's branch flips
 * are tried (pinkctl/ik/branches.py, BranchFlips.apply's arithmetic on its table; a flip's
 * own rejection queues no flips), then, after the first rejection, the seed library's entries
 * nearest the target (pinkctl/ik/seeds.py; the caller builds the library when the query first
 * asks for it, QUERY_LIBRARY). Only where the kernel cannot decide (no native check, a shape it does
 * not know) does the query hand the configuration to the caller (QUERY_CHECK) and resume
 * with its verdict.
 */
#include <math.h>
#include <string.h>

#include "_ik.h"
#include "_native.h"

/* _collision.c: the pair pk_capsule_free found too close */
int pk_capsule_hit(const struct CapsuleProblem *p);

typedef struct IKQuery {
    IKProblem *problem;
    int search;               /* 0: one local solve; 1: a global search */
    int max_iterations;       /* local: its budget; search: the total (< 0: none) */
    int max_restarts;         /* search: random starts (< 0: none) */
    int iterations_per_start; /* search: the cap of each local solve */
    int stall_iterations;     /* <= 0: never stop on a stall */
    int has_deadline;
    double deadline;          /* CLOCK_MONOTONIC seconds */
    double keep;              /* 1 - progress_ratio */
    double max_step;          /* <= 0: no cap */
    int n_starts;             /* starts available: restarts 0 .. n_starts - 1 */
    int starts_offset;        /* the restart of the first row of starts */
    const double *starts;     /* rows of nq configurations: their moved coordinates */
    int resume;               /* 1: go on with a search that asked for more starts */
    double *seed;             /* nq: the seed as given; normalised and clamped here */
    double *out_q;            /* nq: the answer (best iterate, chosen solution or seed) */
    /* outputs, and the state of a search that asked for more starts */
    int success, iterations, restarts, reason;
    double cost, position_error, orientation_error;
    int first, have_best;
    double best_cost;
    /* the collision check of converged configurations (a search only) */
    int check;                        /* 1: every converged configuration is checked */
    struct CapsuleProblem *collision; /* the native check, or NULL: the caller decides */
    const double *toward;             /* (4, n): search._toward_middle's middles and scales,
                                         the sampling ranges' lows and highs */
    double *candidate;                /* nq: the last converged configuration checked */
    int pending;                      /* 1: the candidate waits for the caller's verdict */
    int verdict;                      /* the caller's: 1 when the candidate keeps the margin */
    int collided;                     /* converged configurations rejected in collision */
    int hit;                          /* the last rejected pair in the check, or -1 */
    const int *far;                   /* (pairs, n): 1 where search._away turns the column
                                         after that pair's rejection, or NULL */
    int rejected_stall;               /* after a rejection: the stall limit at most (> 0) */
    const double *flips;              /* (n_flips, FLIP_FIELDS): branches.BranchFlips.table */
    const int *flip_masks;            /* per checked pair: the flips it allows (bit mask) */
    double *flip_base;                /* nq: the rejected configuration the flips start from */
    int n_flips;
    int flip_allowed;                 /* the rejected pair's mask; 0: no flip left to try */
    int flip_combo;                   /* the next combination (bit mask) to try */
    int from_flip;                    /* the last local solve started from a flip */
    /* the seed library (pinkctl/ik/seeds.py): collision-free starts near the target */
    int library_wanted;               /* 1: use it after a rejection (needs the native check) */
    int n_library;                    /* its entries; 0: not built yet (QUERY_LIBRARY) */
    const double *library;            /* (n_library, nq): the configurations */
    const double *library_pose;       /* (n_library, 9): tool position, x axis, z axis */
    int *library_state;               /* per entry: 1 keeps the margin, -1 not, 0 unknown */
    double *library_distance;         /* library_max: the nearest entries' distances */
    int *library_order;               /* library_max: those entries, nearest first */
    double library_weight;            /* [m^2]: the rotation's weight in the distance */
    int library_max;                  /* library starts per query (queued by the first
                                         rejection not from a flip or a library start) */
    int library_count, library_used, library_next, from_library; /* this query's */
    /* the library's buckets (seeds.SeedLibrary.buckets): its entries in runs, each run's keys
     * (position, then sqrt(library_weight / 2) times the x and z axes: the distance below is
     * the squared distance of two keys) within a radius of the run's centre */
    int n_buckets;
    const int *bucket_start;      /* n_buckets + 1: each run's first entry, then n_library */
    const double *bucket_center;  /* (n_buckets, 9): each run's centre */
    const double *bucket_radius;  /* (n_buckets, 2): its radius (pose keys; positions) */
    double *bucket_bound;         /* n_buckets work: each run's lower bound of the distance */
    int *bucket_order;            /* n_buckets work: the runs by that bound, nearest first */
} IKQuery;

enum { FLIP_FIELDS = 10 }; /* branches.FLIP_FIELDS */

/* -4 is the module's (an argument of the wrong form) */
enum {
    QUERY_BAD_TARGET = -1,
    QUERY_BAD_SEED = -2,
    QUERY_MORE_STARTS = -3,
    QUERY_CHECK = -5,
    QUERY_LIBRARY = -6 /* build the seed library, then resume */
};
/* search reasons beyond the local ones (search.py's "iterations", "restarts", "time") */
enum { SEARCH_CONVERGED = 0, SEARCH_ITERATIONS = 1, SEARCH_RESTARTS = 2, SEARCH_TIME = 3 };

unsigned long pk_ik_query_size(void) { return (unsigned long)sizeof(IKQuery); }

/* Where the caller writes the seed (nq values). */
double *pk_ik_query_seed(IKQuery *s, int *nq) {
    *nq = s->problem->nq;
    return s->seed;
}

/* targets._check_rotation and the finite position; the target stored (rotation transposed). */
static int set_target(IKProblem *p, const double *position, const double *r) {
    for (int i = 0; i < 3; ++i)
        if (!isfinite(position[i])) return 0;
    if (p->m == 6) {
        const double a = r[0], b = r[1], c = r[2], d = r[3], e = r[4], f = r[5], g = r[6],
                     h = r[7], i = r[8], tol = 1e-6;
        if (!(fabs(a * a + d * d + g * g - 1.0) <= tol && fabs(b * b + e * e + h * h - 1.0) <= tol &&
              fabs(c * c + f * f + i * i - 1.0) <= tol && fabs(a * b + d * e + g * h) <= tol &&
              fabs(a * c + d * f + g * i) <= tol && fabs(b * c + e * f + h * i) <= tol))
            return 0;
        if (a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0.0) return 0;
        double *rt = (double *)p->target_rt;
        for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 3; ++col) rt[3 * row + col] = r[3 * col + row];
    }
    memcpy((double *)p->target_p, position, 3 * sizeof(double));
    return 1;
}

/* joints.parse_seed of a full configuration: finite, (cos, sin) pairs normalised (every pair
 * of the model is a moved continuous joint where this path applies), clamped. */
static int prepare_seed(const IKProblem *p, double *q) {
    for (int i = 0; i < p->nq; ++i)
        if (!isfinite(q[i])) return 0;
    for (int c = 0; c < p->n; ++c) {
        double *x = q + p->q_cols[c];
        if (p->continuous[c]) {
            const double n2 = x[0] * x[0] + x[1] * x[1];
            if (n2 > 0.0) {
                const double norm = sqrt(n2);
                x[0] /= norm;
                x[1] /= norm;
            }
            continue;
        }
        *x = *x < p->lower[c] ? p->lower[c] : *x;
        *x = *x > p->upper[c] ? p->upper[c] : *x;
    }
    return 1;
}

/* One local solve from start with the given iteration cap; 1 on success. */
static int local(IKQuery *s, const double *start, int cap) {
    IKProblem *p = s->problem;
    memcpy(p->q, start, sizeof(double) * (size_t)p->nq);
    p->max_iterations = cap;
    return pk_ik_local(p);
}

/* residual.errors of the last evaluation (one goal). */
static void errors(IKQuery *s) {
    const double *e = s->problem->e;
    s->position_error = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    s->orientation_error = s->problem->m == 6 ? sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5]) : 0.0;
}

/* The converged candidate is the answer. */
static int converged(IKQuery *s) {
    memcpy(s->out_q, s->candidate, sizeof(double) * (size_t)s->problem->nq);
    s->success = 1;
    s->cost = s->problem->cost;
    s->reason = SEARCH_CONVERGED;
    errors(s);
    return SEARCH_CONVERGED;
}

/* the native check of the converged candidate, the last configuration pk_ik_local
 * evaluated (it returns success right after that evaluation): its placements are reused */
static int free_here(IKQuery *s) {
    return pk_capsule_free_ik(s->collision, s->candidate, s->problem);
}

/* search._toward_middle: every moved coordinate drawn toward the middle of its range */
static void toward_middle(const IKQuery *s, double *q) {
    const IKProblem *p = s->problem;
    const double *middle = s->toward, *scale = s->toward + p->n;
    for (int c = 0; c < p->n; ++c) {
        double *x = q + p->q_cols[c];
        if (p->continuous[c]) {
            const double angle = middle[c] + scale[c] * (atan2(x[1], x[0]) - middle[c]);
            x[0] = cos(angle);
            x[1] = sin(angle);
        } else {
            x[0] = middle[c] + scale[c] * (x[0] - middle[c]);
        }
    }
}

/* branches.BranchFlips.apply: flip k on q in place; 0 when a value leaves the limits */
static int flip(const IKQuery *s, int k, double *q) {
    const IKProblem *p = s->problem;
    const double *row = s->flips + (size_t)FLIP_FIELDS * (size_t)k;
    const double two_pi = 2.0 * 3.141592653589793, pi = 3.141592653589793;
    const int cols[3] = {(int)row[1], (int)row[2], (int)row[3]};
    double v[3];
    for (int i = 0; i < 3; ++i) v[i] = q[p->q_cols[cols[i]]];
    if (row[0] == 1.0) { /* elbow */
        const double sa = row[4], sb = row[5], sc = row[6], l1 = row[7], l2 = row[8];
        const double gamma = sb * v[1] + row[9];
        const double psi = atan2(l2 * sin(gamma), l1 + l2 * cos(gamma));
        v[0] = v[0] + sa * 2.0 * psi;
        v[1] = v[1] - sb * 2.0 * gamma;
        v[2] = v[2] - sc * 2.0 * (psi - gamma);
    } else { /* wrist */
        v[0] = v[0] + pi;
        v[1] = 2.0 * row[4] - v[1];
        v[2] = v[2] + pi;
    }
    for (int i = 0; i < 3; ++i) {
        const double lo = p->lower[cols[i]], hi = p->upper[cols[i]];
        double x = v[i];
        while (x > hi) x -= two_pi;
        while (x < lo) x += two_pi;
        if (x > hi) return 0;
        q[p->q_cols[cols[i]]] = x;
    }
    return 1;
}

/* The next branch flip of the rejected configuration into start (BranchFlips.starts' order,
 * search._Search.run's queue); 0 when none is left */
static int next_flip(IKQuery *s, double *start) {
    while (s->flip_allowed && s->flip_combo < (1 << s->n_flips)) {
        const int combo = s->flip_combo++;
        if (combo & ~s->flip_allowed) continue;
        memcpy(start, s->flip_base, sizeof(double) * (size_t)s->problem->nq);
        int ok = 1;
        for (int k = 0; ok && k < s->n_flips; ++k)
            if (combo >> k & 1) ok = flip(s, k, start);
        if (ok) return 1;
    }
    s->flip_allowed = 0;
    return 0;
}

/* A converged candidate rejected (s->hit: its pair): counted, and unless it came from a
 * flip its flips queued (search._Search._accept) */
static void rejected(IKQuery *s) {
    s->collided += 1;
    if (s->library_wanted && !s->from_flip && !s->from_library) s->library_next = s->library_max;
    if (s->from_flip || s->flips == NULL || s->hit < 0) return;
    s->flip_allowed = s->flip_masks[s->hit];
    s->flip_combo = 1;
    memcpy(s->flip_base, s->candidate, sizeof(double) * (size_t)s->problem->nq);
}

/* search._away: the columns the rejected pair marks, drawn on the half turn away from the
 * rejected configuration (the candidate) by their uniform draw in row */
static void away(const IKQuery *s, const double *row, double *q) {
    const IKProblem *p = s->problem;
    const double two_pi = 6.283185307179586, half_turn = 3.141592653589793;
    const double *low = s->toward + 2 * p->n, *high = s->toward + 3 * p->n;
    const int *mask = s->far + (size_t)s->hit * (size_t)p->n;
    for (int c = 0; c < p->n; ++c) {
        if (!mask[c]) continue;
        const int i = p->q_cols[c];
        const double lo = low[c], hi = high[c];
        double v = s->candidate[i] + half_turn * (0.5 + (row[i] - lo) / (hi - lo));
        while (v > hi) v -= two_pi;
        while (v < lo) v += two_pi;
        q[i] = v;
    }
}

/* The next random start into start (the seed's other coordinates); after a rejection every
 * other one drawn toward the middle and turned away from the rejected pair
 * (search._Search._draw). */
static void next_start(IKQuery *s, double *start) {
    const IKProblem *p = s->problem;
    const int nq = p->nq;
    const double *row = s->starts + (size_t)nq * (size_t)(s->restarts - s->starts_offset);
    s->restarts += 1;
    memcpy(start, s->seed, sizeof(double) * (size_t)nq);
    for (int c = 0; c < p->n; ++c) {
        const int i = p->q_cols[c];
        start[i] = row[i];
        if (p->continuous[c]) start[i + 1] = row[i + 1];
    }
    if (!s->collided || !(s->restarts % 2)) return;
    toward_middle(s, start);
    if (s->hit >= 0 && s->far != NULL) away(s, row, start);
}

/* The lower bound of the distance of every entry of each bucket to the target's key
 * (|key - centre| - radius, squared, made a little smaller against rounding; -1 inside),
 * and the buckets in bucket_order by that bound, nearest first */
static void bucket_bounds(IKQuery *s, const double *key, int rotation) {
    const int nb = s->n_buckets, dims = rotation ? 9 : 3;
    double *bound = s->bucket_bound;
    int *order = s->bucket_order;
    for (int b = 0; b < nb; ++b) {
        const double *c = s->bucket_center + 9 * b;
        double g = 0.0;
        for (int k = 0; k < dims; ++k) g += (key[k] - c[k]) * (key[k] - c[k]);
        const double gap = sqrt(g) - s->bucket_radius[2 * b + !rotation];
        const double lower = gap > 0.0 ? gap * gap * (1.0 - 1e-9) - 1e-12 : -1.0;
        bound[b] = lower;
        int j = b;
        for (; j > 0 && lower < bound[order[j - 1]]; --j) order[j] = order[j - 1];
        order[j] = b;
    }
}

/* seeds.SeedLibrary.order: the library_max entries nearest the target, nearest first (ties:
 * the lower index), by |p - p_target|^2 + library_weight * (2 - x . x_target - z . z_target)
 * (x, z: the tool's axes; library_weight in m^2); the buckets visited nearest first, the
 * rest skipped once no entry of theirs can come before the last one kept */
static void library_order(IKQuery *s) {
    const IKProblem *p = s->problem;
    /* locals: the stores into top and order below may alias s's fields */
    const double tx = p->target_p[0], ty = p->target_p[1], tz = p->target_p[2];
    const double *rt = p->target_rt, w = s->library_weight, *poses = s->library_pose;
    const double x0 = rt[0], x1 = rt[1], x2 = rt[2], z0 = rt[6], z1 = rt[7], z2 = rt[8];
    const int rotation = p->m == 6, max = s->library_max;
    const double a = sqrt(0.5 * w);
    const double key[9] = {tx, ty, tz, a * x0, a * x1, a * x2, a * z0, a * z1, a * z2};
    double *top = s->library_distance, worst = INFINITY;
    int *order = s->library_order, count = 0;
    bucket_bounds(s, key, rotation);
    for (int i = 0; i < s->n_buckets; ++i) {
        const int b = s->bucket_order[i];
        if (count == max && s->bucket_bound[b] >= worst) break; /* and every later bucket */
        for (int e = s->bucket_start[b]; e < s->bucket_start[b + 1]; ++e) {
            const double *pose = poses + 9 * (size_t)e;
            const double dx = pose[0] - tx, dy = pose[1] - ty, dz = pose[2] - tz;
            double d = dx * dx + dy * dy + dz * dz;
            if (rotation) { /* the tool's x and z axes against the target's (rt's rows 0, 2) */
                const double ax = pose[3] * x0 + pose[4] * x1 + pose[5] * x2;
                const double az = pose[6] * z0 + pose[7] * z1 + pose[8] * z2;
                d = d + w * (2.0 - (ax + az));
            }
            if (count == max && (d > worst || (d == worst && e > order[max - 1]))) continue;
            int j = count < max ? count++ : count - 1;
            for (; j > 0 && (d < top[j - 1] || (d == top[j - 1] && e < order[j - 1])); --j) {
                top[j] = top[j - 1];
                order[j] = order[j - 1];
            }
            top[j] = d;
            order[j] = e;
            if (count == max) worst = top[count - 1];
        }
    }
    s->library_count = count;
}

/* The next of those entries that keeps the margin (one not screened in this world is checked
 * now) into start (the seed's other coordinates); 0 when none is left (seeds.LibraryPicks) */
static int next_library(IKQuery *s, double *start) {
    const IKProblem *p = s->problem;
    while (s->library_used < s->library_count) {
        const int e = s->library_order[s->library_used++];
        const double *row = s->library + (size_t)p->nq * (size_t)e;
        if (s->library_state[e] == 0)
            s->library_state[e] = pk_capsule_free(s->collision, row) > 0 ? 1 : -1;
        if (s->library_state[e] < 0) continue;
        memcpy(start, s->seed, sizeof(double) * (size_t)p->nq);
        for (int c = 0; c < p->n; ++c) {
            const int i = p->q_cols[c];
            start[i] = row[i];
            if (p->continuous[c]) start[i + 1] = row[i + 1];
        }
        return 1;
    }
    s->library_next = 0;
    return 0;
}

/* search.global_search's budgets before a start: a SEARCH_* reason to stop, or -1 */
static int spent(const IKQuery *s) {
    if (s->has_deadline && !s->first && pk_ik_now() > s->deadline) return SEARCH_TIME;
    if (s->max_iterations >= 0 && s->iterations >= s->max_iterations) return SEARCH_ITERATIONS;
    if (!s->first && s->max_restarts >= 0 && s->restarts >= s->max_restarts)
        return SEARCH_RESTARTS;
    return -1;
}

/* search.global_search with one solution wanted, no validation and no metric threshold. */
static int search(IKQuery *s, double *start) {
    IKProblem *p = s->problem;
    const int nq = p->nq;
    if (!s->resume) {
        s->best_cost = INFINITY;
        s->have_best = 0;
        s->first = 1;
        s->iterations = 0;
        s->restarts = 0;
        s->collided = 0;
        s->pending = 0;
        s->hit = -1;
        s->flip_allowed = 0;
        s->from_flip = 0;
        s->library_used = -1; /* -1: distances not computed yet */
        s->library_next = 0;
        s->from_library = 0;
    } else if (s->pending) { /* the caller's verdict on the candidate */
        s->pending = 0;
        if (s->verdict) return converged(s);
        rejected(s); /* s->hit: the caller's */
    }
    for (;;) {
        const int stop = spent(s);
        if (stop >= 0) {
            s->reason = stop;
            break;
        }
        s->from_flip = !s->first && next_flip(s, start); /* a flip is no restart */
        s->from_library = 0;
        if (!s->from_flip && s->library_wanted && s->library_next > 0) { /* nor a library one */
            if (s->n_library == 0) return QUERY_LIBRARY;
            if (s->library_used < 0) {
                library_order(s);
                s->library_used = 0;
            }
            s->library_next -= 1;
            s->from_library = next_library(s, start);
        }
        if (!s->first && !s->from_flip && !s->from_library) {
            if (s->restarts >= s->n_starts) return QUERY_MORE_STARTS;
            next_start(s, start);
        }
        int cap = s->iterations_per_start;
        if (s->max_iterations >= 0 && s->max_iterations - s->iterations < cap)
            cap = s->max_iterations - s->iterations;
        p->stall_iterations = s->stall_iterations; /* search._Search._solve's stall */
        if (s->collided && s->max_restarts < 0 && s->stall_iterations > s->rejected_stall)
            p->stall_iterations = s->rejected_stall;
        const int ok = local(s, s->first ? s->seed : start, cap);
        s->first = 0;
        if (p->reason == IK_FALLBACK) return IK_FALLBACK;
        s->iterations += p->iterations;
        if (ok) {
            memcpy(s->candidate, p->best_q, sizeof(double) * (size_t)nq);
            const int free = !s->check ? 1
                             : s->collision != NULL ? free_here(s)
                                                    : -1;
            if (free > 0) return converged(s);
            if (free < 0) {
                s->pending = 1;
                return QUERY_CHECK;
            }
            s->hit = pk_capsule_hit(s->collision);
            rejected(s);
            continue;
        }
        if (p->cost < s->best_cost) {
            s->best_cost = p->cost;
            s->have_best = 1;
            memcpy(s->out_q, p->best_q, sizeof(double) * (size_t)nq);
        }
    }
    if (!s->have_best) memcpy(s->out_q, s->seed, sizeof(double) * (size_t)nq);
    s->cost = s->best_cost;
    return s->reason;
}

/* The query: target (position, row-major rotation or NULL), the seed already in s->seed;
 * with s->resume, a search goes on where it asked for more starts or for a verdict (target
 * and seed as they were). Returns the reason (>= 0: a local solve's IK_* or a search's SEARCH_*; IK_FALLBACK: repeat
 * the query on the Python path) or a QUERY_* code. The problem's budget is restored. */
int pk_ik_query(IKQuery *s, const double *position, const double *rotation) {
    IKProblem *p = s->problem;
    if (!s->resume) {
        if (!set_target(p, position, rotation)) return QUERY_BAD_TARGET;
        if (!prepare_seed(p, s->seed)) return QUERY_BAD_SEED;
    }
    const IKProblem saved = *p;
    p->stall_iterations = s->stall_iterations;
    p->has_deadline = s->has_deadline;
    p->deadline = s->deadline;
    p->keep = s->keep;
    p->max_step = s->max_step;
    s->success = 0;
    s->position_error = s->orientation_error = 0.0;
    int out;
    if (s->search) {
        double start[IK_MAX_COLUMNS * 4 + 64];
        double *buffer = p->nq <= (int)(sizeof start / sizeof *start) ? start : NULL;
        out = buffer != NULL ? search(s, buffer) : IK_FALLBACK;
    } else {
        s->success = local(s, s->seed, s->max_iterations);
        s->iterations = p->iterations;
        s->restarts = 0;
        s->cost = p->cost;
        s->reason = p->reason;
        memcpy(s->out_q, p->best_q, sizeof(double) * (size_t)p->nq);
        if (s->success) errors(s);
        out = p->reason;
    }
    p->max_iterations = saved.max_iterations;
    p->stall_iterations = saved.stall_iterations;
    p->has_deadline = saved.has_deadline;
    p->deadline = saved.deadline;
    p->keep = saved.keep;
    p->max_step = saved.max_step;
    return out;
}
