/*
 * The capsule problem shared by the IK's collision broad phase (_collision.c) and the
 * controller's collision check (_collision_tick.c): its layout (filled by
 * pinkctl/ik/capsules.py), the kinematics of its joints and the distance of two segments.
 */
#ifndef PINKCTL_CAPSULES_H
#define PINKCTL_CAPSULES_H

typedef struct CapsuleProblem {
    int nj;      /* joints (slots 1 .. nj) */
    int ngeom;   /* geometries */
    int npairs;  /* pairs */
    double margin;
    const int *parent;        /* (nj) parent slot of each joint slot 1 .. nj */
    const int *kind;          /* (nj) 0 revolute, 1 prismatic, 2 continuous */
    const int *q_index;       /* (nj) */
    const double *scale;      /* (nj) */
    const double *offset;     /* (nj) */
    const double *placement;  /* (nj, 12) */
    const double *axis;       /* (nj, 3) */
    const int *slot;          /* (ngeom) joint slot of each geometry (0: the universe) */
    const double *segment;    /* (ngeom, 6): ends in the joint frame; a plane: normal, offset */
    const double *radius;     /* (ngeom) */
    const double *reach;      /* (ngeom) radius + half the segment's length */
    const int *plane;         /* (ngeom) 1 for a half-space */
    const int *pairs;         /* (npairs, 2) geometry indices */
    const double *q;          /* (nq) the configuration */
    double *frames;           /* (nj + 1, 12) work: world placement of each slot */
    double *ends;             /* (ngeom, 6) work: segment ends in the world frame */
    int *near;                /* (npairs) out: pairs below the margin, nearest first */
    double *bound;            /* (npairs) out: their bounds [m] */
} CapsuleProblem;

/* the world placement of every joint slot (frames) and every geometry's segment ends (ends) */
void pk_capsule_ends(CapsuleProblem *p);
/* distance between segments [p1, q1] and [p2, q2] (closest points, clamped) */
double pk_segment_distance(const double *p1, const double *q1, const double *p2, const double *q2);

#endif
