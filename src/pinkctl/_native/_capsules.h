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
    /* the narrow phase (pk_capsule_free): each pair's own threshold, and the exact shapes */
    const double *pair_margin;     /* (npairs) threshold of each pair [m] (<= margin) */
    const int *shape;              /* (ngeom) SHAPE_* of _narrow.h (a half-space: unused) */
    const double *shape_param;     /* (ngeom, 3) */
    const double *shape_placement; /* (ngeom, 12) the shape's frame in its joint's frame */
    const int *vert_start;         /* (ngeom) a convex hull's first vertex in vertices */
    const int *vert_count;         /* (ngeom) its vertex count */
    const double *vertices;        /* (all hulls' vertices, 3) */
    double *direction;             /* (npairs, 3) work: closest points of the segments, b to a */
    const int *climb;              /* (ngeom) 1: a hull with its vertex graph */
    const int *adj_start;          /* (all hulls' vertices + 1) each vertex's list in adj */
    const int *adj;                /* neighbours (indices within their hull) */
    int *warm;                     /* (ngeom) work: each hull's last support vertex */
    /* the pairs grouped by their two joints (slots), each group skipped at once when the
     * spheres holding the two slots' geometries are the margin apart */
    int ngroups;
    const int *group_start;   /* (ngroups + 1) each group's pairs in order */
    const int *group_slot;    /* (ngroups, 2) its two slots */
    const int *group_plane;   /* (ngroups) the half-space of its pairs, or -1 */
    const int *order;         /* (npairs) pair positions, group after group */
    const double *slot_sphere; /* (nj + 1, 4) centre in the slot's frame and radius */
    double *slot_centre;      /* (nj + 1, 3) work: the centres in the world frame */
    int hit;                       /* out: the pair (position in pairs) found too close */
    /* the IK's placements at the checked configuration (pk_capsule_free_given): per slot
     * 1 .. nj, the IK chain joint whose placement is computed alike (same joint, parent,
     * placement, axis; a revolute joint without scale or offset), or -1 */
    int *reuse;
    long reuse_for;                /* the IKProblem (its serial) reuse was matched to, or 0 */
    const double *given;           /* (IK chain, 12) the IK's placements, or NULL */
} CapsuleProblem;

/* the world placement of every joint slot (frames) and every geometry's segment ends (ends) */
void pk_capsule_ends(CapsuleProblem *p);
/* distance between segments [p1, q1] and [p2, q2] (closest points, clamped) */
double pk_segment_distance(const double *p1, const double *q1, const double *p2, const double *q2);

/* geometry g as a placed shape of _narrow.h (after pk_capsule_ends) */
struct PkShape;
void pk_capsule_shape(const CapsuleProblem *p, int g, struct PkShape *out);

#endif
