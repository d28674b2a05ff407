/*
 * The IK problem shared by _ik.c (one local solve) and _ik_query.c (a whole query: target,
 * seed, local solve or global search), mirrored by pinkctl/ik/native.py's _Problem.
 */
#ifndef PINKCTL_IK_H
#define PINKCTL_IK_H

enum { IK_CONVERGED = 0, IK_ITERATIONS = 1, IK_TIME = 2, IK_STALLED = 3, IK_NUMERICAL = 4,
       IK_FALLBACK = 5 };

#define IK_MAX_COLUMNS 64

typedef struct IKProblem {
    int nj;               /* joints of the frame's support chain, root side first */
    int n;                /* moved coordinates (Jacobian columns) */
    int m;                /* residual rows: 3 (position) or 6 (pose) */
    int max_iterations;
    int stall_iterations; /* <= 0: never stop on a stall */
    int has_deadline;
    double deadline;      /* CLOCK_MONOTONIC seconds (Python's time.perf_counter) */
    double keep;          /* 1 - progress_ratio */
    double max_step;      /* <= 0: no cap */
    double damping_scale; /* lambda = damping_scale * cost + damping_floor */
    double damping_floor;
    double weight;        /* orientation weight of the rotational rows */
    double cost_bound;    /* necessary condition of convergence on the weighted cost */
    const int *kind;      /* per chain joint: 0 revolute, 1 prismatic, 2 continuous */
    const int *identity;  /* per chain joint: 1 when its placement's rotation is the identity */
    const int *q_index;   /* per chain joint: its coordinate in q */
    const int *column;    /* per chain joint: its Jacobian column, or -1 when not moved */
    const double *placement; /* per chain joint: rotation (row-major 3x3) and translation */
    const double *axis;   /* per chain joint: unit axis in the joint frame */
    const double *frame;  /* the frame in its parent joint: rotation and translation */
    const int *q_cols;    /* per moved coordinate: its (first) index in q */
    const int *continuous; /* per moved coordinate: 1 for a continuous joint (cos, sin) */
    const double *lower, *upper, *middle, *half_range;
    const double *tolerance; /* per row (m) */
    /* the caller's buffers: the iterate (modified in place), the best iterate, the error of
     * the last evaluation, the target position and transposed target rotation */
    double *q, *best_q, *e;
    const double *target_p, *target_rt;
    int nq;
    /* outputs */
    double cost;
    int iterations;
    int reason;
    /* (nj, 12) work: each chain joint's world placement at the last evaluation (read by
     * the collision check of a converged configuration, _ik_query.c) */
    double *frames;
    long serial; /* > 0, unique to this problem in the process (the check's match_chain) */
} IKProblem;

/* CLOCK_MONOTONIC seconds (Python's time.perf_counter). */
double pk_ik_now(void);

#endif
